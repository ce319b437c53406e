package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.LowNodeLoadArgs;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Koordinator's LowNodeLoad: LowNodeUtilization ({@link UtilizationBalance}, spreading) on measured usage. A node's
 * usage is its latest NodeMetric or metrics.k8s.io measurement; a node without one, or with one older than
 * {@code nodeMetricExpirationSeconds} at the pass's time, takes no part (never guessed). A pod that has left since
 * the measurement, or leaves in the pass, takes its own measured usage with it (its requests when it has none). Hot
 * nodes are acted on only once they have been overloaded in more than {@code consecutiveAbnormalities} consecutive
 * passes, so a short spike moves nothing.
 */
final class LowNodeLoad extends UtilizationBalance {
  private final LowNodeLoadArgs args;

  /** A node's run of consecutive overloaded passes, and the time of the last one. */
  private record Streak(int passes, Instant last) {}

  /** Kept across the passes of one policy (the service's periodic passes); forgotten on reload. */
  private final Map<String, Streak> streaks = new HashMap<>();

  LowNodeLoad(LowNodeLoadArgs args) {
    super(LowNodeLoadArgs.NAME, false, args.lowThresholds(), args.highThresholds(), args.useDeviationThresholds(), args.numberOfNodes(),
        args.lowThresholds().keySet());
    this.args = args;
  }

  @Override
  public void run(NodePass pass) {
    if (args.paused()) {
      pass.note(LowNodeLoadArgs.NAME, "paused");
      return;
    }
    super.run(pass);
  }

  @Override
  List<NodeRecord> nodes(NodePass pass) {
    return pass.nodes().stream().filter(n -> args.nodeSelector().matches(n.labels())).toList();
  }

  @Override
  Optional<Load> load(NodeRecord node, List<PodRecord> pods, NodePass pass) {
    Optional<NodeUsage> measured = pass.view.nodeUsage(node.name());
    if (measured.isEmpty()) {
      return skip(pass, node, "no measured usage (no NodeMetric or metrics.k8s.io measurement)");
    }
    NodeUsage m = measured.get();
    Duration age = Duration.between(m.measuredAt(), pass.now);
    if (age.compareTo(args.nodeMetricExpiration()) >= 0) {
      return skip(pass, node, "its " + m.source() + " measurement of " + m.measuredAt() + " is " + age.toSeconds()
          + "s old, not newer than nodeMetricExpirationSeconds " + args.nodeMetricExpiration().toSeconds());
    }
    Optional<String> unmeasured = args.lowThresholds().keySet().stream().filter(r -> !m.usage().containsKey(r)).sorted().findFirst();
    if (unmeasured.isPresent()) {
      return skip(pass, node, "its " + m.source() + " measurement has no " + unmeasured.get());
    }
    // A pod measured then but gone since (evicted, finished, moved) no longer loads the node: without this, every
    // pass until the next measurement would see the node as hot still and move more pods.
    Set<String> present = pods.stream().map(PodRecord::key).collect(Collectors.toSet());
    Map<String, Long> used = new HashMap<>(m.usage());
    m.pods().forEach((pod, usage) -> {
      if (!present.contains(pod)) {
        usage.forEach((r, v) -> used.computeIfPresent(r, (k, total) -> Math.max(0, total - v)));
      }
    });
    return Optional.of(new Load(node, pods, used, measured));
  }

  private static Optional<Load> skip(NodePass pass, NodeRecord node, String why) {
    pass.note(LowNodeLoadArgs.NAME, "node " + node.name() + " skipped: " + why);
    return Optional.empty();
  }

  @Override
  long amount(PodRecord pod, Load from, String resource) {
    return measured(pod, from).map(u -> u.getOrDefault(resource, 0L))
        .orElseGet(() -> pod.scheduling().requests().getOrDefault(resource, 0L));
  }

  private static Optional<Map<String, Long>> measured(PodRecord pod, Load from) {
    return from.measured.flatMap(m -> m.pod(pod.key()));
  }

  /**
   * Koordinator's anomaly condition, counted every pass: an overloaded node counts one more pass, a measured node
   * that is not overloaded starts from zero, and a count not continued within detectorCacheTimeout is forgotten.
   */
  @Override
  synchronized void observe(List<Load> all, List<Load> sources, NodePass pass) {
    streaks.values().removeIf(s -> !s.last().plus(args.detectorCacheTimeout()).isAfter(pass.now));
    all.stream().filter(l -> !sources.contains(l)).forEach(l -> streaks.remove(l.node.name()));
    for (Load source : sources) {
      String node = source.node.name();
      streaks.put(node, new Streak(Optional.ofNullable(streaks.get(node)).map(Streak::passes).orElse(0) + 1, pass.now));
    }
  }

  /** A node is acted on once its count is more than consecutiveAbnormalities (at once for 1), then counts from zero. */
  @Override
  synchronized List<Load> acting(List<Load> sources, NodePass pass) {
    int needed = args.consecutiveAbnormalities() == 1 ? 1 : args.consecutiveAbnormalities() + 1;
    List<Load> acting = new ArrayList<>();
    for (Load source : sources) {
      int passes = streaks.get(source.node.name()).passes();
      if (passes >= needed) {
        streaks.remove(source.node.name());
        acting.add(source);
      } else {
        pass.note(LowNodeLoadArgs.NAME, "node " + source.node.name() + " is overloaded (" + usage(source, source.high, ">") + ") in " + passes
            + " consecutive pass(es); anomalyCondition.consecutiveAbnormalities " + args.consecutiveAbnormalities()
            + " acts after more than that");
      }
    }
    return acting;
  }

  /** Weighted share of the node: the busiest node first. */
  @Override
  double score(Load load) {
    return args.lowThresholds().keySet().stream().mapToDouble(r -> args.resourceWeights().get(r) * load.percent(r)).sum();
  }

  @Override
  boolean candidate(PodRecord pod, Load source) {
    return args.namespaces().matches(pod.namespace())
        && (args.podSelectors().isEmpty() || args.podSelectors().stream().anyMatch(s -> s.matches(pod.labels())))
        // Koordinator: with nodeFit, a pod whose usage is not measured cannot be shown to fit, so it stays.
        && (!args.nodeFit() || measured(pod, source).isPresent());
  }

  /** Within a priority and QoS class, the pod with the largest weighted share of its node first. */
  @Override
  Comparator<PodRecord> order(Load source) {
    Comparator<PodRecord> byShare = Comparator.comparingDouble(p -> args.lowThresholds().keySet().stream()
        .mapToDouble(r -> args.resourceWeights().get(r) * share(amount(p, source, r), source.node, r)).sum());
    return EvictionOrder.lowestPriorityFirst(byShare.reversed());
  }

  private static double share(long amount, NodeRecord node, String resource) {
    Long capacity = node.allocatable().get(resource);
    return capacity == null || capacity <= 0 ? 0 : (double) amount / capacity;
  }

  /**
   * With nodeFit (Koordinator's default), a destination the pod would schedule on (selectors, affinity, taints,
   * requests) that stays within its high thresholds with the pod's measured usage; without, any destination.
   */
  @Override
  Optional<Load> destination(PodRecord pod, Load source, List<Load> destinations, NodePass pass) {
    if (!args.nodeFit()) {
      return destinations.stream().findFirst();
    }
    return destinations.stream()
        .filter(d -> Evictor.fits(pod, d.node, pass.view))
        .filter(d -> d.room.keySet().stream().allMatch(r -> d.used.get(r) + amount(pod, source, r) <= d.room.get(r)))
        .findFirst();
  }

  @Override
  String reason(Load source, String destinationNames) {
    NodeUsage m = source.measured.orElseThrow();
    return "node " + source.node.name() + " is overloaded (" + usage(source, source.high, ">") + "; measured by " + m.source() + " at "
        + m.measuredAt() + "); moving to underloaded " + destinationNames;
  }
}
