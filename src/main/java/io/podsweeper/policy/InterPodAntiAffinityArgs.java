package io.podsweeper.policy;

/** RemovePodsViolatingInterPodAntiAffinity: pods sharing a node with a pod their required anti-affinity excludes. */
public record InterPodAntiAffinityArgs(NamespaceFilter namespaces, LabelSelector labelSelector) implements StrategyArgs {
  public static final String NAME = "RemovePodsViolatingInterPodAntiAffinity";

  @Override
  public String strategyName() {
    return NAME;
  }
}
