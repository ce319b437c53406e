package io.podsweeper.policy;

import java.util.OptionalInt;

/**
 * Caps on removals within one window (each full pass starts one; removals triggered by events or deadlines count
 * toward the window they fall in), a steady rate limit, and per-workload throttles in the spirit of Koordinator's
 * MigrationController.
 *
 * @param maxInFlightPerOwner evictions of one owner's pods still in progress (evictions in background) at once
 * @param maxUnavailablePerOwner an eviction may not leave more than this many of one owner's pods unavailable
 *     (not Running and Ready, or terminating)
 */
public record Limits(
    OptionalInt maxPerNode,
    OptionalInt maxPerNamespace,
    OptionalInt maxTotal,
    double perSecond,
    OptionalInt maxInFlightPerOwner,
    OptionalInt maxUnavailablePerOwner) {
  public static final double DEFAULT_PER_SECOND = 10.0;
  public static final Limits DEFAULTS = new Limits(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(), DEFAULT_PER_SECOND,
      OptionalInt.empty(), OptionalInt.empty());

  /** The three upstream caps and a rate, without per-workload throttles. */
  public Limits(OptionalInt maxPerNode, OptionalInt maxPerNamespace, OptionalInt maxTotal, double perSecond) {
    this(maxPerNode, maxPerNamespace, maxTotal, perSecond, OptionalInt.empty(), OptionalInt.empty());
  }
}
