package io.podsweeper.policy;

import java.util.Arrays;
import java.util.Optional;
import java.util.Set;

/** The DefaultEvictor's pod protections, with upstream's names. */
public enum Protection {
  PodsWithLocalStorage,
  DaemonSetPods,
  SystemCriticalPods,
  FailedBarePods,
  PodsWithPVC,
  PodsWithoutPDB,
  PodsWithResourceClaims,
  /**
   * Koordinator's MigrationController filter (FilterPodWithMaxEvictionCost): a pod annotated
   * {@code scheduling.koordinator.sh/eviction-cost: "2147483647"} is never evicted. Not a DefaultEvictor protection:
   * on in a Koordinator configuration's MigrationController, and in Podsweeper's own format's {@code extraEnabled}.
   */
  PodsWithMaxEvictionCost,
  /**
   * Koordinator's MigrationController filter (filterExpectedReplicas, unless {@code skipCheckExpectedReplicas}): the
   * pods of a workload that expects a single replica are not migrated, nor those of an owner without a replica count
   * (a Job). Podsweeper does not read workloads: it counts the owner's pods that have not finished, which protects
   * at least what Koordinator does (a workload that expects more than it runs now is protected too). Like the one
   * above, on in a Koordinator configuration's MigrationController, and in Podsweeper's own format's {@code extraEnabled}.
   */
  PodsOfSingleReplicaWorkloads;

  /** On unless listed in {@code podProtections.defaultDisabled}. */
  public static final Set<Protection> DEFAULT_ENABLED = Set.of(PodsWithLocalStorage, DaemonSetPods, SystemCriticalPods, FailedBarePods);
  /** Off unless listed in {@code podProtections.extraEnabled}. */
  public static final Set<Protection> EXTRA = Set.of(PodsWithPVC, PodsWithoutPDB, PodsWithResourceClaims);
  /** Also allowed in {@code extraEnabled} of Podsweeper's own format (what {@code convert} writes for Koordinator). */
  public static final Set<Protection> PODSWEEPER_EXTRA =
      Set.of(PodsWithPVC, PodsWithoutPDB, PodsWithResourceClaims, PodsWithMaxEvictionCost, PodsOfSingleReplicaWorkloads);

  public static Optional<Protection> parse(String name) {
    return Arrays.stream(values()).filter(p -> p.name().equals(name)).findFirst();
  }
}
