package io.podsweeper.policy;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The upstream descheduler's removed {@code descheduler/v1alpha1 DeschedulerPolicy} (a {@code strategies} map with
 * top-level evictor flags), converted as upstream converted it until v0.30: one profile per enabled strategy,
 * named {@code strategy-<Name>-profile}, with a DefaultEvictor built from the top-level flags and the strategy's
 * own nodeFit and priority threshold (nodeFit is never applied to PodLifeTime). Strategies read: PodLifeTime,
 * RemoveFailedPods, RemovePodsHavingTooManyRestarts and RemovePodsViolatingTopologySpreadConstraint (a balance plugin).
 */
final class DeschedulerV1alpha1Format {
  static final String API_VERSION = "descheduler/v1alpha1";
  static final String KIND = "DeschedulerPolicy";

  /**
   * How a v1alpha1 strategy's {@code params} became its plugin's args in upstream's strategy migration (v0.30): the
   * fields of its own params block ({@code block}, "" for none) plus some params-level fields under their plugin
   * arg names ({@code fields}: params name → arg name). Any other params field is an error here, where upstream
   * ignored it silently.
   */
  private record Mapping(String block, Map<String, String> fields) {
    static final Map<String, String> FILTERS = Map.of("namespaces", "namespaces", "labelSelector", "labelSelector");
  }

  private static final Map<String, Mapping> STRATEGIES = Map.ofEntries(
      Map.entry("PodLifeTime", new Mapping("podLifeTime", Mapping.FILTERS)),
      Map.entry("RemoveFailedPods", new Mapping("failedPods", Mapping.FILTERS)),
      Map.entry("RemovePodsHavingTooManyRestarts", new Mapping("podsHavingTooManyRestarts", Mapping.FILTERS)),
      Map.entry(InterPodAntiAffinityArgs.NAME, new Mapping("", Mapping.FILTERS)),
      Map.entry(NodeAffinityArgs.NAME, new Mapping("", Map.of("namespaces", "namespaces", "labelSelector", "labelSelector",
          "nodeAffinityType", "nodeAffinityType"))),
      Map.entry(NodeTaintsArgs.NAME, new Mapping("", Map.of("namespaces", "namespaces", "labelSelector", "labelSelector",
          "includePreferNoSchedule", "includePreferNoSchedule", "excludedTaints", "excludedTaints", "includedTaints", "includedTaints"))),
      Map.entry(TopologySpreadArgs.NAME, new Mapping("", Map.of("namespaces", "namespaces", "labelSelector", "labelSelector",
          "includeSoftConstraints", "includeSoftConstraints"))),
      Map.entry(RemoveDuplicatesArgs.NAME, new Mapping("removeDuplicates", Map.of("namespaces", "namespaces"))),
      Map.entry(NodeUtilizationArgs.LOW, new Mapping("nodeResourceUtilizationThresholds", Map.of("namespaces", "evictableNamespaces"))),
      Map.entry(NodeUtilizationArgs.HIGH, new Mapping("nodeResourceUtilizationThresholds", Map.of("namespaces", "evictableNamespaces"))));
  /** Params every strategy takes: they configure its evictor, not the plugin. */
  private static final Set<String> EVICTOR_PARAMS = Set.of("thresholdPriority", "thresholdPriorityClassName", "nodeFit");
  private static final Set<String> EVICTOR_FLAGS =
      Set.of("evictFailedBarePods", "evictLocalStoragePods", "evictSystemCriticalPods", "evictDaemonSetPods", "ignorePvcPods");

  private DeschedulerV1alpha1Format() {}

  static Policy read(ConfigNode root, String source) {
    root.requireObject(Set.of("apiVersion", "kind", "strategies", "nodeSelector", "evictFailedBarePods", "evictLocalStoragePods",
        "evictSystemCriticalPods", "evictDaemonSetPods", "ignorePvcPods", "maxNoOfPodsToEvictPerNode",
        "maxNoOfPodsToEvictPerNamespace", "maxNoOfPodsToEvictTotal"));
    Optional<LabelSelector> nodeSelector = root.has("nodeSelector")
        ? Optional.of(Selectors.parse(root.child("nodeSelector"), root.child("nodeSelector").string())) : Optional.empty();
    if (!root.has("strategies")) {
      throw root.child("strategies").error("is required");
    }
    ConfigNode strategies = root.child("strategies");
    List<Profile> profiles = new ArrayList<>();
    for (String name : strategies.fieldNames()) {
      ConfigNode strategy = strategies.child(name).requireObject(Set.of("enabled", "weight", "params"));
      if (!strategy.bool("enabled", false)) {
        continue;
      }
      if (!STRATEGIES.containsKey(name)) {
        throw strategies.child(name).error(DeschedulerPolicyFormat.unknownPlugin(name));
      }
      profiles.add(profile(root, name, strategy.child("params"), nodeSelector));
    }
    if (profiles.isEmpty()) {
      throw strategies.error("no strategy is enabled");
    }
    return new Policy(source, false, DeschedulerPolicyFormat.limits(root, Limits.DEFAULT_PER_SECOND),
        Policy.DEFAULT_FULL_PASS_INTERVAL, java.util.OptionalLong.empty(), Guard.DEFAULTS, profiles);
  }

  /**
   * A params block's fields into {@code args}, each keeping the path it was written at ({@code paths}, arg name →
   * path). PodLifeTime's deprecated {@code podStatusPhases} is merged into states, and HighNodeUtilization's
   * {@code targetThresholds} and {@code useDeviationThresholds} are dropped, both as upstream's conversion did.
   */
  private static void block(String strategy, ConfigNode own, ObjectNode args, Map<String, String> paths) {
    ObjectNode fields = own.objectCopy();
    fields.fieldNames().forEachRemaining(field -> paths.put(field, own.child(field).path()));
    if (fields.has("podStatusPhases")) {
      ArrayNode states = JsonNodeFactory.instance.arrayNode();
      own.list("states").forEach(item -> states.add(item.raw()));
      for (ConfigNode phase : own.list("podStatusPhases")) {
        DeschedulerPlugins.podLifeTimeState(phase);
        states.add(phase.raw());
      }
      if (!own.has("states")) {
        paths.put("states", own.child("podStatusPhases").path());
      }
      fields.set("states", states);
      fields.remove("podStatusPhases");
    }
    if (strategy.equals(NodeUtilizationArgs.HIGH)) {
      // Upstream's HighNodeUtilizationArgs has neither: its conversion decoded them and left them out.
      own.child("targetThresholds").objectCopy();
      own.bool("useDeviationThresholds", false);
      fields.remove(List.of("targetThresholds", "useDeviationThresholds"));
    }
    args.setAll(fields);
  }

  private static Profile profile(ConfigNode root, String name, ConfigNode params, Optional<LabelSelector> nodeSelector) {
    Mapping mapping = STRATEGIES.get(name);
    Set<String> allowed = new HashSet<>(EVICTOR_PARAMS);
    allowed.addAll(mapping.fields().keySet());
    if (!mapping.block().isEmpty()) {
      allowed.add(mapping.block());
    }
    params.requireObjectOrAbsent(allowed);
    ObjectNode args = JsonNodeFactory.instance.objectNode();
    Map<String, String> paths = new HashMap<>();
    if (!mapping.block().isEmpty()) {
      block(name, params.child(mapping.block()), args, paths);
    }
    mapping.fields().forEach((param, arg) -> {
      if (params.has(param)) {
        args.set(arg, params.child(param).raw());
        paths.put(arg, params.child(param).path());
      }
    });
    if (args.has("includeSoftConstraints")) {
      // As upstream converted it: soft constraints are balanced as well as hard ones.
      boolean soft = params.bool("includeSoftConstraints", false);
      args.remove("includeSoftConstraints");
      if (soft) {
        args.putArray("constraints").add(TopologySpreadArgs.HARD).add(TopologySpreadArgs.SOFT);
        paths.put("constraints", params.child("includeSoftConstraints").path());
      }
    }
    StrategyArgs strategy = DeschedulerPlugins.strategy(name, ConfigNode.assembled(args, params.path(), paths),
        "strategy-" + name + "-profile", Optional.empty());

    ObjectNode evictor = JsonNodeFactory.instance.objectNode();
    for (String flag : EVICTOR_FLAGS) {
      if (root.has(flag)) {
        evictor.set(flag.equals("evictDaemonSetPods") ? "evictDaemonSetPods" : flag, root.child(flag).raw());
      }
    }
    // Read here, so that a wrong value is reported where it was written, not in the evictor built from it.
    params.optionalInt("thresholdPriority", Integer.MIN_VALUE, EvictorArgs.SYSTEM_CRITICAL_PRIORITY);
    params.optionalString("thresholdPriorityClassName");
    params.bool("nodeFit", false);
    if (params.has("thresholdPriority") && params.has("thresholdPriorityClassName")) {
      throw params.error("only one of thresholdPriority and thresholdPriorityClassName can be set");
    }
    if (params.has("thresholdPriority")) {
      evictor.putObject("priorityThreshold").set("value", params.child("thresholdPriority").raw());
    }
    if (params.has("thresholdPriorityClassName")) {
      evictor.putObject("priorityThreshold").set("name", params.child("thresholdPriorityClassName").raw());
    }
    if (params.has("nodeFit") && !name.equals("PodLifeTime")) {
      evictor.set("nodeFit", params.child("nodeFit").raw());
    }
    EvictorArgs evictorArgs = DeschedulerPlugins.defaultEvictor(new ConfigNode(evictor, root.path()));
    boolean balance = DeschedulerPlugins.BALANCE.contains(name);
    return new Profile("strategy-" + name + "-profile", evictorArgs, balance ? List.of() : List.of(strategy),
        balance ? List.of(strategy) : List.of(), true, nodeSelector);
  }
}
