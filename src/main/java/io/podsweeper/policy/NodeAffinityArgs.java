package io.podsweeper.policy;

import java.util.List;

/**
 * RemovePodsViolatingNodeAffinity: pods whose node no longer satisfies their required node affinity (or that
 * another node would satisfy better by preferred weight), for each listed {@code nodeAffinityType}.
 */
public record NodeAffinityArgs(NamespaceFilter namespaces, LabelSelector labelSelector, List<String> nodeAffinityType)
    implements StrategyArgs {
  public static final String NAME = "RemovePodsViolatingNodeAffinity";
  public static final String REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution";
  public static final String PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution";

  public NodeAffinityArgs {
    nodeAffinityType = List.copyOf(nodeAffinityType);
  }

  @Override
  public String strategyName() {
    return NAME;
  }
}
