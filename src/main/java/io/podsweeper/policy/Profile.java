package io.podsweeper.policy;

import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A set of strategies sharing one evictor, as in the upstream descheduler. Podsweeper's own {@code rules} form a
 * profile of their own.
 *
 * @param deschedule strategies run first, in order, for every profile
 * @param balance strategies run after every profile's deschedule strategies, in order
 * @param readyNodesOnly upstream semantics: only pods bound to a Ready node matching {@code nodeSelector} are
 *     considered. Podsweeper's own rules see every pod, unscheduled ones included.
 * @param maxRemovalsPerHourPerNamespace the cap a ClusterPodCleanupPolicy puts on a namespaced policy: removals by
 *     capped profiles in one namespace over the last hour; empty for the profiles of policy files
 */
public record Profile(
    String name,
    EvictorArgs evictor,
    List<StrategyArgs> deschedule,
    List<StrategyArgs> balance,
    boolean readyNodesOnly,
    Optional<LabelSelector> nodeSelector,
    OptionalInt maxRemovalsPerHourPerNamespace) {
  public static final String NATIVE_RULES = "rules";

  /** A profile of a policy file: no hourly cap. */
  public Profile(String name, EvictorArgs evictor, List<StrategyArgs> deschedule, List<StrategyArgs> balance, boolean readyNodesOnly,
      Optional<LabelSelector> nodeSelector) {
    this(name, evictor, deschedule, balance, readyNodesOnly, nodeSelector, OptionalInt.empty());
  }

  public Profile {
    deschedule = List.copyOf(deschedule);
    balance = List.copyOf(balance);
  }
}
