package io.podsweeper.policy;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The evictor's filters, applied to every strategy of a profile: the upstream DefaultEvictor's arguments, resolved
 * (deprecated booleans folded into {@link #protections}).
 *
 * @param upstreamBarePodRule upstream's rule for pods without an owner: protected, except Failed ones when the
 *     FailedBarePods protection is off. Podsweeper's own rules do not apply it: theirs protects running bare pods
 *     only, finished ones being garbage ({@link RuleProtection#BarePods}).
 * @param priorityThreshold pods with priority at or above it are protected (only while SystemCriticalPods is on)
 * @param priorityThresholdName a PriorityClass whose value is the threshold, resolved against the cluster
 * @param nodeSelector limits the nodes nodeFit may consider
 * @param minReplicas above 1: a pod whose single owner has fewer pods than this is protected
 * @param minPodAge pods younger than this since {@code status.startTime} (or without one) are protected
 */
public record EvictorArgs(
    Set<Protection> protections,
    boolean upstreamBarePodRule,
    List<String> protectedStorageClasses,
    OptionalInt priorityThreshold,
    Optional<String> priorityThresholdName,
    boolean nodeFit,
    LabelSelector nodeSelector,
    LabelSelector labelSelector,
    LabelSelector namespaceLabelSelector,
    int minReplicas,
    Optional<Duration> minPodAge,
    NoEvictionPolicy noEvictionPolicy) {

  /** Upstream's {@code noEvictionPolicy}: what the prefer-no-eviction annotation means. */
  public enum NoEvictionPolicy {
    /** Unset: the annotation only orders candidates. */
    Unset,
    Preferred,
    /** Annotated pods are never evictable. */
    Mandatory
  }

  /** The system-cluster-critical priority: upstream's default threshold. */
  public static final int SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

  /** The DefaultEvictor with no arguments. */
  public static final EvictorArgs UPSTREAM_DEFAULT = new EvictorArgs(
      Protection.DEFAULT_ENABLED, true, List.of(), OptionalInt.empty(), Optional.empty(), false, LabelSelector.EVERYTHING,
      LabelSelector.EVERYTHING, LabelSelector.EVERYTHING, 0, Optional.empty(), NoEvictionPolicy.Unset);

  /**
   * The evictor of Podsweeper's own rules: only the protections that hold for every strategy (annotations,
   * terminating, mirror and static pods). The others are each rule's ({@link Rule#protections}), so that one rule can
   * opt in to evicting what the others leave. Pods with local storage are not protected: cleaning up is the rules' job.
   */
  public static final EvictorArgs NONE = new EvictorArgs(
      Set.of(), false, List.of(), OptionalInt.empty(), Optional.empty(), false, LabelSelector.EVERYTHING,
      LabelSelector.EVERYTHING, LabelSelector.EVERYTHING, 0, Optional.empty(), NoEvictionPolicy.Unset);

  public EvictorArgs {
    protections = Set.copyOf(protections);
    protectedStorageClasses = List.copyOf(protectedStorageClasses);
  }
}
