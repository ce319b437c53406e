package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.QueriedUsage;
import io.podsweeper.policy.LowNodeLoadArgs;
import io.podsweeper.policy.NodeUtilizationArgs;
import io.podsweeper.policy.PrometheusQuery;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;

/**
 * Upstream's LowNodeUtilization and HighNodeUtilization, on requests. Usage of a node is the sum of the requests of
 * its unfinished pods (and their number, for {@code pods}), in percent of its allocatable; with LowNodeUtilization's
 * {@code metricsUtilization}, the node's measured usage (metrics.k8s.io) instead, and a pod takes its measured usage; see
 * {@link UtilizationBalance} for how nodes are sorted and pods leave. Candidates on a node: lowest priority first
 * (none first), then BestEffort, Burstable, Guaranteed.
 */
final class NodeUtilization extends UtilizationBalance {
  private final NodeUtilizationArgs args;

  NodeUtilization(NodeUtilizationArgs args) {
    super(args.strategyName(), args.high(), args.thresholds(), args.targetThresholds(), args.useDeviationThresholds(),
        args.numberOfNodes(), tracked(args));
    this.args = args;
  }

  /** The thresholded resources plus cpu, memory and pods, as upstream's; Prometheus' one resource alone. */
  private static Set<String> tracked(NodeUtilizationArgs args) {
    if (args.prometheus().isPresent()) {
      return Set.of(PrometheusQuery.METRIC_RESOURCE);
    }
    Set<String> resources = new TreeSet<>(args.thresholds().keySet());
    resources.addAll(List.of("cpu", "memory", "pods"));
    return resources;
  }

  /**
   * With measured usage, every node of the pass needs a fresh measurement of every tracked resource, or nothing is
   * decided: upstream's metrics-server client fails the plugin's whole run for a node without one.
   */
  @Override
  public void run(NodePass pass) {
    if (args.prometheus().isPresent()) {
      Optional<QueriedUsage> queried = pass.queriedUsage(args.prometheus().get());
      if (queried.isEmpty()) {
        pass.note(args.strategyName(), "nothing decided: no usable answer from Prometheus to " + args.prometheus().get().query()
            + " (the service logs why; a snapshot holds none)");
        return;
      }
      Optional<NodeRecord> missing = pass.nodes().stream().filter(n -> !queried.get().percentByNode().containsKey(n.name())).findFirst();
      if (missing.isPresent()) {
        pass.note(args.strategyName(), "nothing decided: node " + missing.get().name() + " has no sample in Prometheus' answer to "
            + args.prometheus().get().query());
        return;
      }
    }
    if (args.measuredUsage()) {
      for (NodeRecord node : pass.nodes()) {
        Optional<String> unknown = unmeasured(node, pass);
        if (unknown.isPresent()) {
          pass.note(args.strategyName(), "nothing decided: node " + node.name() + " " + unknown.get());
          return;
        }
      }
    }
    super.run(pass);
  }

  private Optional<String> unmeasured(NodeRecord node, NodePass pass) {
    Optional<NodeUsage> measured = pass.view.nodeUsage(node.name());
    if (measured.isEmpty()) {
      return Optional.of("has no metrics.k8s.io measurement");
    }
    NodeUsage m = measured.get();
    Duration age = Duration.between(m.measuredAt(), pass.now);
    if (age.compareTo(LowNodeLoadArgs.DEFAULT_EXPIRATION) >= 0) {
      return Optional.of("has only a " + m.source() + " measurement of " + m.measuredAt() + ", " + age.toSeconds() + "s old (at most "
          + LowNodeLoadArgs.DEFAULT_EXPIRATION.toSeconds() + "s is used)");
    }
    return resources().stream().filter(r -> !r.equals("pods") && !m.usage().containsKey(r)).findFirst()
        .map(r -> "has a " + m.source() + " measurement without " + r);
  }

  @Override
  Optional<Load> load(NodeRecord node, List<PodRecord> pods, NodePass pass) {
    if (args.prometheus().isPresent()) {
      double percent = pass.queriedUsage(args.prometheus().get()).orElseThrow().percentByNode().get(node.name());
      return Optional.of(new Load(node, pods, Map.of(PrometheusQuery.METRIC_RESOURCE, (long) percent /* truncated, as upstream */), Optional.empty()));
    }
    if (args.measuredUsage()) {
      NodeUsage m = pass.view.nodeUsage(node.name()).orElseThrow();
      return Optional.of(new Load(node, pods, measuredUsage(m, pods), Optional.of(m)));
    }
    Map<String, Long> used = new HashMap<>();
    for (String r : resources()) {
      used.put(r, r.equals("pods") ? pods.size() : pods.stream().mapToLong(p -> p.scheduling().requests().getOrDefault(r, 0L)).sum());
    }
    return Optional.of(new Load(node, pods, used, Optional.empty()));
  }

  /** What a pod takes off a node's Prometheus-measured usage is not known: see {@link #nodeEvictionLimit}. */
  @Override
  long amount(PodRecord pod, Load from, String resource) {
    if (resource.equals(PrometheusQuery.METRIC_RESOURCE)) {
      return 0;
    }
    if (resource.equals("pods")) {
      return 1;
    }
    return from.measured.isPresent() ? podUsage(pod, from).map(u -> u.getOrDefault(resource, 0L)).orElse(0L)
        : pod.scheduling().requests().getOrDefault(resource, 0L);
  }

  private static Optional<Map<String, Long>> podUsage(PodRecord pod, Load from) {
    return from.measured.flatMap(m -> m.pod(pod.key()));
  }

  /** With measured usage, a pod without its own measurement is not moved: what it frees would be a guess. */
  @Override
  boolean candidate(PodRecord pod, Load source) {
    return !args.excludedNamespaces().contains(pod.namespace()) && (!args.onlyThresholdingResources()
        || args.thresholds().keySet().stream().anyMatch(r -> pod.scheduling().requests().getOrDefault(r, 0L) > 0))
        && (!args.measuredUsage() || podUsage(pod, source).isPresent());
  }

  /**
   * With usage from Prometheus, what a pod frees is not known, so as upstream one pod leaves an overutilized node per
   * pass unless {@code evictionLimits.node} says how many may.
   */
  @Override
  OptionalInt nodeEvictionLimit() {
    return args.prometheus().isPresent() && args.nodeEvictionLimit().isEmpty() ? OptionalInt.of(1) : args.nodeEvictionLimit();
  }

  @Override
  String reason(Load source, String destinationNames) {
    return "node " + source.node.name() + (args.high()
        ? " is underutilized (" + usage(source, source.low, "<=") + "); packing onto " + destinationNames
        : " is overutilized (" + usage(source, source.high, ">") + source.measured.map(m -> "; measured by " + m.source() + " at "
            + m.measuredAt()).orElse("") + args.prometheus().map(q -> "; measured by Prometheus: " + q.query()).orElse("")
            + "); moving to underutilized " + destinationNames);
  }
}
