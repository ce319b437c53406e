package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.NodeUtilizationArgs;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;

/**
 * Upstream's LowNodeUtilization and HighNodeUtilization, on requests. Usage of a node is the sum of the requests of
 * its unfinished pods (and their number, for {@code pods}), in percent of its allocatable; see
 * {@link UtilizationBalance} for how nodes are sorted and pods leave. Candidates on a node: lowest priority first
 * (none first), then BestEffort, Burstable, Guaranteed.
 */
final class NodeUtilization extends UtilizationBalance {
  private final NodeUtilizationArgs args;
  /** The thresholded resources plus cpu, memory and pods: what usage and room are tracked for. */
  private final Set<String> resources;

  NodeUtilization(NodeUtilizationArgs args) {
    this(args, tracked(args));
  }

  private NodeUtilization(NodeUtilizationArgs args, Set<String> resources) {
    super(args.strategyName(), args.high(), args.thresholds(), args.targetThresholds(), args.useDeviationThresholds(),
        args.numberOfNodes(), resources);
    this.args = args;
    this.resources = resources;
  }

  private static Set<String> tracked(NodeUtilizationArgs args) {
    Set<String> resources = new TreeSet<>(args.thresholds().keySet());
    resources.addAll(List.of("cpu", "memory", "pods"));
    return resources;
  }

  @Override
  Optional<Load> load(NodeRecord node, List<PodRecord> pods, NodePass pass) {
    Map<String, Long> used = new HashMap<>();
    for (String r : resources) {
      used.put(r, r.equals("pods") ? pods.size() : pods.stream().mapToLong(p -> p.scheduling().requests().getOrDefault(r, 0L)).sum());
    }
    return Optional.of(new Load(node, pods, used, Optional.empty()));
  }

  @Override
  long amount(PodRecord pod, Load from, String resource) {
    return resource.equals("pods") ? 1 : pod.scheduling().requests().getOrDefault(resource, 0L);
  }

  @Override
  boolean candidate(PodRecord pod, Load source) {
    return !args.excludedNamespaces().contains(pod.namespace()) && (!args.onlyThresholdingResources()
        || args.thresholds().keySet().stream().anyMatch(r -> pod.scheduling().requests().getOrDefault(r, 0L) > 0));
  }

  @Override
  OptionalInt nodeEvictionLimit() {
    return args.nodeEvictionLimit();
  }

  @Override
  String reason(Load source, String destinationNames) {
    return "node " + source.node.name() + (args.high()
        ? " is underutilized (" + usage(source, source.low, "<=") + "); packing onto " + destinationNames
        : " is overutilized (" + usage(source, source.high, ">") + "); moving to underutilized " + destinationNames);
  }
}
