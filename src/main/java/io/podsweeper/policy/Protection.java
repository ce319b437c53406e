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
  PodsWithResourceClaims;

  /** On unless listed in {@code podProtections.defaultDisabled}. */
  public static final Set<Protection> DEFAULT_ENABLED = Set.of(PodsWithLocalStorage, DaemonSetPods, SystemCriticalPods, FailedBarePods);
  /** Off unless listed in {@code podProtections.extraEnabled}. */
  public static final Set<Protection> EXTRA = Set.of(PodsWithPVC, PodsWithoutPDB, PodsWithResourceClaims);

  public static Optional<Protection> parse(String name) {
    return Arrays.stream(values()).filter(p -> p.name().equals(name)).findFirst();
  }
}
