package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.PrometheusQuery;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * What LowNodeUtilization and HighNodeUtilization (on requests) and LowNodeLoad (on measured usage) share: usage per
 * resource in percent of allocatable, low and high thresholds (fixed, or distances from the average usage), sorting
 * nodes into sources and destinations, the destinations' headroom below their high thresholds, and moving pods off
 * the sources while a source stays above its high thresholds and the destinations have room. Subclasses say how a
 * node's usage is known, what a pod takes with it, which pods are candidates in which order, and why.
 *
 * <p>Spreading (Low*): nodes at or below every low threshold (and schedulable) are the destinations, nodes above any
 * high threshold the sources, busiest first. Packing (High*): nodes at or below every low threshold are the sources,
 * least used first, every other schedulable node a destination; pods leave while the destinations have room.
 */
abstract class UtilizationBalance implements NodeStrategy {
  /** One node of the pass: its pods, what they use (updated as pods move), its thresholds and allowed usage. */
  static final class Load {
    final NodeRecord node;
    final List<PodRecord> pods;
    final Map<String, Long> used;
    /** The measurement the usage comes from; empty when it is the pods' requests. */
    final Optional<NodeUsage> measured;
    Map<String, Double> low = Map.of();
    Map<String, Double> high = Map.of();
    /** Per resource, the usage the high threshold allows (the whole capacity for a resource without one). */
    final Map<String, Long> room = new HashMap<>();
    /** Spreading: the node was above a high threshold when the pass sorted the nodes (a source, acted on or not). */
    boolean overloaded;

    Load(NodeRecord node, List<PodRecord> pods, Map<String, Long> used, Optional<NodeUsage> measured) {
      this.node = node;
      this.pods = pods;
      this.used = new HashMap<>(used);
      this.measured = measured;
    }

    /** The usage of {@code resource} in percent of the node's capacity; 0 on a node without any (as upstream's). */
    double percent(String resource) {
      long capacity = capacity(resource);
      return capacity <= 0 ? 0 : used(resource) * 100.0 / capacity;
    }

    /** What the node's pods use of {@code resource}; nothing when they use none or it is not measured. */
    long used(String resource) {
      return used.getOrDefault(resource, 0L);
    }

    /**
     * The node's allocatable, 0 for a resource the node does not have (as upstream's: it takes none of it); a usage
     * measured in percent (Prometheus') has 100.
     */
    long capacity(String resource) {
      return resource.equals(PrometheusQuery.METRIC_RESOURCE) ? 100L : node.allocatable().getOrDefault(resource, 0L);
    }

    boolean under() {
      return low.entrySet().stream().allMatch(e -> percent(e.getKey()) <= e.getValue());
    }

    boolean over() {
      return high.entrySet().stream().anyMatch(e -> percent(e.getKey()) > e.getValue());
    }
  }

  private final String name;
  private final boolean packing;
  private final Map<String, Double> lowThresholds;
  private final Map<String, Double> highThresholds;
  private final boolean deviation;
  private final int numberOfNodes;
  /** What usage and room are tracked for. */
  private final Set<String> resources;

  /**
   * @param highThresholds ignored when packing (every destination may fill up to its capacity)
   * @param deviation both threshold maps are distances from the average usage of the nodes taking part
   */
  UtilizationBalance(String name, boolean packing, Map<String, Double> lowThresholds, Map<String, Double> highThresholds,
      boolean deviation, int numberOfNodes, Set<String> resources) {
    this.name = name;
    this.packing = packing;
    this.lowThresholds = lowThresholds;
    this.highThresholds = packing ? lowThresholds.keySet().stream().collect(Collectors.toMap(r -> r, r -> 100.0)) : highThresholds;
    this.deviation = deviation;
    this.numberOfNodes = numberOfNodes;
    this.resources = Set.copyOf(resources);
  }

  /** The node's usage, or empty when it is not known: the node then takes no part (say why in a note). */
  abstract Optional<Load> load(NodeRecord node, List<PodRecord> pods, NodePass pass);

  /** How much of {@code resource} the pod takes off its node when it leaves. */
  abstract long amount(PodRecord pod, Load from, String resource);

  /** Why the pod leaves {@code source}, for the decision. */
  abstract String reason(Load source, String destinationNames);

  /** What usage and room are tracked for: the thresholded resources and those every move must leave room in. */
  final Set<String> resources() {
    return resources;
  }

  /** The nodes of the pass that take part. */
  List<NodeRecord> nodes(NodePass pass) {
    return pass.nodes();
  }

  /** Told every pass, before anything else is decided, which nodes took part and which of them are sources. */
  void observe(List<Load> all, List<Load> sources, NodePass pass) {}

  /** Of the sources, those to act on in this pass. */
  List<Load> acting(List<Load> sources, NodePass pass) {
    return sources;
  }

  /**
   * A measured node's usage as it is now: a pod measured then but gone since (evicted, finished, moved) no longer
   * loads the node (without this, every pass until the next measurement would see the node as hot still and move
   * more pods); {@code pods} is the number of its pods.
   */
  static Map<String, Long> measuredUsage(NodeUsage m, List<PodRecord> pods) {
    Set<String> present = pods.stream().map(PodRecord::key).collect(Collectors.toSet());
    Map<String, Long> used = new HashMap<>(m.usage());
    m.pods().forEach((pod, usage) -> {
      if (!present.contains(pod)) {
        usage.forEach((r, v) -> used.computeIfPresent(r, (k, total) -> Math.max(0, total - v)));
      }
    });
    used.put("pods", (long) pods.size());
    return used;
  }

  /** Sources are taken busiest first (spreading) or least used first (packing) by this score. */
  double score(Load load) {
    return load.used.values().stream().mapToLong(Long::longValue).sum();
  }

  /** Whether an evictable pod of {@code source} may move at all. */
  boolean candidate(PodRecord pod, Load source) {
    return true;
  }

  /** The order candidates of {@code source} are taken in. */
  Comparator<PodRecord> order(Load source) {
    return EvictionOrder.lowestPriorityFirst();
  }

  /** The destination the pod of {@code source} would go to; empty if none takes it (upstream: the pod tolerates its taints). */
  Optional<Load> destination(PodRecord pod, Load source, List<Load> destinations, NodePass pass) {
    var tolerations = pod.scheduling().tolerations();
    return destinations.stream().filter(d -> tolerations.size() >= d.node.taints().size()
        && d.node.taints().stream().allMatch(t -> tolerations.stream().anyMatch(tol -> tol.tolerates(t)))).findFirst();
  }

  /** Told after {@code pod} was decided to leave {@code source}, likely for {@code target}, and both loads updated. */
  void moved(PodRecord pod, Load source, Load target) {}

  /** At most this many evictions per source node. */
  OptionalInt nodeEvictionLimit() {
    return OptionalInt.empty();
  }

  @Override
  public void run(NodePass pass) {
    balance(pass);
  }

  /** One round over the pass's nodes; the loads of every node that took part, as they are after it. */
  final List<Load> balance(NodePass pass) {
    List<Load> all = new ArrayList<>();
    for (NodeRecord node : nodes(pass)) {
      load(node, pass.pods(node), pass).ifPresent(all::add);
    }
    Map<String, Double> low = lowThresholds;
    Map<String, Double> high = highThresholds;
    if (deviation) {
      Map<String, Double> average = new HashMap<>();
      lowThresholds.keySet().forEach(r -> average.put(r, all.stream().mapToDouble(u -> u.percent(r)).average().orElse(0)));
      low = deviate(average, lowThresholds, -1);
      high = deviate(average, highThresholds, 1);
    }
    List<Load> sources = new ArrayList<>();
    List<Load> destinations = new ArrayList<>();
    for (Load u : all) {
      u.low = low;
      u.high = high;
      if (packing) {
        if (u.under()) {
          sources.add(u);
        } else if (!u.node.unschedulable()) {
          destinations.add(u);
        }
      } else if (u.under() && !u.node.unschedulable()) {
        destinations.add(u);
      } else if (u.over()) {
        u.overloaded = true;
        sources.add(u);
      }
      for (String r : resources) {
        long capacity = u.capacity(r);
        u.room.put(r, high.containsKey(r) ? (long) (high.get(r) * 0.01 * capacity) : capacity);
      }
    }
    observe(all, sources, pass);
    List<Load> underutilized = packing ? sources : destinations;
    if (underutilized.isEmpty()) {
      pass.note(name, "no node is underutilized (" + describe(low, "<=") + ")");
      return all;
    }
    if (underutilized.size() <= numberOfNodes) {
      pass.note(name, underutilized.size() + " underutilized node(s), not more than numberOfNodes " + numberOfNodes);
      return all;
    }
    if (underutilized.size() == all.size()) {
      pass.note(name, "all nodes are underutilized");
      return all;
    }
    if (packing ? destinations.isEmpty() : sources.isEmpty()) {
      pass.note(name, packing ? "no node is available to take the pods" : "no node is above its target (" + describe(high, ">") + ")");
      return all;
    }
    Map<String, Long> available = new LinkedHashMap<>();
    for (Load d : destinations) {
      resources.forEach(r -> available.merge(r, d.room.get(r) - d.used(r), Long::sum));
    }
    String destinationNames = destinations.stream().map(d -> d.node.name()).collect(Collectors.joining(", "));
    Comparator<Load> byScore = Comparator.comparingDouble(this::score);
    List<Load> acting = new ArrayList<>(acting(sources, pass));
    List<String> full = available.entrySet().stream().filter(e -> e.getValue() <= 0).map(Map.Entry::getKey).sorted().toList();
    if (!acting.isEmpty() && !full.isEmpty()) {
      // Nothing could move (upstream checks the same before every pod): say why rather than decide nothing in silence.
      pass.note(name, "no room left on " + destinationNames + " in " + String.join(", ", full) + " (below "
          + (packing ? "their capacity" : "their high thresholds") + ")");
      return all;
    }
    acting.sort((packing ? byScore : byScore.reversed()).thenComparing(u -> u.node.name()));
    for (Load source : acting) {
      List<PodRecord> candidates = source.pods.stream()
          .filter(p -> pass.filter(p).isEmpty() && candidate(p, source))
          .sorted(order(source))
          .toList();
      if (candidates.isEmpty() || !keepGoing(source, available)) {
        continue;
      }
      int evicted = 0;
      for (PodRecord pod : candidates) {
        if (nodeEvictionLimit().isPresent() && evicted >= nodeEvictionLimit().getAsInt()) {
          break;
        }
        Optional<Load> target = destination(pod, source, destinations, pass);
        if (target.isEmpty()) {
          continue;
        }
        NodePass.Outcome outcome = pass.evict(pod, name, reason(source, destinationNames));
        if (outcome == NodePass.Outcome.TOTAL_LIMIT) {
          return all;
        }
        if (outcome == NodePass.Outcome.NODE_LIMIT) {
          break;
        }
        if (outcome != NodePass.Outcome.EVICTED) {
          continue;
        }
        evicted++;
        for (String r : available.keySet()) {
          long amount = amount(pod, source, r);
          source.used.merge(r, -amount, Long::sum);
          // Its likely new home is that much fuller for the pods after it.
          target.get().used.merge(r, amount, Long::sum);
          available.merge(r, -amount, Long::sum);
        }
        moved(pod, source, target.get());
        if (!keepGoing(source, available)) {
          break;
        }
      }
    }
    return all;
  }

  /** Spreading: the node is still above its high threshold in some resource; both: the destinations have room in every one. */
  private boolean keepGoing(Load source, Map<String, Long> available) {
    boolean aboveTarget = packing || resources.stream().anyMatch(r -> source.used(r) > source.room.get(r));
    return aboveTarget && available.values().stream().allMatch(v -> v > 0);
  }

  private static Map<String, Double> deviate(Map<String, Double> average, Map<String, Double> by, int sign) {
    Map<String, Double> out = new HashMap<>();
    average.forEach((r, avg) -> out.put(r, Math.max(0, Math.min(100, avg + sign * by.get(r)))));
    return out;
  }

  static String describe(Map<String, Double> limits, String op) {
    return new TreeSet<>(limits.keySet()).stream().map(r -> r + " " + op + " " + pct(limits.get(r))).collect(Collectors.joining(", "));
  }

  /** Each limited resource's usage against its limit, e.g. {@code cpu 91% > 80%, memory 40% vs 85%}. */
  static String usage(Load u, Map<String, Double> limits, String op) {
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
