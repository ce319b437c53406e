package io.podsweeper.policy;

import java.util.List;

/**
 * RemovePodsViolatingNodeTaints: pods on a node with a NoSchedule or NoExecute taint (PreferNoSchedule too if asked)
 * they do not tolerate. Taint entries are {@code key} or {@code key=value}; only one of the two lists may be set.
 */
public record NodeTaintsArgs(
    NamespaceFilter namespaces,
    LabelSelector labelSelector,
    boolean includePreferNoSchedule,
    List<String> excludedTaints,
    List<String> includedTaints)
    implements StrategyArgs {
  public static final String NAME = "RemovePodsViolatingNodeTaints";

  public NodeTaintsArgs {
    excludedTaints = List.copyOf(excludedTaints);
    includedTaints = List.copyOf(includedTaints);
  }

  @Override
  public String strategyName() {
    return NAME;
  }
}
