package io.podsweeper.policy;

import java.util.Set;

/**
 * RemovePodsViolatingTopologySpreadConstraint: evicts the fewest pods that bring the pods' own topology spread
 * constraints back within their maxSkew.
 *
 * @param namespaces the namespaces whose constraints are balanced
 * @param labelSelector which pods may be evicted; the domains are counted over every pod a constraint selects
 * @param constraints which constraints to balance, by {@code whenUnsatisfiable}: {@link #HARD} and/or {@link #SOFT}
 * @param topologyBalanceNodeFit evict only pods that fit a node of a domain below the average
 */
public record TopologySpreadArgs(NamespaceFilter namespaces, LabelSelector labelSelector, Set<String> constraints,
    boolean topologyBalanceNodeFit) implements StrategyArgs {
  public static final String NAME = "RemovePodsViolatingTopologySpreadConstraint";
  public static final String HARD = "DoNotSchedule";
  public static final String SOFT = "ScheduleAnyway";

  public TopologySpreadArgs {
    constraints = Set.copyOf(constraints);
  }

  @Override
  public String strategyName() {
    return NAME;
  }
}
