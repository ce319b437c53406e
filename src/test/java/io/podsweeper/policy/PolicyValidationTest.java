package io.podsweeper.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad policies are rejected with a message that names the place; good ones read into the model. */
class PolicyValidationTest {
  private static final String HEAD = "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n";

  static Stream<Arguments> invalid() {
    return Stream.of(
        // It is also the window the limits count in: a pass a millisecond would make every limit one per millisecond.
        Arguments.of(HEAD + "limits: {burst: 1001}\nrules: [{name: a, states: [Failed]}]\n", "limits.burst: must be between 1 and 1000"),
        Arguments.of(HEAD + "fullPassInterval: 500ms\nrules: [{name: a, states: [Failed]}]\n",
            "fullPassInterval: must be at least 1s: it is also the window the limits count in, got 500ms"),
        Arguments.of("apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\ndeschedulingInterval: 1ms\n"
                + "profiles: [{name: k, plugins: {deschedule: {enabled: [{name: PodLifeTime}]}},"
                + " pluginConfig: [{name: PodLifeTime, args: {maxPodLifeTimeSeconds: 60}}]}]\n",
            "deschedulingInterval: must be at least 1s: it is also the window the limits count in, got 1ms"),
        Arguments.of(HEAD + "rules:\n- {name: a, states: [Failed]}\n- {name: b, states: [Failed]}\n- {name: c, states: [Crashloop]}\n",
            "rules[2].states[0]: unknown state \"Crashloop\""),
        Arguments.of(HEAD + "bogus: 1\nrules: [{name: a, states: [Failed]}]\n", "bogus: unknown field"),
        Arguments.of(HEAD + "warnBefore: 31d\nrules: [{name: a, states: [Failed]}]\n", "warnBefore: must be at most 30d, got 31d"),
        Arguments.of(HEAD + "warnBefore: 0s\nrules: [{name: a, states: [Failed]}]\n", "warnBefore: invalid duration \"0s\""),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], maxage: 1h}]\n", "rules[0].maxage: unknown field"),
        Arguments.of(HEAD + "rules: [{name: a, maxAge: 1x}]\n", "rules[0].maxAge: invalid duration \"1x\""),
        Arguments.of(HEAD + "rules: [{name: a, maxAge: -5m}]\n", "rules[0].maxAge: invalid duration \"-5m\""),
        Arguments.of(HEAD + "rules: [{name: a, maxAge: 0s}]\n", "rules[0].maxAge: invalid duration \"0s\""),
        Arguments.of(HEAD + "rules: [{name: a, maxAge: 3600}]\n", "rules[0].maxAge: must be a string, got 3600"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed, Failed]}]\n", "rules[0].states[1]: duplicate state \"Failed\""),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed]}, {name: a, states: [Failed]}]\n", "rules[1].name: duplicate rule name \"a\""),
        Arguments.of(HEAD + "rules: [{name: Bad_Name, states: [Failed]}]\n", "rules[0].name: invalid rule name \"Bad_Name\""),
        Arguments.of(HEAD + "rules: [{states: [Failed]}]\n", "rules[0].name: is required"),
        Arguments.of(HEAD + "rules: [{name: a}]\n", "rules[0]: a rule needs maxAge, maxAgeAfterFinish, states or ttlFrom"),
        Arguments.of(HEAD + "rules: [{name: a, maxAgeAfterFinish: 1h}]\n", "rules[0].maxAgeAfterFinish: can match nothing"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed, Running], maxAgeAfterFinish: 1h}]\n",
            "rules[0].states[1]: \"Running\" is not a finished state"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], namespaces: {}}]\n", "rules[0].namespaces: give include and/or exclude"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Running], keepLast: 3}]\n", "rules[0].keepLast: applies to finished pods only"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], keepLast: -1}]\n", "rules[0].keepLast: must be between 0 and"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], keepLast: 3, keepPer: node}]\n", "rules[0].keepPer: must be owner or namespace"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], keepPer: owner}]\n", "rules[0].keepPer: goes with keepLast"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Running], evict: [BarePods, SystemCritical]}]\n",
            "rules[0].evict[1]: unknown protection \"SystemCritical\" (one of BarePods, DaemonSetPods, SchedulingGatedPods,"
                + " SystemCriticalPods; mirror and static pods are never evicted)"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], endedBy: [Preempted]}]\n",
            "rules[0].endedBy[0]: unknown ending \"Preempted\" (one of PreemptionByScheduler, DeletionByTaintManager,"
                + " EvictionByEvictionAPI, DeletionByPodGC, TerminationByKubelet, KubeletEviction, NodeShutdown)"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], endedBy: [NodeShutdown, NodeShutdown]}]\n",
            "rules[0].endedBy[1]: duplicate ending \"NodeShutdown\""),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], endedBy: []}]\n", "rules[0].endedBy: name at least one of"),
        Arguments.of(HEAD + "rules: [{name: a, maxAge: 1h, endedBy: [KubeletEviction]}]\n",
            "rules[0].endedBy: can match nothing: only a finished pod has ended"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Running, Pending], endedBy: [PreemptionByScheduler]}]\n",
            "rules[0].endedBy: can match nothing: only a finished pod has ended"),
        Arguments.of(HEAD + "rules: [{name: a, states: [CrashLoopBackOff], includingInitContainers: 1}]\n",
            "rules[0].includingInitContainers: must be true or false"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Running], evict: [MirrorPods]}]\n",
            "rules[0].evict[0]: unknown protection \"MirrorPods\""),
        Arguments.of(HEAD + "rules: [{name: a, states: [Running], evict: [BarePods, BarePods]}]\n",
            "rules[0].evict[1]: duplicate protection \"BarePods\""),
        Arguments.of(HEAD + "rules: [{name: a, states: [Running], evict: BarePods}]\n", "rules[0].evict: must be a list"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], namespaces: {exclude: [\"*\"]}}]\n",
            "rules[0].namespaces.exclude: can match nothing"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], namespaces: {include: [ci-a], exclude: [\"ci-*\"]}}]\n",
            "rules[0].namespaces.include[0]: \"ci-a\" can match nothing: it is excluded as well"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], namespaces: {include: [\"CI_*\"]}}]\n",
            "rules[0].namespaces.include[0]: invalid namespace pattern \"CI_*\""),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], podSelector: {matchExpressions: [{key: a, operator: Has}]}}]\n",
            "rules[0].podSelector.matchExpressions[0].operator: unknown operator \"Has\""),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], podSelector: {matchExpressions: [{key: a, operator: In}]}}]\n",
            "rules[0].podSelector.matchExpressions[0].values: operator In needs at least one value"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], podSelector: {matchExpressions: [{key: a, operator: Exists, values: [x]}]}}]\n",
            "rules[0].podSelector.matchExpressions[0].values: operator Exists takes no values"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], podSelector: {matchLabels: {\"bad key!\": x}}}]\n",
            "invalid label key \"bad key!\""),
        Arguments.of(HEAD + "rules: [{name: a, states: Failed}]\n", "rules[0].states: must be a list, got \"Failed\""),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed], namespaces: [ci]}]\n", "rules[0].namespaces: must be an object, got a list"),
        Arguments.of(HEAD + "limits: {maxTotal: -1}\nrules: [{name: a, states: [Failed]}]\n", "limits.maxTotal: must be between 0 and"),
        Arguments.of(HEAD + "limits: {maxTotal: 1.5}\nrules: [{name: a, states: [Failed]}]\n", "limits.maxTotal: must be a whole number, got 1.5"),
        Arguments.of(HEAD + "limits: {maxTotal: 99999999999999999999}\nrules: [{name: a, states: [Failed]}]\n", "limits.maxTotal: must be"),
        Arguments.of(HEAD + "limits: {perSecond: 0}\nrules: [{name: a, states: [Failed]}]\n", "limits.perSecond: must be between 0.01 and 1000.0, got 0"),
        Arguments.of(HEAD + "limits: {perSecond: 1e-320}\nrules: [{name: a, states: [Failed]}]\n", "limits.perSecond: must be between 0.01 and 1000.0"),
        Arguments.of(HEAD + "limits: {perSecond: 5000}\nrules: [{name: a, states: [Failed]}]\n", "limits.perSecond: must be between 0.01 and 1000.0, got 5000"),
        Arguments.of("apiVersion: podsweeper.io/v9\nkind: PodSweeperPolicy\nrules: []\n", "unsupported policy apiVersion \"podsweeper.io/v9\""),
        Arguments.of("{{{ not yaml", "not valid YAML or JSON"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed]}]\n---\n" + HEAD, "exactly one document, found 2"),
        Arguments.of(HEAD + "rules: []\n", "rules: at least one rule (or profile) is required"),
        Arguments.of("- just\n- a list\n", "a policy must be a YAML mapping"),
        Arguments.of(HEAD + "dryRun: \"yes\"\nrules: [{name: a, states: [Failed]}]\n", "dryRun: must be true or false, got \"yes\""),
        // Aliases are refused outright: no bomb, and no silently misread reference.
        Arguments.of(billionLaughs(), "not valid YAML or JSON: YAML aliases are not supported (*a)"),
        Arguments.of(HEAD + "rules: [{name: a, states: [Failed]}]\nrules: [{name: b, states: [Failed]}]\n", "not valid YAML or JSON"),
        // The finished-pod budget: the phases are an explicit opt-in, and nothing is guessed.
        Arguments.of(HEAD + "finishedPodBudget: {maxPods: 100}\n", "finishedPodBudget.phases: name the finished phases the budget"
            + " counts and may remove (Succeeded, Failed): it removes none by default"),
        Arguments.of(HEAD + "finishedPodBudget: {maxPods: 100, phases: []}\n", "finishedPodBudget.phases: name the finished phases"),
        Arguments.of(HEAD + "finishedPodBudget: {maxPods: 100, phases: [Failed, Evicted]}\n",
            "finishedPodBudget.phases[1]: \"Evicted\" is not a finished phase (Succeeded or Failed)"),
        Arguments.of(HEAD + "finishedPodBudget: {maxPods: 100, phases: [Failed, Failed]}\n",
            "finishedPodBudget.phases[1]: duplicate phase \"Failed\""),
        Arguments.of(HEAD + "finishedPodBudget: {phases: [Failed]}\n", "finishedPodBudget.maxPods: is required"),
        Arguments.of(HEAD + "finishedPodBudget: {maxPods: -1, phases: [Failed]}\n",
            "finishedPodBudget.maxPods: must be between 0 and 10000000, got -1"),
        Arguments.of(HEAD + "finishedPodBudget: {maxPods: 1.5, phases: [Failed]}\n", "finishedPodBudget.maxPods: must be a whole number"),
        Arguments.of(HEAD + "finishedPodBudget: {maxPods: 5000, maxPodsPerNamespace: 5000, phases: [Failed]}\n",
            "finishedPodBudget.maxPodsPerNamespace: 5000 is not below maxPods 5000"),
        Arguments.of(HEAD + "finishedPodBudget: {maxPods: 100, minRetention: 0s, phases: [Failed]}\n",
            "finishedPodBudget.minRetention: invalid duration \"0s\""),
        Arguments.of(HEAD + "finishedPodBudget: {maxpods: 100, phases: [Failed]}\n", "finishedPodBudget.maxpods: unknown field"),
        Arguments.of(HEAD + "finishedPodBudget: 5000\n", "finishedPodBudget: must be an object, got 5000"));
  }

  private static String billionLaughs() {
    StringBuilder b = new StringBuilder("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for (char c = 'b'; c <= 'j'; c++) {
      char p = (char) (c - 1);
      b.append(c).append(": &").append(c).append(" [*").append(p).append(",*").append(p).append(",*").append(p).append(",*")
          .append(p).append(",*").append(p).append(",*").append(p).append(",*").append(p).append(",*").append(p).append("]\n");
    }
    return b.toString();
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("invalid")
  void rejectsWithThePlaceNamed(String yaml, String message) {
    assertThatThrownBy(() -> PolicyLoader.parse(yaml, "policy.yaml"))
        .isInstanceOf(PolicyException.class)
        .hasMessageContaining(message);
  }

  @Test
  void readsAFullPolicy() {
    Policy p = PolicyLoader.parse(HEAD + """
        dryRun: true
        fullPassInterval: 2m
        gracePeriodSeconds: 30
        warnBefore: 15m
        limits: {maxPerNode: 1, maxPerNamespace: 2, maxTotal: 3, perSecond: 0.5}
        rules:
          - name: ci
            namespaces: {include: ["ci-*"], exclude: [ci-prod]}
            namespaceSelector: {matchLabels: {team: ci}}
            podSelector: {matchExpressions: [{key: keep, operator: DoesNotExist}]}
            states: [Failed, Evicted]
            maxAge: 1h30m
            maxAgeAfterFinish: 7d
          - name: stuck
            states: [CrashLoopBackOff]
            evict: [BarePods]
        """, "p.yaml");
    assertThat(p.dryRun()).isTrue();
    assertThat(p.fullPassInterval()).isEqualTo(Duration.ofMinutes(2));
    assertThat(p.gracePeriodSeconds()).hasValue(30);
    assertThat(p.warnBefore()).isEqualTo(Duration.ofMinutes(15));
    assertThat(p.limits().maxPerNode()).hasValue(1);
    assertThat(p.limits().maxPerNamespace()).hasValue(2);
    assertThat(p.limits().maxTotal()).hasValue(3);
    assertThat(p.limits().perSecond()).isEqualTo(0.5);
    Rule r = ((PodLifeTimeArgs) p.profiles().get(0).deschedule().get(0)).rules().get(0);
    assertThat(r.name()).isEqualTo("ci");
    assertThat(r.namespaces()).isEqualTo(new NamespaceFilter(java.util.List.of("ci-*"), java.util.List.of("ci-prod")));
    assertThat(r.namespaceSelector().matchLabels()).containsEntry("team", "ci");
    assertThat(r.podSelector().matchExpressions()).hasSize(1);
    assertThat(r.states()).containsExactly(PodState.FAILED, PodState.EVICTED);
    assertThat(r.maxAge()).hasValue(Duration.ofMinutes(90));
    assertThat(r.maxAgeAfterFinish()).hasValue(Duration.ofDays(7));
    assertThat(r.protections()).as("every protection by default").containsExactlyInAnyOrder(RuleProtection.values());
    Rule optIn = ((PodLifeTimeArgs) p.profiles().get(0).deschedule().get(0)).rules().get(1);
    assertThat(optIn.protections()).containsExactlyInAnyOrder(RuleProtection.SystemCriticalPods, RuleProtection.DaemonSetPods,
        RuleProtection.SchedulingGatedPods);
    assertThat(p.profiles().get(0).readyNodesOnly()).isFalse();
    assertThat(p.profiles().get(0).evictor()).isEqualTo(EvictorArgs.NONE);
  }

  @Test
  void readsAFinishedPodBudgetWhichIsAPolicyOnItsOwn() {
    Policy p = PolicyLoader.parse(HEAD + "finishedPodBudget: {maxPods: 5000, maxPodsPerNamespace: 1000, minRetention: 30m,"
        + " phases: [Succeeded, Failed]}\n", "p.yaml");
    assertThat(p.profiles()).isEmpty();
    assertThat(p.finishedPodBudgets()).containsExactly(new FinishedPodBudget(FinishedPodBudget.CLUSTER, java.util.Optional.empty(), 5000,
        java.util.OptionalInt.of(1000), Duration.ofMinutes(30), java.util.Set.of(PodState.SUCCEEDED, PodState.FAILED)));
    FinishedPodBudget defaults = PolicyLoader.parse(HEAD + "finishedPodBudget: {maxPods: 0, phases: [Failed]}\n", "p.yaml")
        .finishedPodBudgets().get(0);
    assertThat(defaults.minRetention()).isEqualTo(Duration.ofMinutes(10));
    assertThat(defaults.maxPodsPerNamespace()).isEmpty();
    assertThat(defaults.rule()).isEqualTo("finishedPodBudget");
    // Other formats have none; dry-run keeps it.
    assertThat(p.withDryRun(true).finishedPodBudgets()).isEqualTo(p.finishedPodBudgets());
    assertThat(PolicyLoader.parse("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: [{name: p, pluginConfig:"
        + " [{name: PodLifeTime, args: {maxPodLifeTimeSeconds: 60}}], plugins: {deschedule: {enabled: [PodLifeTime]}}}]\n", "p")
        .finishedPodBudgets()).isEmpty();
  }

  @Test
  void durations() {
    assertThat(Durations.parse("90s")).hasValue(Duration.ofSeconds(90));
    assertThat(Durations.parse("1h30m")).hasValue(Duration.ofMinutes(90));
    assertThat(Durations.parse("7d")).hasValue(Duration.ofDays(7));
    assertThat(Durations.parse("250ms")).hasValue(Duration.ofMillis(250));
    for (String bad : new String[] {"", "1", "h", "-1s", "0s", "1h-", "1h 2m", "99999999999999999999d", "40000d"}) {
      assertThat(Durations.parse(bad)).as(bad).isEmpty();
    }
    assertThat(Durations.format(Duration.ofMinutes(133))).isEqualTo("2h13m");
    assertThat(Durations.format(Duration.ofSeconds(45))).isEqualTo("45s");
    assertThat(Durations.format(Duration.ofHours(38))).isEqualTo("1d14h");
    assertThat(Durations.format(Duration.ZERO)).isEqualTo("0s");
  }

  /** docs/configuration.md's top-level table names every field the native format accepts, and the limits it enforces. */
  @Test
  void configurationDocMatchesTheReader() throws java.io.IOException {
    String doc = java.nio.file.Files.readString(java.nio.file.Path.of("docs/configuration.md"));
    String table = doc.substring(doc.indexOf("| `apiVersion`, `kind` |"));
    table = table.substring(0, table.indexOf("\n\n"));
    String unknown = org.junit.jupiter.api.Assertions.assertThrows(PolicyException.class,
        () -> PolicyLoader.parse(HEAD + "bogus: 1\n", "policy.yaml")).getMessage();
    for (String field : unknown.substring(unknown.indexOf("(known: ") + 8, unknown.lastIndexOf(')')).split(", ")) {
      assertThat(table).as(field).containsAnyOf("| `" + field + "`", "| `" + field + ".", "`, `" + field + "` |");
    }
    String perSecond = "| `limits.perSecond` | number " + plain(Limits.MIN_PER_SECOND) + "–" + plain(Limits.MAX_PER_SECOND) + " |";
    assertThat(table).contains(perSecond);
    assertThat(PolicyLoader.parse(HEAD + "limits: {perSecond: " + Limits.MAX_PER_SECOND + "}\nrules: [{name: a, states: [Failed]}]\n",
        "p").limits().perSecond()).isEqualTo(Limits.MAX_PER_SECOND);
    assertThatThrownBy(() -> PolicyLoader.parse(HEAD + "limits: {perSecond: " + (Limits.MAX_PER_SECOND + 1) + "}\nrules: []\n", "p"))
        .hasMessageStartingWith("limits.perSecond: must be between");
  }

  private static String plain(double value) {
    return java.math.BigDecimal.valueOf(value).stripTrailingZeros().toPlainString();
  }
}
