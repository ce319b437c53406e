package io.podsweeper.policy;

import java.util.Set;

/** RemovePodsHavingTooManyRestarts: pods whose containers restarted at least {@code threshold} times in all. */
public record TooManyRestartsArgs(
    NamespaceFilter namespaces, LabelSelector labelSelector, int threshold, boolean includingInitContainers, Set<String> states)
    implements StrategyArgs {
  public TooManyRestartsArgs {
    states = Set.copyOf(states);
  }

  @Override
  public String strategyName() {
    return "RemovePodsHavingTooManyRestarts";
  }
}
