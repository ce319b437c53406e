package io.podsweeper.policy;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * MakeRoom, Podsweeper's own balance plugin: for each pod the scheduler could not place, a plan of the fewest and least
 * disruptive moves (evictions whose replacements fit elsewhere) after which it fits a node; and, with
 * {@link #freeNodes}, plans that empty under-used nodes whose every pod fits elsewhere. See docs/configuration.md.
 *
 * @param pendingFor a pod is made room for once its PodScheduled condition has said Unschedulable this long
 * @param namespaces the namespaces whose pending pods are made room for
 * @param labelSelector which pending pods are made room for
 * @param maxMovesPerPlan at most this many evictions in one plan, chained moves included
 * @param maxPlans at most this many plans per pass (pending pods first, then nodes to free)
 * @param freeNodes also plan to empty under-used nodes; empty: only pending pods are made room for
 * @param planTimeout a plan carried out in the live service is abandoned ({@code timed-out}) if not complete this long
 *     after it started (a node to empty: its pods not all gone and replaced elsewhere)
 */
public record MakeRoomArgs(Duration pendingFor, NamespaceFilter namespaces, LabelSelector labelSelector, int maxMovesPerPlan,
    int maxPlans, Optional<FreeNodes> freeNodes, Duration planTimeout) implements StrategyArgs {
  public static final String NAME = "MakeRoom";
  public static final Duration DEFAULT_PENDING_FOR = Duration.ofMinutes(5);
  public static final int DEFAULT_MAX_MOVES_PER_PLAN = 3;
  public static final int MAX_MOVES_PER_PLAN = 10;
  public static final int DEFAULT_MAX_PLANS = 5;
  public static final int MAX_PLANS = 100;
  public static final Duration DEFAULT_PLAN_TIMEOUT = Duration.ofMinutes(10);

  /**
   * Which nodes to empty: those whose pods' requests are at or below every threshold (percent of allocatable), least
   * used first, at most {@code maxNodes} per pass, each within {@code maxMovesPerNode} evictions (chained moves included).
   * A node being emptied carries this service's NoSchedule taint, from the plan's start until {@code keepEmptyFor}
   * after its last pod left (for a scale-down to take it), or until the plan is abandoned.
   */
  public record FreeNodes(Map<String, Double> thresholds, int maxNodes, int maxMovesPerNode, Duration keepEmptyFor) {
    public static final int DEFAULT_MAX_NODES = 1;
    public static final int DEFAULT_MAX_MOVES_PER_NODE = 10;
    public static final int MAX_MOVES_PER_NODE = 50;
    /** Longer than the cluster autoscaler's default scale-down-unneeded-time (10m): it has time to take the node. */
    public static final Duration DEFAULT_KEEP_EMPTY_FOR = Duration.ofMinutes(15);
    public static final Duration MAX_KEEP_EMPTY_FOR = Duration.ofHours(24);

    public FreeNodes {
      thresholds = Map.copyOf(thresholds);
    }
  }

  @Override
  public String strategyName() {
    return NAME;
  }
}
