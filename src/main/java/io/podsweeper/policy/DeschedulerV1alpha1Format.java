package io.podsweeper.policy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
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
   * v1alpha1 strategy name → where its own params live inside {@code params}; "" for a strategy with only the shared
   * namespaces and labelSelector (no such field is allowed, so its own params are empty).
   */
  private static final Map<String, String> PARAMS = Map.of(
      "PodLifeTime", "podLifeTime",
      "RemoveFailedPods", "failedPods",
      "RemovePodsHavingTooManyRestarts", "podsHavingTooManyRestarts",
      InterPodAntiAffinityArgs.NAME, "");
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
      if (!PARAMS.containsKey(name) && !name.equals(TopologySpreadArgs.NAME)) {
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

  private static Profile profile(ConfigNode root, String name, ConfigNode params, Optional<LabelSelector> nodeSelector) {
    params.requireObjectOrAbsent(Set.of("nodeResourceUtilizationThresholds", "nodeAffinityType", "podsHavingTooManyRestarts",
        "podLifeTime", "removeDuplicates", "failedPods", "includeSoftConstraints", "namespaces", "thresholdPriority",
        "thresholdPriorityClassName", "labelSelector", "nodeFit", "includePreferNoSchedule", "excludedTaints", "includedTaints"));
    // The plugin's args: its own params block plus the shared namespaces and labelSelector, at their own paths.
    ObjectNode args = JsonNodeFactory.instance.objectNode();
    // TopologySpread has no params block of its own.
    ConfigNode own = PARAMS.containsKey(name) ? params.child(PARAMS.get(name)) : new ConfigNode(null, params.path());
    if (own.has("podStatusPhases")) {
      // Deprecated alias of states, merged as upstream did.
      ObjectNode merged = own.objectCopy();
      merged.withArray("states").addAll(merged.withArray("podStatusPhases"));
      merged.remove("podStatusPhases");
      args.setAll(merged);
    } else {
      args.setAll(own.objectCopy());
    }
    if (name.equals(TopologySpreadArgs.NAME) && params.bool("includeSoftConstraints", false)) {
      // As upstream converted it: soft constraints are balanced as well as hard ones.
      args.putArray("constraints").add(TopologySpreadArgs.HARD).add(TopologySpreadArgs.SOFT);
    }
    for (String shared : List.of("namespaces", "labelSelector")) {
      if (params.has(shared)) {
        args.set(shared, params.child(shared).raw());
      }
    }
    StrategyArgs strategy = DeschedulerPlugins.strategy(name, new ConfigNode(args, params.path()), "strategy-" + name + "-profile");

    ObjectNode evictor = JsonNodeFactory.instance.objectNode();
    for (String flag : EVICTOR_FLAGS) {
      if (root.has(flag)) {
        evictor.set(flag.equals("evictDaemonSetPods") ? "evictDaemonSetPods" : flag, root.child(flag).raw());
      }
    }
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
