package io.podsweeper.policy;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The one internal model every policy format is read into; nothing downstream knows which file format a rule
 * came from.
 *
 * @param source where the policy came from (a file name), for messages and the audit trail
 * @param fullPassInterval how often every pod is evaluated again, as a safety net behind events and deadlines;
 *     also the window of the removal limits (upstream's descheduling interval)
 * @param gracePeriodSeconds passed with every removal; empty: each pod's own
 * @param guard the blast-radius guard of the live service (every format gets the defaults unless it sets its own)
 * @param evictionRequests which evictions go as EvictionRequests where the cluster serves that API
 * @param migrationJobs evictions become Koordinator PodMigrationJobs with these defaults (and hand-made ones are
 *     honoured); empty: evictions are sent directly
 * @param finishedPodBudgets the policy file's budget for finished pods (at most one, first), then the caps the accepted
 *     PodCleanupPolicies put on their own namespaces (at most one per namespace)
 * @param warnBefore how long before a pod-by-pod rule removes a pod a Normal Event on the pod says when and by which
 *     rule ({@code warnBefore}, README "Warnings before a removal"); zero: no warnings
 */
public record Policy(
    String source,
    boolean dryRun,
    Limits limits,
    Duration fullPassInterval,
    OptionalLong gracePeriodSeconds,
    Guard guard,
    List<Profile> profiles,
    EvictionRequestMode evictionRequests,
    Optional<MigrationJobs> migrationJobs,
    List<FinishedPodBudget> finishedPodBudgets,
    Duration warnBefore) {
  public static final Duration DEFAULT_FULL_PASS_INTERVAL = Duration.ofMinutes(5);
  /** A warning further ahead would mostly be about pods that will have changed by then (as the forecast's horizon). */
  public static final Duration MAX_WARN_BEFORE = Duration.ofDays(30);

  /** The full pass interval at {@code field} of {@code node}, or the default; at least a second, as it is the limits' window too. */
  static Duration fullPassInterval(ConfigNode node, String field) {
    Duration interval = node.optionalDuration(field).orElse(DEFAULT_FULL_PASS_INTERVAL);
    if (interval.compareTo(Duration.ofSeconds(1)) < 0) {
      throw node.child(field).error("must be at least 1s: it is also the window the limits count in, got " + Durations.format(interval));
    }
    return interval;
  }

  public Policy {
    if (warnBefore.isNegative() || warnBefore.compareTo(MAX_WARN_BEFORE) > 0) {
      throw new IllegalArgumentException("warnBefore out of range: " + warnBefore);
    }
    profiles = List.copyOf(profiles);
    finishedPodBudgets = List.copyOf(finishedPodBudgets);
  }

  /** A policy without a budget for finished pods or warnings: what every format but the native one reads. */
  public Policy(String source, boolean dryRun, Limits limits, Duration fullPassInterval, OptionalLong gracePeriodSeconds, Guard guard,
      List<Profile> profiles, EvictionRequestMode evictionRequests, Optional<MigrationJobs> migrationJobs) {
    this(source, dryRun, limits, fullPassInterval, gracePeriodSeconds, guard, profiles, evictionRequests, migrationJobs, List.of(),
        Duration.ZERO);
  }

  /** A policy whose evictions go as EvictionRequests only for the pods that opt in, without PodMigrationJobs. */
  public Policy(String source, boolean dryRun, Limits limits, Duration fullPassInterval, OptionalLong gracePeriodSeconds, Guard guard,
      List<Profile> profiles) {
    this(source, dryRun, limits, fullPassInterval, gracePeriodSeconds, guard, profiles, EvictionRequestMode.OptIn, Optional.empty());
  }

  /**
   * A policy that removes nothing (no profiles, dry-run): what a replica runs while its policy file is invalid at
   * start, until a valid one arrives.
   */
  public static Policy removingNothing(String source) {
    return new Policy(source, true, Limits.DEFAULTS, DEFAULT_FULL_PASS_INTERVAL, OptionalLong.empty(), Guard.DEFAULTS, List.of());
  }

  /** {@code warnBefore} at {@code field} of {@code node}: a positive duration up to 30d, or none. */
  static Duration warnBefore(ConfigNode node, String field) {
    Duration lead = node.optionalDuration(field).orElse(Duration.ZERO);
    if (lead.compareTo(MAX_WARN_BEFORE) > 0) {
      throw node.child(field).error("must be at most " + Durations.format(MAX_WARN_BEFORE) + ", got " + Durations.format(lead));
    }
    return lead;
  }

  public Policy withDryRun(boolean value) {
    return new Policy(source, value, limits, fullPassInterval, gracePeriodSeconds, guard, profiles, evictionRequests, migrationJobs,
        finishedPodBudgets, warnBefore);
  }
}
