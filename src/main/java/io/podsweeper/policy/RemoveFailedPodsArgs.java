package io.podsweeper.policy;

import java.time.Duration;
import java.util.Set;

/**
 * RemoveFailedPods: Failed pods at least {@code minPodLifetime} old (from creation), optionally only with given
 * reasons (free text: container waiting/terminated reasons and the pod's reason) or exit codes.
 */
public record RemoveFailedPodsArgs(
    NamespaceFilter namespaces,
    LabelSelector labelSelector,
    Set<String> excludeOwnerKinds,
    Duration minPodLifetime,
    Set<String> reasons,
    Set<Integer> exitCodes,
    boolean includingInitContainers)
    implements StrategyArgs {
  public static final Duration DEFAULT_MIN_POD_LIFETIME = Duration.ofSeconds(3600);

  public RemoveFailedPodsArgs {
    excludeOwnerKinds = Set.copyOf(excludeOwnerKinds);
    reasons = Set.copyOf(reasons);
    exitCodes = Set.copyOf(exitCodes);
  }

  @Override
  public String strategyName() {
    return "RemoveFailedPods";
  }
}
