package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Taint;
import io.podsweeper.policy.NodeUtilizationArgs;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Upstream's LowNodeUtilization and HighNodeUtilization, on requests. Usage of a node is the sum of the requests of
 * its unfinished pods (and their number, for {@code pods}), in percent of its allocatable.
 *
 * <p>Low: nodes at or below every threshold (and schedulable) are underutilized, nodes above any target threshold
 * overutilized; pods leave the overutilized nodes (most used first) while the node stays above its target and the
 * underutilized nodes still have room below their targets. High: nodes at or below every threshold are the sources
 * (least used first), every other schedulable node a destination; pods leave while the destinations have room.
 * Candidates on a node: lowest priority first (none first), then BestEffort, Burstable, Guaranteed.
 */
final class NodeUtilization implements NodeStrategy {
  private static final Map<String, Integer> QOS_ORDER = Map.of("BestEffort", 0, "Burstable", 1, "Guaranteed", 2);

  private final NodeUtilizationArgs args;
  /** The thresholded resources plus cpu, memory and pods: what usage and room are tracked for. */
  private final Set<String> resources;

  NodeUtilization(NodeUtilizationArgs args) {
    this.args = args;
    this.resources = new TreeSet<>(args.thresholds().keySet());
    resources.addAll(List.of("cpu", "memory", "pods"));
  }

  private static final class NodeUsage {
    final NodeRecord node;
    final List<PodRecord> pods;
    final Map<String, Long> used = new HashMap<>();
    Map<String, Double> low = Map.of();
    Map<String, Double> high = Map.of();
    final Map<String, Long> room = new HashMap<>();

    NodeUsage(NodeRecord node, List<PodRecord> pods) {
      this.node = node;
      this.pods = pods;
    }

    double percent(String resource) {
      Long capacity = node.allocatable().get(resource);
      return capacity == null || capacity <= 0 ? 0 : used.getOrDefault(resource, 0L) * 100.0 / capacity;
    }

    long total() {
      return used.values().stream().mapToLong(Long::longValue).sum();
    }
  }

  @Override
  public void run(NodePass pass) {
    String name = args.strategyName();
    List<NodeUsage> all = new ArrayList<>();
    for (NodeRecord node : pass.nodes()) {
      NodeUsage u = new NodeUsage(node, pass.pods(node));
      for (String r : resources) {
        u.used.put(r, r.equals("pods") ? u.pods.size() : u.pods.stream().mapToLong(p -> p.scheduling().requests().getOrDefault(r, 0L)).sum());
      }
      all.add(u);
    }
    Map<String, Double> low = args.thresholds();
    Map<String, Double> high = args.high() ? args.thresholds().keySet().stream().collect(Collectors.toMap(r -> r, r -> 100.0)) : args.targetThresholds();
    if (args.useDeviationThresholds()) {
      Map<String, Double> average = new HashMap<>();
      args.thresholds().keySet().forEach(r -> average.put(r, all.stream().mapToDouble(u -> u.percent(r)).average().orElse(0)));
      low = deviate(average, args.thresholds(), -1);
      high = deviate(average, args.targetThresholds(), 1);
    }
    List<NodeUsage> sources = new ArrayList<>();
    List<NodeUsage> destinations = new ArrayList<>();
    for (NodeUsage u : all) {
      u.low = low;
      u.high = high;
      boolean under = low.entrySet().stream().allMatch(e -> u.percent(e.getKey()) <= e.getValue());
      if (args.high()) {
        if (under) {
          sources.add(u);
        } else if (!u.node.unschedulable()) {
          destinations.add(u);
        }
      } else if (under && !u.node.unschedulable()) {
        destinations.add(u);
      } else if (high.entrySet().stream().anyMatch(e -> u.percent(e.getKey()) > e.getValue())) {
        sources.add(u);
      }
      for (String r : resources) {
        Long capacity = u.node.allocatable().get(r);
        u.room.put(r, capacity == null ? 0 : high.containsKey(r) ? (long) (high.get(r) * 0.01 * capacity) : capacity);
      }
    }
    List<NodeUsage> underutilized = args.high() ? sources : destinations;
    if (underutilized.isEmpty()) {
      pass.note(name, "no node is underutilized (" + describe(low, "<=") + ")");
      return;
    }
    if (underutilized.size() <= args.numberOfNodes()) {
      pass.note(name, underutilized.size() + " underutilized node(s), not more than numberOfNodes " + args.numberOfNodes());
      return;
    }
    if (underutilized.size() == all.size()) {
      pass.note(name, "all nodes are underutilized");
      return;
    }
    if (args.high() ? destinations.isEmpty() : sources.isEmpty()) {
      pass.note(name, args.high() ? "no node is available to take the pods" : "no node is above its target (" + describe(high, ">") + ")");
      return;
    }
    Map<String, Long> available = new LinkedHashMap<>();
    for (NodeUsage d : destinations) {
      resources.forEach(r -> available.merge(r, d.room.get(r) - d.used.get(r), Long::sum));
    }
    List<List<Taint>> destinationTaints = destinations.stream().map(d -> d.node.taints()).toList();
    String destinationNames = destinations.stream().map(d -> d.node.name()).collect(Collectors.joining(", "));
    Comparator<NodeUsage> byUsage = Comparator.comparingLong(NodeUsage::total);
    sources.sort((args.high() ? byUsage : byUsage.reversed()).thenComparing(u -> u.node.name()));
    for (NodeUsage source : sources) {
      List<PodRecord> candidates = source.pods.stream()
          .filter(p -> pass.evictor.filter(p, pass.view).isEmpty())
          .filter(p -> !args.onlyThresholdingResources()
              || args.thresholds().keySet().stream().anyMatch(r -> p.scheduling().requests().getOrDefault(r, 0L) > 0))
          .sorted(candidateOrder())
          .toList();
      if (candidates.isEmpty() || !keepGoing(source, available)) {
        continue;
      }
      int evicted = 0;
      for (PodRecord pod : candidates) {
        if (args.nodeEvictionLimit().isPresent() && evicted >= args.nodeEvictionLimit().getAsInt()) {
          break;
        }
        if (!toleratesSomeNode(pod, destinationTaints) || args.excludedNamespaces().contains(pod.namespace())) {
          continue;
        }
        String reason = "node " + source.node.name() + (args.high()
            ? " is underutilized (" + usage(source, low, "<=") + "); packing onto " + destinationNames
            : " is overutilized (" + usage(source, high, ">") + "); moving to underutilized " + destinationNames);
        NodePass.Outcome outcome = pass.evict(pod, name, reason);
        if (outcome == NodePass.Outcome.TOTAL_LIMIT) {
          return;
        }
        if (outcome == NodePass.Outcome.NODE_LIMIT) {
          break;
        }
        if (outcome != NodePass.Outcome.EVICTED) {
          continue;
        }
        evicted++;
        for (String r : available.keySet()) {
          long amount = r.equals("pods") ? 1 : pod.scheduling().requests().getOrDefault(r, 0L);
          source.used.merge(r, -amount, Long::sum);
          available.merge(r, -amount, Long::sum);
        }
        if (!keepGoing(source, available)) {
          break;
        }
      }
    }
  }

  /** Low: the node is still above its target in some resource; both: the destinations have room in every one. */
  private boolean keepGoing(NodeUsage source, Map<String, Long> available) {
    boolean aboveTarget = args.high() || resources.stream().anyMatch(r -> source.used.get(r) > source.room.get(r));
    return aboveTarget && available.values().stream().allMatch(v -> v > 0);
  }

  /** Upstream's PodToleratesTaints: the pod tolerates every taint of some destination node. */
  private static boolean toleratesSomeNode(PodRecord pod, List<List<Taint>> taintsOfNodes) {
    var tolerations = pod.scheduling().tolerations();
    return taintsOfNodes.stream().anyMatch(taints -> tolerations.size() >= taints.size()
        && taints.stream().allMatch(t -> tolerations.stream().anyMatch(tol -> tol.tolerates(t))));
  }

  /** Lowest priority first (pods without one before all others), then BestEffort, Burstable, Guaranteed. */
  static Comparator<PodRecord> candidateOrder() {
    return Comparator.<PodRecord>comparingInt(p -> p.priority().isPresent() ? 1 : 0)
        .thenComparingInt(p -> p.priority().orElse(0))
        .thenComparingInt(p -> QOS_ORDER.getOrDefault(p.scheduling().qosClass(), 1))
        .thenComparing(PodRecord::key);
  }

  private static Map<String, Double> deviate(Map<String, Double> average, Map<String, Double> by, int sign) {
    Map<String, Double> out = new HashMap<>();
    average.forEach((r, avg) -> out.put(r, Math.max(0, Math.min(100, avg + sign * by.get(r)))));
    return out;
  }

  private static String describe(Map<String, Double> limits, String op) {
    return new TreeSet<>(limits.keySet()).stream().map(r -> r + " " + op + " " + pct(limits.get(r))).collect(Collectors.joining(", "));
  }

  private static String usage(NodeUsage u, Map<String, Double> limits, String op) {
    return new TreeSet<>(limits.keySet()).stream()
        .map(r -> r + " " + pct(u.percent(r)) + (compare(u.percent(r), limits.get(r), op) ? " " + op + " " : " vs ") + pct(limits.get(r)))
        .collect(Collectors.joining(", "));
  }

  private static boolean compare(double value, double limit, String op) {
    return op.equals(">") ? value > limit : value <= limit;
  }

  private static String pct(double v) {
    return Math.round(v) + "%";
  }
}
