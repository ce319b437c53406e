package io.podsweeper.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Reading {@code descheduler/v1alpha2 DeschedulerPolicy}: validation errors as upstream v0.36 makes them (each with
 * the exact message and the path of the offending place), and the model a valid policy maps to.
 */
class DeschedulerPolicyFormatTest {
  private static final String HEAD = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n";
  private static final String V1ALPHA1 = "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\n";
  private static final String KNOWN_PLUGINS = "DefaultEvictor, HighNodeUtilization, LowNodeUtilization, PodLifeTime, "
      + "RemoveDuplicates, RemoveFailedPods, RemovePodsHavingTooManyRestarts, RemovePodsViolatingInterPodAntiAffinity, "
      + "RemovePodsViolatingNodeAffinity, RemovePodsViolatingNodeTaints, RemovePodsViolatingTopologySpreadConstraint; "
      + "Koordinator's: LowNodeLoad; Podsweeper's: MakeRoom";
  private static final String ALLOWED_STATES = "Completed, ContainerCannotRun, ContainerCreating, CrashLoopBackOff, "
      + "CreateContainerConfigError, CreateContainerError, DeadlineExceeded, ErrImagePull, Error, Evicted, Failed, "
      + "ImagePullBackOff, InvalidImageName, NodeAffinity, NodeLost, OOMKilled, Pending, PodInitializing, Running, Shutdown, "
      + "StartError, Succeeded, UnexpectedAdmissionError, Unknown";

  /** A one-profile policy whose pluginConfig[0] is {@code plugin} with {@code args}, enabled on deschedule. */
  static String plugin(String plugin, String args) {
    return HEAD + """
        profiles:
          - name: p
            pluginConfig:
              - name: %s
                args:
        %s
            plugins:
              deschedule:
                enabled: [%s]
        """.formatted(plugin, args.indent(12).stripTrailing(), plugin);
  }

  /** A one-profile policy whose pluginConfig[0] is the DefaultEvictor with {@code args}, plus an age-only PodLifeTime. */
  static String evictor(String args) {
    return HEAD + """
        profiles:
          - name: p
            pluginConfig:
              - name: DefaultEvictor
                args:
        %s
              - name: PodLifeTime
                args: {maxPodLifeTimeSeconds: 60}
            plugins:
              deschedule:
                enabled: [PodLifeTime]
        """.formatted(args.indent(12).stripTrailing());
  }

  static String error(String yaml) {
    try {
      PolicyLoader.parse(yaml, "policy.yaml");
    } catch (PolicyException e) {
      return e.getMessage();
    }
    throw new AssertionError("expected the policy to be rejected:\n" + yaml);
  }

  static Policy parse(String yaml) {
    return PolicyLoader.parse(yaml, "policy.yaml");
  }

  @Nested
  class PluginArgs {
    static final String ARGS = "profiles[0].pluginConfig[0].args";

    @Test
    void namespacesIncludeAndExclude() {
      assertThat(error(plugin("PodLifeTime", "maxPodLifeTimeSeconds: 1\nnamespaces: {include: [a], exclude: [b]}")))
          .isEqualTo(ARGS + ".namespaces: only one of Include/Exclude namespaces can be set");
      assertThat(error(plugin("RemoveFailedPods", "namespaces: {include: [a], exclude: [b]}")))
          .isEqualTo(ARGS + ".namespaces: only one of Include/Exclude namespaces can be set");
      assertThat(error(plugin("RemovePodsHavingTooManyRestarts", "podRestartThreshold: 1\nnamespaces: {include: [a], exclude: [b]}")))
          .isEqualTo(ARGS + ".namespaces: only one of Include/Exclude namespaces can be set");
    }

    @Test
    void ownerKindsIncludeAndExclude() {
      assertThat(error(plugin("PodLifeTime", "maxPodLifeTimeSeconds: 1\nownerKinds: {include: [Job], exclude: [DaemonSet]}")))
          .isEqualTo(ARGS + ".ownerKinds: only one of include/exclude ownerKinds can be set");
    }

    @Test
    void podLifeTimeWithoutCriteria() {
      String expected = ARGS + ": PodLifeTime needs at least one of maxPodLifeTimeSeconds, states, conditions, exitCodes";
      assertThat(error(plugin("PodLifeTime", "namespaces: {include: [a]}\nincludingInitContainers: true"))).isEqualTo(expected);
      assertThat(error(plugin("PodLifeTime", "{}"))).isEqualTo(expected);
      assertThat(error(plugin("PodLifeTime", "states: []"))).isEqualTo(expected);
    }

    @Test
    void unknownStateListsTheAllowedValuesSorted() {
      assertThat(error(plugin("PodLifeTime", "states: [Running, ContainerStatusUnknown]")))
          .isEqualTo(ARGS + ".states[1]: states must be one of [" + ALLOWED_STATES + "], got \"ContainerStatusUnknown\"");
      assertThat(error(plugin("PodLifeTime", "states: [Terminating]")))
          .isEqualTo(ARGS + ".states[0]: states must be one of [" + ALLOWED_STATES + "], got \"Terminating\"");
    }

    @Test
    void everyAllowedStateIsAccepted() {
      Rule rule = ((PodLifeTimeArgs) parse(plugin("PodLifeTime", "states: [" + ALLOWED_STATES + "]"))
          .profiles().get(0).deschedule().get(0)).rules().get(0);
      assertThat(rule.states()).hasSize(24);
      assertThat(rule.states().stream().map(PodState::wireName).toList())
          .containsExactly(ALLOWED_STATES.split(", "));
    }

    @Test
    void conditionFilterWithoutAnyField() {
      assertThat(error(plugin("PodLifeTime", "conditions: [{type: Ready}, {}]")))
          .isEqualTo(ARGS + ".conditions[1]: a condition filter needs at least one of type, status, reason, "
              + "minTimeSinceLastTransitionSeconds");
    }

    @Test
    void conditionFilterUnknownField() {
      assertThat(error(plugin("PodLifeTime", "conditions: [{type: Ready, lastTransitionTime: 5}]")))
          .isEqualTo(ARGS + ".conditions[0].lastTransitionTime: unknown field (known: minTimeSinceLastTransitionSeconds, reason, "
              + "status, type)");
    }

    @Test
    void podRestartThresholdMustBeAtLeastOne() {
      String expected = ARGS + ".podRestartThreshold: invalid PodsHavingTooManyRestarts threshold: must be at least 1";
      assertThat(error(plugin("RemovePodsHavingTooManyRestarts", "podRestartThreshold: 0"))).isEqualTo(expected);
      assertThat(error(plugin("RemovePodsHavingTooManyRestarts", "podRestartThreshold: -3"))).isEqualTo(expected);
      assertThat(error(plugin("RemovePodsHavingTooManyRestarts", "includingInitContainers: true"))).isEqualTo(expected);
      assertThat(error(plugin("RemovePodsHavingTooManyRestarts", "{}"))).isEqualTo(expected);
    }

    @Test
    void tooManyRestartsStatesOnlyRunningAndCrashLoopBackOff() {
      assertThat(error(plugin("RemovePodsHavingTooManyRestarts", "podRestartThreshold: 1\nstates: [Running, Pending]")))
          .isEqualTo(ARGS + ".states[1]: states must be one of [CrashLoopBackOff Running], got \"Pending\"");
    }

    @Test
    void unknownArgumentIsRejectedStrictly() {
      assertThat(error(plugin("PodLifeTime", "maxPodLifetimeSeconds: 60")))
          .isEqualTo(ARGS + ".maxPodLifetimeSeconds: unknown field (known: conditions, exitCodes, includingEphemeralContainers, "
              + "includingInitContainers, labelSelector, maxPodLifeTimeSeconds, namespaces, ownerKinds, states)");
      assertThat(error(plugin("RemoveFailedPods", "minPodLifeTimeSeconds: 60")))
          .isEqualTo(ARGS + ".minPodLifeTimeSeconds: unknown field (known: excludeOwnerKinds, exitCodes, includingInitContainers, "
              + "labelSelector, minPodLifetimeSeconds, namespaces, reasons)");
      assertThat(error(plugin("RemovePodsHavingTooManyRestarts", "podRestartThreshold: 1\nthreshold: 3")))
          .isEqualTo(ARGS + ".threshold: unknown field (known: includingInitContainers, labelSelector, namespaces, "
              + "podRestartThreshold, states)");
    }

    @Test
    void wrongTypesAreRejected() {
      assertThat(error(plugin("PodLifeTime", "maxPodLifeTimeSeconds: \"60\"")))
          .isEqualTo(ARGS + ".maxPodLifeTimeSeconds: must be a whole number, got \"60\"");
      assertThat(error(plugin("PodLifeTime", "maxPodLifeTimeSeconds: 1.5")))
          .isEqualTo(ARGS + ".maxPodLifeTimeSeconds: must be a whole number, got 1.5");
      assertThat(error(plugin("PodLifeTime", "maxPodLifeTimeSeconds: -1")))
          .isEqualTo(ARGS + ".maxPodLifeTimeSeconds: must be between 0 and 3153600000, got -1");
      assertThat(error(plugin("PodLifeTime", "maxPodLifeTimeSeconds: 1\nincludingInitContainers: \"yes\"")))
          .isEqualTo(ARGS + ".includingInitContainers: must be true or false, got \"yes\"");
      assertThat(error(plugin("PodLifeTime", "states: Running")))
          .isEqualTo(ARGS + ".states: must be a list, got \"Running\"");
      assertThat(error(plugin("RemoveFailedPods", "exitCodes: [one]")))
          .isEqualTo(ARGS + ".exitCodes[0]: must be a whole number, got \"one\"");
      assertThat(error(plugin("RemoveFailedPods", "[1, 2]")))
          .isEqualTo(ARGS + ": must be an object, got a list");
    }

    @Test
    void labelSelectorMustParse() {
      assertThat(error(plugin("PodLifeTime", "maxPodLifeTimeSeconds: 1\nlabelSelector: {matchExpressions: [{key: app, operator: Equals, values: [a]}]}")))
          .isEqualTo(ARGS + ".labelSelector.matchExpressions[0].operator: unknown operator \"Equals\" (one of In, NotIn, Exists, DoesNotExist)");
      assertThat(error(plugin("RemoveFailedPods", "labelSelector: {matchExpressions: [{key: app, operator: In}]}")))
          .isEqualTo(ARGS + ".labelSelector.matchExpressions[0].values: operator In needs at least one value");
      assertThat(error(plugin("RemovePodsHavingTooManyRestarts", "podRestartThreshold: 1\nlabelSelector: {matchLabels: {\"-bad\": x}}")))
          .isEqualTo(ARGS + ".labelSelector.matchLabels.-bad: invalid label key \"-bad\"");
    }

    @Test
    void namespacesAreExactNamesNotPatterns() {
      assertThat(error(plugin("PodLifeTime", "maxPodLifeTimeSeconds: 1\nnamespaces: {include: [\"ci-*\"]}")))
          .isEqualTo(ARGS + ".namespaces: namespace \"ci-*\": upstream namespaces are exact names, not patterns");
    }
  }

  @Nested
  class DefaultEvictorArgs {
    static final String ARGS = "profiles[0].pluginConfig[0].args";

    @Test
    void priorityThresholdValueAndName() {
      assertThat(error(evictor("priorityThreshold: {value: 10, name: high}")))
          .isEqualTo(ARGS + ".priorityThreshold: only one of priorityThreshold fields can be set");
    }

    @Test
    void priorityThresholdValueAboveSystemCritical() {
      assertThat(error(evictor("priorityThreshold: {value: 2000000001}")))
          .isEqualTo(ARGS + ".priorityThreshold.value: must be between -2147483648 and 2000000000, got 2000000001");
      assertThat(parse(evictor("priorityThreshold: {value: 2000000000}")).profiles().get(0).evictor().priorityThreshold())
          .isEqualTo(OptionalInt.of(2_000_000_000));
    }

    @Test
    void noEvictionPolicyValues() {
      assertThat(error(evictor("noEvictionPolicy: Always")))
          .isEqualTo(ARGS + ".noEvictionPolicy: must be Preferred or Mandatory, got \"Always\"");
      assertThat(error(evictor("noEvictionPolicy: mandatory")))
          .isEqualTo(ARGS + ".noEvictionPolicy: must be Preferred or Mandatory, got \"mandatory\"");
      assertThat(parse(evictor("noEvictionPolicy: \"\"")).profiles().get(0).evictor().noEvictionPolicy())
          .isEqualTo(EvictorArgs.NoEvictionPolicy.Unset);
      assertThat(parse(evictor("noEvictionPolicy: Preferred")).profiles().get(0).evictor().noEvictionPolicy())
          .isEqualTo(EvictorArgs.NoEvictionPolicy.Preferred);
    }

    @Test
    void deprecatedBooleanMixedWithPodProtections() {
      assertThat(error(evictor("evictLocalStoragePods: true\npodProtections: {extraEnabled: [PodsWithPVC]}")))
          .isEqualTo(ARGS + ".evictLocalStoragePods: cannot be combined with podProtections; use podProtections only");
      assertThat(error(evictor("ignorePodsWithoutPDB: true\npodProtections: {defaultDisabled: [DaemonSetPods]}")))
          .isEqualTo(ARGS + ".ignorePodsWithoutPDB: cannot be combined with podProtections; use podProtections only");
      // a false deprecated flag is not "set"
      assertThat(parse(evictor("evictDaemonSetPods: false\npodProtections: {defaultDisabled: [DaemonSetPods]}"))
          .profiles().get(0).evictor().protections())
          .containsExactlyInAnyOrder(Protection.PodsWithLocalStorage, Protection.SystemCriticalPods, Protection.FailedBarePods);
    }

    @Test
    void deprecatedBooleansAloneMapToProtections() {
      String args = """
          evictLocalStoragePods: true
          evictDaemonSetPods: true
          evictSystemCriticalPods: true
          evictFailedBarePods: true
          ignorePvcPods: true
          ignorePodsWithoutPDB: true
          """;
      assertThat(parse(evictor(args)).profiles().get(0).evictor().protections())
          .containsExactlyInAnyOrder(Protection.PodsWithPVC, Protection.PodsWithoutPDB);
    }

    @Test
    void unknownProtectionName() {
      assertThat(error(evictor("podProtections: {defaultDisabled: [PodsWithPVC]}")))
          .isEqualTo(ARGS + ".podProtections.defaultDisabled[0]: unknown protection \"PodsWithPVC\" "
              + "(one of DaemonSetPods, FailedBarePods, PodsWithLocalStorage, SystemCriticalPods)");
      assertThat(error(evictor("podProtections: {extraEnabled: [PodsWithPvc]}")))
          .isEqualTo(ARGS + ".podProtections.extraEnabled[0]: unknown protection \"PodsWithPvc\" "
              + "(one of PodsWithPVC, PodsWithResourceClaims, PodsWithoutPDB)");
    }

    /** Upstream's validation refuses a protection listed twice in either list. */
    @Test
    void duplicateProtectionName() {
      assertThat(error(evictor("podProtections: {defaultDisabled: [DaemonSetPods, FailedBarePods, DaemonSetPods]}")))
          .isEqualTo(ARGS + ".podProtections.defaultDisabled[2]: duplicate protection \"DaemonSetPods\" in defaultDisabled");
      assertThat(error(evictor("podProtections: {extraEnabled: [PodsWithPVC, PodsWithPVC]}")))
          .isEqualTo(ARGS + ".podProtections.extraEnabled[1]: duplicate protection \"PodsWithPVC\" in extraEnabled");
    }

    @Test
    void unknownEvictorArgument() {
      assertThat(error(evictor("evictSystemCriticalPod: true")))
          .isEqualTo(ARGS + ".evictSystemCriticalPod: unknown field (known: evictDaemonSetPods, evictFailedBarePods, "
              + "evictLocalStoragePods, evictSystemCriticalPods, ignorePodsWithoutPDB, ignorePvcPods, labelSelector, minPodAge, "
              + "minReplicas, namespaceLabelSelector, noEvictionPolicy, nodeFit, nodeSelector, podProtections, priorityThreshold)");
    }

    /** Every upstream args type inlines TypeMeta: apiVersion and kind are legal in args, and a kind names the args type. */
    @Test
    void argsMayCarryTheirApiVersionAndKind() {
      Map<String, String> minimal = Map.ofEntries(Map.entry("PodLifeTime", "maxPodLifeTimeSeconds: 60"), Map.entry("RemoveFailedPods", ""),
          Map.entry("RemovePodsHavingTooManyRestarts", "podRestartThreshold: 3"), Map.entry(NodeTaintsArgs.NAME, ""),
          Map.entry(NodeAffinityArgs.NAME, "nodeAffinityType: [" + NodeAffinityArgs.REQUIRED + "]"),
          Map.entry(InterPodAntiAffinityArgs.NAME, ""), Map.entry(RemoveDuplicatesArgs.NAME, ""), Map.entry(TopologySpreadArgs.NAME, ""),
          Map.entry(NodeUtilizationArgs.LOW, "thresholds: {cpu: 10}, targetThresholds: {cpu: 50}"),
          Map.entry(NodeUtilizationArgs.HIGH, "thresholds: {cpu: 10}"),
          Map.entry(LowNodeLoadArgs.NAME, "lowThresholds: {cpu: 10}, highThresholds: {cpu: 50}"), Map.entry(MakeRoomArgs.NAME, ""));
      assertThat(minimal.keySet()).containsAll(DeschedulerPlugins.DESCHEDULE).containsAll(DeschedulerPlugins.BALANCE);
      minimal.forEach((plugin, args) -> {
        ConfigNode typed = args("{apiVersion: descheduler/v1alpha2, kind: " + plugin + "Args" + (args.isEmpty() ? "" : ", ") + args + "}");
        assertThat(DeschedulerPlugins.strategy(plugin, typed, "p", Optional.empty())).as(plugin)
            .isEqualTo(DeschedulerPlugins.strategy(plugin, args("{" + args + "}"), "p", Optional.empty()));
        PolicyException wrong = org.junit.jupiter.api.Assertions.assertThrows(PolicyException.class,
            () -> DeschedulerPlugins.strategy(plugin, args("{kind: DefaultEvictorArgs}"), "p", Optional.empty()));
        assertThat(wrong).as(plugin).hasMessage("a.kind: must be " + plugin + "Args (the kind of " + plugin + "'s args), got"
            + " \"DefaultEvictorArgs\"");
      });
      assertThat(parse(evictor("apiVersion: descheduler/v1alpha2\nkind: DefaultEvictorArgs\nevictLocalStoragePods: true"))
          .profiles().get(0).evictor().protections()).doesNotContain(Protection.PodsWithLocalStorage);
      assertThat(error(evictor("kind: PodLifeTimeArgs")))
          .isEqualTo(ARGS + ".kind: must be DefaultEvictorArgs (the kind of DefaultEvictor's args), got \"PodLifeTimeArgs\"");
      assertThat(error(evictor("apiVersion: 2"))).isEqualTo(ARGS + ".apiVersion: must be a string, got 2");
    }

    private static ConfigNode args(String yaml) {
      return new ConfigNode(YamlDocuments.read(yaml, "args", 1 << 20).get(0), "a");
    }

    @Test
    void badMinPodAge() {
      for (String bad : List.of("5 minutes", "-5m", "1h 30m", "")) {
        assertThat(error(evictor("minPodAge: \"" + bad + "\""))).isEqualTo(ARGS + ".minPodAge: invalid duration \"" + bad
            + "\" (a Go duration that is not negative, such as 0s, 90s, 1.5h or 1h30m; units ns, us, ms, s, m, h)");
      }
    }

    /** Upstream's minPodAge is a metav1.Duration: whatever Go's time.ParseDuration reads, zero and fractions too. */
    @Test
    void minPodAgeIsAGoDuration() {
      for (Map.Entry<String, Duration> good : Map.of("0s", Duration.ZERO, "0", Duration.ZERO, "1.5h", Duration.ofMinutes(90),
          "1h30m", Duration.ofMinutes(90), "250ms", Duration.ofMillis(250), "1.5us", Duration.ofNanos(1500),
          // Not Go's, but read before Go's syntax was: a file that loaded then still does.
          "7d", Duration.ofDays(7)).entrySet()) {
        assertThat(parse(evictor("minPodAge: \"" + good.getKey() + "\"")).profiles().get(0).evictor().minPodAge())
            .as(good.getKey()).contains(good.getValue());
      }
    }

    @Test
    void badEvictorNodeSelector() {
      assertThat(error(evictor("nodeSelector: \"pool in (a,b\"")))
          .isEqualTo(ARGS + ".nodeSelector: invalid label key \"pool in (a,b\"");
    }
  }

  @Nested
  class PluginsAndProfiles {
    @Test
    void unknownPluginInPluginConfig() {
      assertThat(error(plugin("PodLifetime", "maxPodLifeTimeSeconds: 1")))
          .isEqualTo("profiles[0].pluginConfig[0].name: unknown plugin \"PodLifetime\" (known: " + KNOWN_PLUGINS + ")");
    }

    @Test
    void unknownPluginEnabled() {
      String yaml = HEAD + """
          profiles:
            - name: p
              plugins:
                deschedule: {enabled: [RemoveEverything]}
          """;
      assertThat(error(yaml))
          .isEqualTo("profiles[0].plugins.deschedule.enabled[0]: unknown plugin \"RemoveEverything\" (known: " + KNOWN_PLUGINS + ")");
    }

    @Test
    void enabledPluginWithoutPluginConfig() {
      String yaml = HEAD + """
          profiles:
            - name: p
              pluginConfig:
                - {name: PodLifeTime, args: {maxPodLifeTimeSeconds: 60}}
              plugins:
                deschedule: {enabled: [PodLifeTime, RemoveFailedPods]}
          """;
      assertThat(error(yaml)).isEqualTo("profiles[0].plugins.deschedule.enabled[1]: plugin \"RemoveFailedPods\" has no "
          + "pluginConfig entry (upstream requires one, args may be empty)");
    }

    @Test
    void pluginConfigWithoutArgsIsFine() {
      String yaml = HEAD + """
          profiles:
            - name: p
              pluginConfig:
                - name: RemoveFailedPods
              plugins:
                deschedule: {enabled: [RemoveFailedPods]}
          """;
      assertThat(parse(yaml).profiles().get(0).deschedule()).containsExactly(new RemoveFailedPodsArgs(NamespaceFilter.ALL,
          LabelSelector.EVERYTHING, Set.of(), Duration.ofSeconds(3600), Set.of(), Set.of(), false));
    }

    @Test
    void interPodAntiAffinityInEveryUpstreamFormat() {
      InterPodAntiAffinityArgs expected = new InterPodAntiAffinityArgs(new NamespaceFilter(List.of(), List.of("kube-system")),
          new LabelSelector(Map.of("app", "web"), List.of()));
      String args = "namespaces: {exclude: [kube-system]}\nlabelSelector: {matchLabels: {app: web}}";
      assertThat(parse(plugin("RemovePodsViolatingInterPodAntiAffinity", args)).profiles().get(0).deschedule())
          .containsExactly(expected);
      assertThat(parse(plugin("RemovePodsViolatingInterPodAntiAffinity", "{}")).profiles().get(0).deschedule())
          .containsExactly(new InterPodAntiAffinityArgs(NamespaceFilter.ALL, LabelSelector.EVERYTHING));
      Profile v1alpha1 = parse(V1ALPHA1 + """
          strategies:
            RemovePodsViolatingInterPodAntiAffinity:
              enabled: true
              params: {namespaces: {exclude: [kube-system]}, labelSelector: {matchLabels: {app: web}}, nodeFit: true}
          """).profiles().get(0);
      assertThat(v1alpha1.name()).isEqualTo("strategy-RemovePodsViolatingInterPodAntiAffinity-profile");
      assertThat(v1alpha1.deschedule()).containsExactly(expected);
      assertThat(v1alpha1.evictor().nodeFit()).isTrue();
      Profile koordinator = parse("""
          apiVersion: descheduler/v1alpha2
          kind: DeschedulerConfiguration
          profiles:
            - name: k
              plugins:
                deschedule: {enabled: [{name: RemovePodsViolatingInterPodAntiAffinity}]}
              pluginConfig:
                - name: RemovePodsViolatingInterPodAntiAffinity
                  args: {namespaces: {exclude: [kube-system]}, labelSelector: {matchLabels: {app: web}}}
          """).profiles().get(0);
      assertThat(koordinator.deschedule()).containsExactly(expected);
      assertThat(error(plugin("RemovePodsViolatingInterPodAntiAffinity", "{topologyKey: zone}")))
          .startsWith("profiles[0].pluginConfig[0].args");
    }

    @Test
    void deschedulePluginUnderBalance() {
      String yaml = HEAD + """
          profiles:
            - name: p
              pluginConfig: [{name: RemoveFailedPods}]
              plugins:
                balance: {enabled: [RemoveFailedPods]}
          """;
      assertThat(error(yaml))
          .isEqualTo("profiles[0].plugins.balance.enabled[0]: RemoveFailedPods is a deschedule plugin, not a balance plugin");
    }

    @Test
    void onlyDefaultEvictorFilters() {
      String yaml = HEAD + """
          profiles:
            - name: p
              pluginConfig: [{name: RemoveFailedPods}]
              plugins:
                filter: {enabled: [RemoveFailedPods]}
          """;
      assertThat(error(yaml)).isEqualTo("profiles[0].plugins.filter.enabled[0]: unknown plugin \"RemoveFailedPods\" (known: "
          + KNOWN_PLUGINS + "); only DefaultEvictor filters");
    }

    @Test
    void duplicateProfileNames() {
      String yaml = HEAD + """
          profiles:
            - name: same
              pluginConfig: [{name: RemoveFailedPods}]
              plugins: {deschedule: {enabled: [RemoveFailedPods]}}
            - name: same
              pluginConfig: [{name: RemoveFailedPods}]
              plugins: {deschedule: {enabled: [RemoveFailedPods]}}
          """;
      assertThat(error(yaml)).isEqualTo("profiles[1].name: duplicate profile name \"same\"");
    }

    @Test
    void duplicatePluginConfig() {
      String yaml = HEAD + """
          profiles:
            - name: p
              pluginConfig: [{name: RemoveFailedPods}, {name: RemoveFailedPods, args: {}}]
              plugins: {deschedule: {enabled: [RemoveFailedPods]}}
          """;
      assertThat(error(yaml)).isEqualTo("profiles[0].pluginConfig[1].name: duplicate pluginConfig for \"RemoveFailedPods\"");
    }

    @Test
    void profileNeedsAName() {
      String yaml = HEAD + """
          profiles:
            - pluginConfig: [{name: RemoveFailedPods}]
              plugins: {deschedule: {enabled: [RemoveFailedPods]}}
          """;
      assertThat(error(yaml)).isEqualTo("profiles[0].name: is required");
    }

    @Test
    void atLeastOneProfile() {
      assertThat(error(HEAD + "profiles: []\n")).isEqualTo("profiles: at least one profile is required");
    }
  }

  @Nested
  class TopLevel {
    @Test
    void badNodeSelectorString() {
      assertThat(error(HEAD + "nodeSelector: \"a=b,,c\"\nprofiles: []\n"))
          .isEqualTo("nodeSelector: invalid selector \"a=b,,c\": empty requirement");
      assertThat(error(HEAD + "nodeSelector: \"kubernetes.io/os=lin ux\"\nprofiles: []\n"))
          .isEqualTo("nodeSelector: invalid label value \"lin ux\"");
      assertThat(error(HEAD + "nodeSelector: {pool: batch}\nprofiles: []\n"))
          .isEqualTo("nodeSelector: must be a string, got an object");
    }

    @Test
    void unknownTopLevelField() {
      assertThat(error(HEAD + "maxNoOfPodsToEvictPerNodes: 5\nprofiles: []\n"))
          .isEqualTo("maxNoOfPodsToEvictPerNodes: unknown field (known: apiVersion, evictionFailureEventNotification, "
              + "gracePeriodSeconds, kind, maxNoOfPodsToEvictPerNamespace, maxNoOfPodsToEvictPerNode, maxNoOfPodsToEvictTotal, "
              + "metricsCollector, metricsProviders, nodeSelector, profiles)");
    }

    /** Upstream's MetricsCollector has only {@code enabled}: anything else in it is a typo, refused like any other. */
    @Test
    void metricsCollectorFieldsAreChecked() {
      String profiles = "profiles: [{name: p, pluginConfig: [{name: RemoveDuplicates}], plugins: {balance: {enabled: [RemoveDuplicates]}}}]\n";
      assertThat(parse(HEAD + "metricsCollector: {enabled: true}\n" + profiles).profiles()).hasSize(1);
      assertThat(error(HEAD + "metricsCollector: {enable: true}\n" + profiles))
          .isEqualTo("metricsCollector.enable: unknown field (known: enabled)");
      assertThat(error(HEAD + "metricsCollector: {enabled: \"true\"}\n" + profiles))
          .isEqualTo("metricsCollector.enabled: must be true or false, got \"true\"");
      assertThat(error(HEAD + "metricsCollector: true\n" + profiles)).isEqualTo("metricsCollector: must be an object, got true");
    }

    @Test
    void limitsMustBeNonNegativeWholeNumbers() {
      assertThat(error(HEAD + "maxNoOfPodsToEvictTotal: -1\nprofiles: []\n"))
          .isEqualTo("maxNoOfPodsToEvictTotal: must be between 0 and 2147483647, got -1");
      assertThat(error(HEAD + "maxNoOfPodsToEvictPerNode: \"5\"\nprofiles: []\n"))
          .isEqualTo("maxNoOfPodsToEvictPerNode: must be a whole number, got \"5\"");
    }

    /** v1alpha1 (removed upstream in v0.31) is converted as upstream did: one profile per enabled strategy. */
    @Test
    void v1alpha1BecomesOneProfilePerEnabledStrategy() {
      Policy p = PolicyLoader.parse(V1ALPHA1 + """
          evictLocalStoragePods: true
          strategies:
            PodLifeTime:
              enabled: true
              params:
                podLifeTime: {maxPodLifeTimeSeconds: 60, podStatusPhases: [Pending]}
                nodeFit: true
            RemoveFailedPods:
              enabled: true
              params: {failedPods: {reasons: [Error]}, thresholdPriority: 100, nodeFit: true}
            RemoveDuplicates:
              enabled: false
          """, "policy.yaml");
      assertThat(p.profiles()).extracting(Profile::name)
          .containsExactly("strategy-PodLifeTime-profile", "strategy-RemoveFailedPods-profile");
      Rule rule = ((PodLifeTimeArgs) p.profiles().get(0).deschedule().get(0)).rules().get(0);
      assertThat(rule.states()).containsExactly(PodState.PENDING);
      assertThat(p.profiles().get(0).evictor().nodeFit()).as("never nodeFit for PodLifeTime").isFalse();
      assertThat(p.profiles().get(0).evictor().protections()).doesNotContain(Protection.PodsWithLocalStorage);
      assertThat(p.profiles().get(1).evictor().nodeFit()).isTrue();
      assertThat(p.profiles().get(1).evictor().priorityThreshold()).hasValue(100);
      assertThat(error(V1ALPHA1 + """
          strategies:
            PodLifeTime:
              enabled: true
              params: {podLifeTime: {maxPodLifeTimeSeconds: 60}, thresholdPriority: 1, thresholdPriorityClassName: x}
          """)).contains("only one of thresholdPriority and thresholdPriorityClassName can be set");
    }

    /** Every v0.30 strategy, its params mapped to the plugin args as upstream's strategy migration did. */
    @Test
    void v1alpha1NodeAwareStrategiesMapToTheirPluginArgs() {
      Policy p = PolicyLoader.parse(V1ALPHA1 + """
          strategies:
            RemovePodsViolatingNodeTaints:
              enabled: true
              params: {includePreferNoSchedule: true, excludedTaints: [dedicated=gpu], labelSelector: {matchLabels: {app: web}}}
            RemovePodsViolatingNodeAffinity:
              enabled: true
              params: {nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution], namespaces: {include: [web]}}
            RemoveDuplicates:
              enabled: true
              params: {removeDuplicates: {excludeOwnerKinds: [Job]}, namespaces: {exclude: [kube-system]}}
            LowNodeUtilization:
              enabled: true
              params:
                nodeResourceUtilizationThresholds:
                  thresholds: {cpu: 20, memory: 20}
                  targetThresholds: {cpu: 70, memory: 70}
                  numberOfNodes: 1
                namespaces: {exclude: [kube-system]}
            HighNodeUtilization:
              enabled: true
              params: {nodeResourceUtilizationThresholds: {thresholds: {cpu: 35}}}
          """, "policy.yaml");
      Map<String, Profile> byName = p.profiles().stream().collect(java.util.stream.Collectors.toMap(Profile::name, x -> x));
      NodeTaintsArgs taints = (NodeTaintsArgs) byName.get("strategy-RemovePodsViolatingNodeTaints-profile").deschedule().get(0);
      assertThat(taints.includePreferNoSchedule()).isTrue();
      assertThat(taints.excludedTaints()).containsExactly("dedicated=gpu");
      assertThat(taints.labelSelector()).isEqualTo(new LabelSelector(Map.of("app", "web"), List.of()));
      NodeAffinityArgs affinity = (NodeAffinityArgs) byName.get("strategy-RemovePodsViolatingNodeAffinity-profile").deschedule().get(0);
      assertThat(affinity.nodeAffinityType()).containsExactly("requiredDuringSchedulingIgnoredDuringExecution");
      assertThat(affinity.namespaces()).isEqualTo(new NamespaceFilter(List.of("web"), List.of()));
      Profile duplicates = byName.get("strategy-RemoveDuplicates-profile");
      assertThat(duplicates.deschedule()).isEmpty();
      assertThat(duplicates.balance()).containsExactly(new RemoveDuplicatesArgs(new NamespaceFilter(List.of(), List.of("kube-system")),
          Set.of("Job")));
      NodeUtilizationArgs low = (NodeUtilizationArgs) byName.get("strategy-LowNodeUtilization-profile").balance().get(0);
      assertThat(low.targetThresholds()).containsEntry("cpu", 70.0);
      assertThat(low.numberOfNodes()).isEqualTo(1);
      assertThat(low.excludedNamespaces()).containsExactly("kube-system");
      NodeUtilizationArgs high = (NodeUtilizationArgs) byName.get("strategy-HighNodeUtilization-profile").balance().get(0);
      assertThat(high.high()).isTrue();
      assertThat(high.thresholds()).containsExactly(Map.entry("cpu", 35.0));
    }

    /** The audit's cases: a wrong type in a field is an error naming it, where it was written, not an internal failure. */
    @Test
    void v1alpha1WrongTypesAreErrorsAtTheirOwnPath() {
      assertThat(error(V1ALPHA1 + """
          strategies:
            PodLifeTime:
              enabled: true
              params: {podLifeTime: {maxPodLifeTimeSeconds: 86400, podStatusPhases: Pending}}
          """)).isEqualTo("strategies.PodLifeTime.params.podLifeTime.podStatusPhases: must be a list, got \"Pending\"");
      assertThat(error(V1ALPHA1 + """
          strategies:
            PodLifeTime:
              enabled: true
              params: {podLifeTime: {podStatusPhases: [Pending], states: Running}}
          """)).isEqualTo("strategies.PodLifeTime.params.podLifeTime.states: must be a list, got \"Running\"");
      assertThat(error(V1ALPHA1 + """
          strategies:
            PodLifeTime:
              enabled: true
              params: {podLifeTime: {podStatusPhases: [Pending, Waiting]}}
          """)).startsWith("strategies.PodLifeTime.params.podLifeTime.podStatusPhases[1]: states must be one of [");
      assertThat(error(V1ALPHA1 + """
          strategies:
            PodLifeTime:
              enabled: true
              params: {podLifeTime: {maxPodLifeTimeSeconds: 1h}}
          """)).isEqualTo("strategies.PodLifeTime.params.podLifeTime.maxPodLifeTimeSeconds: must be a whole number, got \"1h\"");
      assertThat(error(V1ALPHA1 + """
          strategies:
            RemovePodsViolatingInterPodAntiAffinity:
              enabled: true
              params: {thresholdPriority: high}
          """)).isEqualTo("strategies.RemovePodsViolatingInterPodAntiAffinity.params.thresholdPriority: must be a whole number,"
              + " got \"high\"");
      assertThat(error(V1ALPHA1 + """
          strategies:
            RemovePodsViolatingTopologySpreadConstraint:
              enabled: true
              params: {includeSoftConstraints: "yes"}
          """)).isEqualTo("strategies.RemovePodsViolatingTopologySpreadConstraint.params.includeSoftConstraints: must be true or false,"
              + " got \"yes\"");
    }

    @Test
    void v1alpha1PodStatusPhasesAreStates() {
      Rule rule = ((PodLifeTimeArgs) parse(V1ALPHA1 + """
          strategies:
            PodLifeTime:
              enabled: true
              params: {podLifeTime: {maxPodLifeTimeSeconds: 60, podStatusPhases: [Pending], states: [Running]}}
          """).profiles().get(0).deschedule().get(0)).rules().get(0);
      assertThat(rule.states()).containsExactlyInAnyOrder(PodState.parse("Pending").orElseThrow(), PodState.parse("Running").orElseThrow());
    }

    /** As upstream v0.30's conversion: HighNodeUtilizationArgs has no targetThresholds, so it was decoded and dropped. */
    @Test
    void v1alpha1HighNodeUtilizationIgnoresTargetThresholds() {
      Policy p = parse(V1ALPHA1 + """
          strategies:
            HighNodeUtilization:
              enabled: true
              params: {nodeResourceUtilizationThresholds: {thresholds: {cpu: 20, memory: 20},
                targetThresholds: {cpu: 50, memory: 50}, useDeviationThresholds: true}}
          """);
      NodeUtilizationArgs high = (NodeUtilizationArgs) p.profiles().get(0).balance().get(0);
      assertThat(high.high()).isTrue();
      assertThat(high.thresholds()).isEqualTo(Map.of("cpu", 20.0, "memory", 20.0));
      assertThat(high.targetThresholds()).isEmpty();
      assertThat(high.useDeviationThresholds()).isFalse();
      assertThat(error(V1ALPHA1 + """
          strategies:
            HighNodeUtilization:
              enabled: true
              params: {nodeResourceUtilizationThresholds: {thresholds: {cpu: 20}, targetThresholds: 50}}
          """)).isEqualTo("strategies.HighNodeUtilization.params.nodeResourceUtilizationThresholds.targetThresholds: must be an object,"
              + " got 50");
    }

    @Test
    void v1alpha1ParamsAStrategyDoesNotTakeAreErrors() {
      assertThat(error(V1ALPHA1 + """
          strategies:
            PodLifeTime:
              enabled: true
              params: {podLifeTime: {maxPodLifeTimeSeconds: 60}, includeSoftConstraints: true}
          """)).startsWith("strategies.PodLifeTime.params.includeSoftConstraints: unknown field");
      assertThat(error(V1ALPHA1 + """
          strategies:
            LowNodeUtilization:
              enabled: true
              params:
                nodeResourceUtilizationThresholds: {thresholds: {cpu: 20}, targetThresholds: {cpu: 70}}
                namespaces: {include: [web]}
          """)).contains("only Exclude namespaces can be set");
    }
  }

  @Nested
  class ValidPolicy {
    static final String FULL = HEAD + """
        nodeSelector: "node-role.kubernetes.io/worker,pool notin (system)"
        maxNoOfPodsToEvictPerNode: 5
        maxNoOfPodsToEvictPerNamespace: 3
        maxNoOfPodsToEvictTotal: 10
        evictionFailureEventNotification: true
        gracePeriodSeconds: 30
        profiles:
          - name: cleanup
            pluginConfig:
              - name: DefaultEvictor
                args:
                  podProtections:
                    defaultDisabled: [PodsWithLocalStorage, FailedBarePods]
                    extraEnabled: [PodsWithPVC]
                    config:
                      PodsWithPVC:
                        protectedStorageClasses: [{name: fast}, {name: local-nvme}]
                  priorityThreshold: {value: 10000}
                  nodeFit: true
                  nodeSelector: "pool=general"
                  labelSelector: {matchLabels: {evictable: "true"}}
                  namespaceLabelSelector:
                    matchExpressions: [{key: env, operator: NotIn, values: [prod]}]
                  minReplicas: 2
                  minPodAge: 5m
                  noEvictionPolicy: Mandatory
              - name: PodLifeTime
                args:
                  maxPodLifeTimeSeconds: 86400
                  states: [Running, CrashLoopBackOff, Running]
                  conditions:
                    - {type: Ready, status: "False", minTimeSinceLastTransitionSeconds: 600}
                  exitCodes: [137]
                  ownerKinds: {exclude: [Job]}
                  namespaces: {exclude: [kube-system]}
                  labelSelector: {matchLabels: {app: web}}
                  includingInitContainers: true
              - name: RemoveFailedPods
                args:
                  reasons: [OOMKilled]
                  excludeOwnerKinds: [Job]
                  exitCodes: [1]
              - name: RemovePodsHavingTooManyRestarts
                args:
                  podRestartThreshold: 10
                  states: [CrashLoopBackOff]
                  includingInitContainers: true
                  namespaces: {include: [apps]}
            plugins:
              filter: {enabled: [DefaultEvictor]}
              preevictionfilter: {enabled: [DefaultEvictor]}
              deschedule:
                enabled: [PodLifeTime, RemoveFailedPods, RemovePodsHavingTooManyRestarts]
          - name: defaults
            pluginConfig:
              - name: RemoveFailedPods
                args: {minPodLifetimeSeconds: 0}
            plugins:
              deschedule: {enabled: [RemoveFailedPods]}
        """;

    @Test
    void topLevelLimitsAndGracePeriod() {
      Policy policy = parse(FULL);
      assertThat(policy.source()).isEqualTo("policy.yaml");
      assertThat(policy.dryRun()).isFalse();
      assertThat(policy.limits()).isEqualTo(new Limits(OptionalInt.of(5), OptionalInt.of(3), OptionalInt.of(10), 10.0));
      assertThat(policy.gracePeriodSeconds()).isEqualTo(OptionalLong.of(30));
      assertThat(policy.profiles()).extracting(Profile::name).containsExactly("cleanup", "defaults");
    }

    @Test
    void topLevelNodeSelectorGoesToEveryProfile() {
      LabelSelector expected = new LabelSelector(Map.of(), List.of(
          new LabelSelector.Requirement("node-role.kubernetes.io/worker", LabelSelector.Operator.Exists, Set.of()),
          new LabelSelector.Requirement("pool", LabelSelector.Operator.NotIn, Set.of("system"))));
      for (Profile profile : parse(FULL).profiles()) {
        assertThat(profile.readyNodesOnly()).isTrue();
        assertThat(profile.nodeSelector()).contains(expected);
      }
    }

    @Test
    void evictorArgs() {
      EvictorArgs expected = new EvictorArgs(
          Set.of(Protection.DaemonSetPods, Protection.SystemCriticalPods, Protection.PodsWithPVC), true, List.of("fast", "local-nvme"),
          OptionalInt.of(10_000), Optional.empty(), true, new LabelSelector(Map.of("pool", "general"), List.of()),
          new LabelSelector(Map.of("evictable", "true"), List.of()),
          new LabelSelector(Map.of(), List.of(new LabelSelector.Requirement("env", LabelSelector.Operator.NotIn, Set.of("prod")))),
          2, Optional.of(Duration.ofMinutes(5)), EvictorArgs.NoEvictionPolicy.Mandatory);
      assertThat(parse(FULL).profiles().get(0).evictor()).isEqualTo(expected);
    }

    @Test
    void profileWithoutDefaultEvictorConfigGetsUpstreamDefaults() {
      assertThat(parse(FULL).profiles().get(1).evictor()).isEqualTo(EvictorArgs.UPSTREAM_DEFAULT);
    }

    @Test
    void strategiesInListedOrderWithTheirArgs() {
      List<StrategyArgs> strategies = parse(FULL).profiles().get(0).deschedule();
      assertThat(strategies).extracting(StrategyArgs::strategyName)
          .containsExactly("PodLifeTime", "RemoveFailedPods", "RemovePodsHavingTooManyRestarts");
      Rule rule = new Rule("cleanup", new NamespaceFilter(List.of(), List.of("kube-system")), LabelSelector.EVERYTHING,
          new LabelSelector(Map.of("app", "web"), List.of()), List.of(PodState.RUNNING, PodState.CRASH_LOOP_BACK_OFF),
          // whole-second semantics: strictly older than 86400 s when counted in whole seconds
          Optional.of(Duration.ofSeconds(86_401).minusNanos(1)), Optional.empty(),
          List.of(new ConditionFilter(Optional.of("Ready"), Optional.of("False"), Optional.empty(),
              Optional.of(Duration.ofSeconds(600)))),
          Set.of(137), Set.of(), Set.of("Job"), true, false, Optional.empty(), Set.of());
      assertThat(strategies.get(0)).isEqualTo(new PodLifeTimeArgs(List.of(rule)));
      assertThat(strategies.get(1)).isEqualTo(new RemoveFailedPodsArgs(NamespaceFilter.ALL, LabelSelector.EVERYTHING,
          Set.of("Job"), Duration.ofSeconds(3600), Set.of("OOMKilled"), Set.of(1), false));
      assertThat(strategies.get(2)).isEqualTo(new TooManyRestartsArgs(new NamespaceFilter(List.of("apps"), List.of()),
          LabelSelector.EVERYTHING, 10, true, Set.of("CrashLoopBackOff")));
    }

    @Test
    void removeFailedPodsMinPodLifetimeDefaultsTo3600Seconds() {
      assertThat(((RemoveFailedPodsArgs) parse(FULL).profiles().get(0).deschedule().get(1)).minPodLifetime())
          .isEqualTo(Duration.ofSeconds(3600));
      assertThat(((RemoveFailedPodsArgs) parse(FULL).profiles().get(1).deschedule().get(0)).minPodLifetime())
          .isEqualTo(Duration.ZERO);
    }

    @Test
    void noLimitsMeansUnlimited() {
      Policy policy = parse(plugin("RemoveFailedPods", "{}"));
      assertThat(policy.limits()).isEqualTo(Limits.DEFAULTS);
      assertThat(policy.gracePeriodSeconds()).isEmpty();
      assertThat(policy.profiles().get(0).nodeSelector()).isEmpty();
    }
  }
}
