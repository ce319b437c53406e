package io.podsweeper.policy;

/** A configured strategy of a profile: which one, and its arguments. */
public sealed interface StrategyArgs permits PodLifeTimeArgs, RemoveFailedPodsArgs, TooManyRestartsArgs, NodeTaintsArgs,
    NodeAffinityArgs, InterPodAntiAffinityArgs, RemoveDuplicatesArgs, NodeUtilizationArgs,
    TopologySpreadArgs, LowNodeLoadArgs, MakeRoomArgs {
  /** The strategy's upstream name, as it appears in metrics and decisions. */
  String strategyName();
}
