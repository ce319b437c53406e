package io.podsweeper.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The upstream descheduler's plugin arguments (v0.36), read strictly (unknown arguments are errors, as upstream's
 * strict codec makes them) and validated as upstream validates them. Shared by every format that embeds them.
 */
public final class DeschedulerPlugins {
  public static final String DEFAULT_EVICTOR = "DefaultEvictor";
  /** Deschedule plugins Podsweeper runs. */
  public static final Set<String> DESCHEDULE = Set.of("PodLifeTime", "RemoveFailedPods", "RemovePodsHavingTooManyRestarts");
  /** Upstream plugins that exist but are not implemented here yet: named so the error can say so. */
  public static final Set<String> NOT_YET = Set.of(
      "RemovePodsViolatingInterPodAntiAffinity", "RemovePodsViolatingNodeAffinity", "RemovePodsViolatingNodeTaints",
      "RemoveDuplicates", "LowNodeUtilization", "HighNodeUtilization", "RemovePodsViolatingTopologySpreadConstraint");

  private DeschedulerPlugins() {}

  /** The args of a deschedule plugin; {@code args} may be a missing node (no args given). */
  public static StrategyArgs strategy(String plugin, ConfigNode args, String profile) {
    return switch (plugin) {
      case "PodLifeTime" -> new PodLifeTimeArgs(List.of(podLifeTime(args, profile)));
      case "RemoveFailedPods" -> removeFailedPods(args);
      case "RemovePodsHavingTooManyRestarts" -> tooManyRestarts(args);
      default -> throw args.error("unknown plugin \"" + plugin + "\"");
    };
  }

  static Rule podLifeTime(ConfigNode args, String profile) {
    args.requireObjectOrAbsent(Set.of("maxPodLifeTimeSeconds", "states", "conditions", "exitCodes", "ownerKinds", "namespaces",
        "labelSelector", "includingInitContainers", "includingEphemeralContainers"));
    OptionalLong maxSeconds = args.optionalLong("maxPodLifeTimeSeconds", 0, 100L * 365 * 86_400);
    List<PodState> states = new ArrayList<>();
    for (ConfigNode item : args.list("states")) {
      String name = item.string();
      PodState state = PodState.parse(name)
          .orElseThrow(() -> item.error("states must be one of [" + PodState.allowedNames() + "], got \"" + name + "\""));
      if (!states.contains(state)) {
        states.add(state);
      }
    }
    List<ConditionFilter> conditions = args.mapList("conditions", c -> {
      c.requireObject(Set.of("type", "status", "reason", "minTimeSinceLastTransitionSeconds"));
      ConditionFilter f = new ConditionFilter(c.optionalString("type"), c.optionalString("status"), c.optionalString("reason"),
          longSeconds(c, "minTimeSinceLastTransitionSeconds"));
      if (f.type().isEmpty() && f.status().isEmpty() && f.reason().isEmpty() && f.minTimeSinceLastTransition().isEmpty()) {
        throw c.error("a condition filter needs at least one of type, status, reason, minTimeSinceLastTransitionSeconds");
      }
      return f;
    });
    Set<Integer> exitCodes = exitCodes(args);
    if (maxSeconds.isEmpty() && states.isEmpty() && conditions.isEmpty() && exitCodes.isEmpty()) {
      throw args.error("PodLifeTime needs at least one of maxPodLifeTimeSeconds, states, conditions, exitCodes");
    }
    Set<String> ownerInclude = Set.of();
    Set<String> ownerExclude = Set.of();
    if (args.has("ownerKinds")) {
      ConfigNode owners = args.child("ownerKinds").requireObject(Set.of("include", "exclude"));
      ownerInclude = new LinkedHashSet<>(owners.stringList("include"));
      ownerExclude = new LinkedHashSet<>(owners.stringList("exclude"));
      if (!ownerInclude.isEmpty() && !ownerExclude.isEmpty()) {
        throw owners.error("only one of include/exclude ownerKinds can be set");
      }
    }
    // Upstream truncates the age to whole seconds and wants it strictly greater than the value: N.9 s is not older
    // than N. Strictly older than N+1 s minus a nanosecond says exactly that.
    return new Rule(profile, namespaces(args), LabelSelector.EVERYTHING, Selectors.read(args, "labelSelector"), states,
        maxSeconds.isPresent() ? Optional.of(Duration.ofSeconds(maxSeconds.getAsLong() + 1).minusNanos(1)) : Optional.empty(),
        Optional.empty(),
        conditions, exitCodes, ownerInclude, ownerExclude, args.bool("includingInitContainers", false),
        args.bool("includingEphemeralContainers", false));
  }

  static RemoveFailedPodsArgs removeFailedPods(ConfigNode args) {
    args.requireObjectOrAbsent(Set.of("namespaces", "labelSelector", "excludeOwnerKinds", "minPodLifetimeSeconds", "reasons",
        "exitCodes", "includingInitContainers"));
    OptionalLong minSeconds = args.optionalLong("minPodLifetimeSeconds", 0, 100L * 365 * 86_400);
    return new RemoveFailedPodsArgs(namespaces(args), Selectors.read(args, "labelSelector"),
        new LinkedHashSet<>(args.stringList("excludeOwnerKinds")),
        minSeconds.isPresent() ? Duration.ofSeconds(minSeconds.getAsLong()) : RemoveFailedPodsArgs.DEFAULT_MIN_POD_LIFETIME,
        new LinkedHashSet<>(args.stringList("reasons")), exitCodes(args), args.bool("includingInitContainers", false));
  }

  static TooManyRestartsArgs tooManyRestarts(ConfigNode args) {
    args.requireObjectOrAbsent(Set.of("namespaces", "labelSelector", "podRestartThreshold", "includingInitContainers", "states"));
    OptionalInt threshold = args.optionalInt("podRestartThreshold", Integer.MIN_VALUE, Integer.MAX_VALUE);
    if (threshold.isEmpty() || threshold.getAsInt() < 1) {
      throw args.child("podRestartThreshold").error("invalid PodsHavingTooManyRestarts threshold: must be at least 1");
    }
    Set<String> states = new LinkedHashSet<>();
    for (ConfigNode item : args.list("states")) {
      String s = item.string();
      if (!s.equals("Running") && !s.equals("CrashLoopBackOff")) {
        throw item.error("states must be one of [CrashLoopBackOff Running], got \"" + s + "\"");
      }
      states.add(s);
    }
    return new TooManyRestartsArgs(namespaces(args), Selectors.read(args, "labelSelector"), threshold.getAsInt(),
        args.bool("includingInitContainers", false), states);
  }

  /** DefaultEvictor args, as upstream has them; a missing node gives the defaults. */
  public static EvictorArgs defaultEvictor(ConfigNode args) {
    return defaultEvictor(args, false);
  }

  /**
   * DefaultEvictor args. With {@code podsweeperExtensions}, also {@code evictAllBarePods} (Koordinator's flag: no
   * bare-pod rule at all), which only Podsweeper's own format may carry.
   */
  public static EvictorArgs defaultEvictor(ConfigNode args, boolean podsweeperExtensions) {
    Set<String> known = new java.util.HashSet<>(Set.of("podProtections", "evictLocalStoragePods", "evictDaemonSetPods",
        "evictSystemCriticalPods", "evictFailedBarePods", "ignorePvcPods", "ignorePodsWithoutPDB", "priorityThreshold", "nodeFit",
        "nodeSelector", "labelSelector", "namespaceLabelSelector", "minReplicas", "minPodAge", "noEvictionPolicy"));
    if (podsweeperExtensions) {
      known.add("evictAllBarePods");
    }
    args.requireObjectOrAbsent(known);
    Set<Protection> protections = EnumSet.copyOf(Protection.DEFAULT_ENABLED);
    List<String> storageClasses = new ArrayList<>();
    boolean listsUsed = false;
    if (args.has("podProtections")) {
      ConfigNode pp = args.child("podProtections").requireObject(Set.of("defaultDisabled", "extraEnabled", "config"));
      for (ConfigNode item : pp.list("defaultDisabled")) {
        Protection p = protection(item, Protection.DEFAULT_ENABLED);
        protections.remove(p);
        listsUsed = true;
      }
      for (ConfigNode item : pp.list("extraEnabled")) {
        protections.add(protection(item, Protection.EXTRA));
        listsUsed = true;
      }
      if (pp.has("config")) {
        ConfigNode config = pp.child("config").requireObject(Set.of("PodsWithPVC"));
        if (config.has("PodsWithPVC")) {
          ConfigNode pvc = config.child("PodsWithPVC").requireObject(Set.of("protectedStorageClasses"));
          for (ConfigNode sc : pvc.list("protectedStorageClasses")) {
            sc.requireObject(Set.of("name"));
            storageClasses.add(sc.requiredString("name"));
          }
        }
      }
    }
    String[][] deprecated = {
      {"evictLocalStoragePods", "PodsWithLocalStorage", "off"}, {"evictDaemonSetPods", "DaemonSetPods", "off"},
      {"evictSystemCriticalPods", "SystemCriticalPods", "off"}, {"evictFailedBarePods", "FailedBarePods", "off"},
      {"ignorePvcPods", "PodsWithPVC", "on"}, {"ignorePodsWithoutPDB", "PodsWithoutPDB", "on"}};
    for (String[] flag : deprecated) {
      if (args.bool(flag[0], false)) {
        if (listsUsed) {
          throw args.child(flag[0]).error("cannot be combined with podProtections; use podProtections only");
        }
        Protection p = Protection.valueOf(flag[1]);
        if (flag[2].equals("off")) {
          protections.remove(p);
        } else {
          protections.add(p);
        }
      }
    }
    OptionalInt thresholdValue = OptionalInt.empty();
    Optional<String> thresholdName = Optional.empty();
    if (args.has("priorityThreshold")) {
      ConfigNode pt = args.child("priorityThreshold").requireObject(Set.of("value", "name"));
      thresholdValue = pt.optionalInt("value", Integer.MIN_VALUE, EvictorArgs.SYSTEM_CRITICAL_PRIORITY);
      thresholdName = pt.optionalString("name");
      if (thresholdValue.isPresent() && thresholdName.isPresent()) {
        throw pt.error("only one of priorityThreshold fields can be set");
      }
    }
    LabelSelector nodeSelector = args.has("nodeSelector")
        ? Selectors.parse(args.child("nodeSelector"), args.child("nodeSelector").string()) : LabelSelector.EVERYTHING;
    OptionalInt minReplicas = args.optionalInt("minReplicas", 0, 1_000_000);
    Optional<Duration> minPodAge = args.optionalDuration("minPodAge");
    EvictorArgs.NoEvictionPolicy noEviction = EvictorArgs.NoEvictionPolicy.Unset;
    if (args.has("noEvictionPolicy")) {
      String value = args.child("noEvictionPolicy").string();
      noEviction = switch (value) {
        case "" -> EvictorArgs.NoEvictionPolicy.Unset;
        case "Preferred" -> EvictorArgs.NoEvictionPolicy.Preferred;
        case "Mandatory" -> EvictorArgs.NoEvictionPolicy.Mandatory;
        default -> throw args.child("noEvictionPolicy").error("must be Preferred or Mandatory, got \"" + value + "\"");
      };
    }
    return new EvictorArgs(protections, !args.bool("evictAllBarePods", false), storageClasses, thresholdValue, thresholdName, args.bool("nodeFit", false), nodeSelector,
        Selectors.read(args, "labelSelector"), Selectors.read(args, "namespaceLabelSelector"), minReplicas.orElse(0), minPodAge,
        noEviction);
  }

  private static Protection protection(ConfigNode item, Set<Protection> allowed) {
    String name = item.string();
    return Protection.parse(name).filter(allowed::contains).orElseThrow(() -> item.error("unknown protection \"" + name
        + "\" (one of " + String.join(", ", allowed.stream().map(Enum::name).sorted().toList()) + ")"));
  }

  /** Upstream's {@code namespaces: {include, exclude}}: exact names, only one of the two. */
  static NamespaceFilter namespaces(ConfigNode args) {
    if (!args.has("namespaces")) {
      return NamespaceFilter.ALL;
    }
    ConfigNode ns = args.child("namespaces").requireObject(Set.of("include", "exclude"));
    List<String> include = ns.stringList("include");
    List<String> exclude = ns.stringList("exclude");
    if (!include.isEmpty() && !exclude.isEmpty()) {
      throw ns.error("only one of Include/Exclude namespaces can be set");
    }
    for (String name : java.util.stream.Stream.concat(include.stream(), exclude.stream()).toList()) {
      if (name.contains("*") || name.contains("?")) {
        throw ns.error("namespace \"" + name + "\": upstream namespaces are exact names, not patterns");
      }
    }
    return new NamespaceFilter(include, exclude);
  }

  private static Set<Integer> exitCodes(ConfigNode args) {
    Set<Integer> codes = new LinkedHashSet<>();
    for (ConfigNode item : args.list("exitCodes")) {
      codes.add(item.intValue(Integer.MIN_VALUE, Integer.MAX_VALUE));
    }
    return codes;
  }

  private static Optional<Duration> longSeconds(ConfigNode node, String field) {
    OptionalLong v = node.optionalLong(field, 0, 100L * 365 * 86_400);
    return v.isPresent() ? Optional.of(Duration.ofSeconds(v.getAsLong())) : Optional.empty();
  }
}
