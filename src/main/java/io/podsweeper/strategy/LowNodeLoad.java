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
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Koordinator's LowNodeLoad: LowNodeUtilization ({@link UtilizationBalance}, spreading) on measured usage. A node's
 * usage is its latest NodeMetric or metrics.k8s.io measurement; a node without one, or with one older than
 * {@code nodeMetricExpirationSeconds} at the pass's time, or without a thresholded resource, takes no part (never
 * guessed). {@code pods} is the number of pods on the node. A pod that has left since the measurement, or leaves in
 * the pass, takes its own measured usage with it (its requests when it has none). Hot nodes are acted on only once
 * they have been overloaded in more than {@code consecutiveAbnormalities} consecutive passes, so a short spike moves
 * nothing.
 *
 * <p>With {@code prodLowThresholds} / {@code prodHighThresholds}, a second round follows, as Koordinator's: on the
 * usage of each node's Prod-tier pods only ({@link #prodTier}), the nodes not overloaded as a whole whose Prod pods
 * are above their high thresholds give up Prod pods to the nodes whose Prod pods are at or below their low ones.
 */
final class LowNodeLoad extends UtilizationBalance {
  /** Koordinator's {@code koordinator.sh/priority-class} label: a pod's tier, over its priority. */
  static final String PRIORITY_CLASS_LABEL = "koordinator.sh/priority-class";
  /** Koordinator's {@code koordinator.sh/qosClass} label: a pod's QoS, over its Kubernetes QoS class. */
  static final String QOS_LABEL = "koordinator.sh/qosClass";
  private static final String PROD = "koord-prod";
  private static final Set<String> TIERS = Set.of(PROD, "koord-mid", "koord-batch", "koord-free");

  private final LowNodeLoadArgs args;
  /** The Prod round's thresholds and counts; empty for the round over whole nodes. */
  private final boolean prodRound;
  /** Prod round: the first round's loads by node, its usage as a whole (kept current as Prod pods move); else empty. */
  private final Map<String, Load> wholeNodes;

  /** A node's run of consecutive overloaded passes, and the time of the last one. */
  private record Streak(int passes, Instant last) {}

  /** Kept across the passes of one policy (the service's periodic passes); forgotten on reload. One per round. */
  private final Map<String, Streak> streaks;
  private final Map<String, Streak> prodStreaks;

  LowNodeLoad(LowNodeLoadArgs args) {
    super(LowNodeLoadArgs.NAME, false, args.lowThresholds(), args.highThresholds(), args.useDeviationThresholds(), args.numberOfNodes(),
        tracked(args.lowThresholds()));
    this.args = args;
    this.prodRound = false;
    this.wholeNodes = Map.of();
    this.streaks = new HashMap<>();
    this.prodStreaks = new HashMap<>();
  }

  /** The Prod round of one pass, after the round over whole nodes gave {@code wholeNodes}. */
  private LowNodeLoad(LowNodeLoadArgs args, Map<String, Load> wholeNodes, Map<String, Streak> prodStreaks) {
    super(LowNodeLoadArgs.NAME, false, args.prodLowThresholds(), args.prodHighThresholds(), args.useDeviationThresholds(),
        args.numberOfNodes(), tracked(args.prodLowThresholds()));
    this.args = args;
    this.prodRound = true;
    this.wholeNodes = wholeNodes;
    this.streaks = prodStreaks;
    this.prodStreaks = Map.of();
  }

  /**
   * The thresholded resources and memory, as Koordinator's: memory without a threshold is held to the whole of the
   * node's, so pods move only while the destinations' measured memory leaves room for them.
   */
  private static Set<String> tracked(Map<String, Double> thresholds) {
    Set<String> resources = new TreeSet<>(thresholds.keySet());
    resources.add("memory");
    return resources;
  }

  @Override
  public void run(NodePass pass) {
    if (args.paused()) {
      pass.note(LowNodeLoadArgs.NAME, "paused");
      return;
    }
    List<Load> whole = balance(pass);
    if (!args.prodLowThresholds().isEmpty()) {
      new LowNodeLoad(args, whole.stream().collect(Collectors.toMap(l -> l.node.name(), l -> l)), prodStreaks).balance(pass);
    }
  }

  /**
   * Koordinator's tier of a pod ({@code GetPodPriorityClassWithDefault}): the {@code koordinator.sh/priority-class}
   * label if it names a tier; else by priority (9000-9999 Prod, 7000-7999 Mid, 5000-5999 Batch, 3000-3999 Free); else
   * by QoS, the {@code koordinator.sh/qosClass} label (SYSTEM, LSE, LSR, LS: Prod; BE: Batch) or, without a known one,
   * the Kubernetes QoS class (Guaranteed, Burstable: Prod; BestEffort: Batch).
   */
  static boolean prodTier(PodRecord pod) {
    String label = pod.labels().get(PRIORITY_CLASS_LABEL);
    if (label != null && TIERS.contains(label)) {
      return PROD.equals(label);
    }
    if (label == null && pod.priority().isPresent()) {
      int p = pod.priority().getAsInt();
      if (p >= 9000 && p <= 9999) {
        return true;
      }
      if ((p >= 7000 && p <= 7999) || (p >= 5000 && p <= 5999) || (p >= 3000 && p <= 3999)) {
        return false;
      }
    }
    String qos = pod.labels().get(QOS_LABEL);
    if (qos != null && Set.of("SYSTEM", "LSE", "LSR", "LS", "BE").contains(qos)) {
      return !"BE".equals(qos);
    }
    return !"BestEffort".equals(pod.scheduling().qosClass());
  }

  /** The thresholds of this round. */
  private Map<String, Double> lowThresholds() {
    return prodRound ? args.prodLowThresholds() : args.lowThresholds();
  }

  @Override
  List<NodeRecord> nodes(NodePass pass) {
    return pass.nodes().stream().filter(n -> args.nodeSelector().matches(n.labels())).toList();
  }

  @Override
  Optional<Load> load(NodeRecord node, List<PodRecord> pods, NodePass pass) {
    if (prodRound && Optional.ofNullable(wholeNodes.get(node.name())).map(whole -> whole.overloaded).orElse(true)) {
      // Skipped by the first round (it said why), or its source: not the Prod round's.
      return Optional.empty();
    }
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
    Optional<String> unmeasured = lowThresholds().keySet().stream()
        .filter(r -> !r.equals(LowNodeLoadArgs.PODS) && !m.usage().containsKey(r)).sorted().findFirst();
    if (unmeasured.isPresent()) {
      return skip(pass, node, "its " + m.source() + " measurement has no " + unmeasured.get());
    }
    if (prodRound) {
      return prodLoad(node, pods, m, pass);
    }
    return Optional.of(new Load(node, pods, measuredUsage(m, pods), measured));
  }

  /**
   * The usage of the node's Prod pods: their measured usage summed, as Koordinator sums it. A Prod pod without a
   * measured usage makes the node unknown (never counted as 0).
   */
  private Optional<Load> prodLoad(NodeRecord node, List<PodRecord> pods, NodeUsage m, NodePass pass) {
    List<PodRecord> prod = pods.stream().filter(LowNodeLoad::prodTier).toList();
    Map<String, Long> used = new HashMap<>();
    for (PodRecord pod : prod) {
      Optional<Map<String, Long>> usage = m.pod(pod.key());
      if (usage.isEmpty()) {
        return skip(pass, node, "Prod pod " + pod.key() + " has no measured usage in its " + m.source() + " measurement");
      }
      resources().forEach(r -> used.merge(r, r.equals(LowNodeLoadArgs.PODS) ? 1L : usage.get().getOrDefault(r, 0L), Long::sum));
    }
    resources().forEach(r -> used.putIfAbsent(r, 0L));
    return Optional.of(new Load(node, prod, used, Optional.of(m)));
  }

  private static Optional<Load> skip(NodePass pass, NodeRecord node, String why) {
    pass.note(LowNodeLoadArgs.NAME, "node " + node.name() + " skipped: " + why);
    return Optional.empty();
  }

  @Override
  long amount(PodRecord pod, Load from, String resource) {
    if (resource.equals(LowNodeLoadArgs.PODS)) {
      return 1;
    }
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
  void observe(List<Load> all, List<Load> sources, NodePass pass) {
    synchronized (streaks) {
      streaks.values().removeIf(s -> !s.last().plus(args.detectorCacheTimeout()).isAfter(pass.now));
      all.stream().filter(l -> !sources.contains(l)).forEach(l -> streaks.remove(l.node.name()));
      for (Load source : sources) {
        String node = source.node.name();
        streaks.put(node, new Streak(Optional.ofNullable(streaks.get(node)).map(Streak::passes).orElse(0) + 1, pass.now));
      }
    }
  }

  /** A node is acted on once its count is more than consecutiveAbnormalities (at once for 1), then counts from zero. */
  @Override
  List<Load> acting(List<Load> sources, NodePass pass) {
    int needed = args.consecutiveAbnormalities() == 1 ? 1 : args.consecutiveAbnormalities() + 1;
    List<Load> acting = new ArrayList<>();
    synchronized (streaks) {
      for (Load source : sources) {
        int passes = streaks.get(source.node.name()).passes();
        if (passes >= needed) {
          streaks.remove(source.node.name());
          acting.add(source);
        } else {
          pass.note(LowNodeLoadArgs.NAME, "node " + source.node.name() + (prodRound ? "'s Prod pods are" : " is") + " overloaded ("
              + usage(source, source.high, ">") + ") in " + passes + " consecutive pass(es); anomalyCondition.consecutiveAbnormalities "
              + args.consecutiveAbnormalities() + " acts after more than that");
        }
      }
    }
    return acting;
  }

  /** Weighted share of the node: the busiest node first. */
  @Override
  double score(Load load) {
    return lowThresholds().keySet().stream().mapToDouble(r -> args.resourceWeights().get(r) * load.percent(r)).sum();
  }

  @Override
  boolean candidate(PodRecord pod, Load source) {
    return (!prodRound || prodTier(pod)) && args.namespaces().matches(pod.namespace())
        && (args.podSelectors().isEmpty() || args.podSelectors().stream().anyMatch(s -> s.matches(pod.labels())))
        // Koordinator: with nodeFit, a pod whose usage is not measured cannot be shown to fit, so it stays.
        && (!args.nodeFit() || measured(pod, source).isPresent());
  }

  /** Within a priority and QoS class, the pod with the largest weighted share of its node first. */
  @Override
  Comparator<PodRecord> order(Load source) {
    Comparator<PodRecord> byShare = Comparator.comparingDouble(p -> lowThresholds().keySet().stream()
        .mapToDouble(r -> args.resourceWeights().get(r) * share(amount(p, source, r), source, r)).sum());
    return EvictionOrder.lowestPriorityFirst(byShare.reversed());
  }

  private static double share(long amount, Load of, String resource) {
    long capacity = of.capacity(resource);
    return capacity <= 0 ? 0 : (double) amount / capacity;
  }

  /**
   * With nodeFit (Koordinator's default), a destination the pod would schedule on (selectors, affinity, taints,
   * requests) that stays within its high thresholds with the pod's measured usage (in the Prod round, both its Prod
   * and its whole node's); without, any destination.
   */
  @Override
  Optional<Load> destination(PodRecord pod, Load source, List<Load> destinations, NodePass pass) {
    if (!args.nodeFit()) {
      return destinations.stream().findFirst();
    }
    return destinations.stream()
        .filter(d -> Evictor.fits(pod, d.node, pass.view))
        .filter(d -> withinHigh(pod, source, d) && (!prodRound || withinHigh(pod, source, wholeNodes.get(d.node.name()))))
        .findFirst();
  }

  private boolean withinHigh(PodRecord pod, Load source, Load destination) {
    return destination.room.keySet().stream().allMatch(r -> destination.used(r) + amount(pod, source, r) <= destination.room.get(r));
  }

  /** Prod round: the pod's move changes its nodes' usage as a whole too. */
  @Override
  void moved(PodRecord pod, Load source, Load target) {
    if (prodRound) {
      for (Load whole : List.of(wholeNodes.get(source.node.name()), wholeNodes.get(target.node.name()))) {
        int sign = whole.node.equals(source.node) ? -1 : 1;
        whole.used.keySet().forEach(r -> whole.used.merge(r, sign * amount(pod, source, r), Long::sum));
      }
    }
  }

  @Override
  String reason(Load source, String destinationNames) {
    NodeUsage m = source.measured.orElseThrow();
    return "node " + source.node.name() + (prodRound ? "'s Prod pods are" : " is") + " overloaded (" + usage(source, source.high, ">")
        + "; measured by " + m.source() + " at "
        + m.measuredAt() + "); moving to underloaded " + destinationNames;
  }
}
