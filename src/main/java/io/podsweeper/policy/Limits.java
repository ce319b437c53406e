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
 * @param burst how many removal requests the rate lets through at once (Koordinator's {@code evictBurst}); empty: one
 *     second's worth, at least one
 */
public record Limits(
    OptionalInt maxPerNode,
    OptionalInt maxPerNamespace,
    OptionalInt maxTotal,
    double perSecond,
    OptionalInt maxInFlightPerOwner,
    OptionalInt maxUnavailablePerOwner,
    OptionalInt burst) {
  public static final double DEFAULT_PER_SECOND = 10.0;
  /**
   * The rates a policy may set: below one removal per 100 s a waiting removal looks stuck (and 1e-320 would be a
   * wait of centuries); above 1000/s no API server keeps up and the guard is the only brake.
   */
  public static final double MIN_PER_SECOND = 0.01;
  public static final double MAX_PER_SECOND = 1000;
  public static final Limits DEFAULTS = new Limits(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(), DEFAULT_PER_SECOND,
      OptionalInt.empty(), OptionalInt.empty());

  /** Without a burst of its own: one second's worth. */
  public Limits(OptionalInt maxPerNode, OptionalInt maxPerNamespace, OptionalInt maxTotal, double perSecond,
      OptionalInt maxInFlightPerOwner, OptionalInt maxUnavailablePerOwner) {
    this(maxPerNode, maxPerNamespace, maxTotal, perSecond, maxInFlightPerOwner, maxUnavailablePerOwner, OptionalInt.empty());
  }

  /** The three upstream caps and a rate, without per-workload throttles. */
  public Limits(OptionalInt maxPerNode, OptionalInt maxPerNamespace, OptionalInt maxTotal, double perSecond) {
    this(maxPerNode, maxPerNamespace, maxTotal, perSecond, OptionalInt.empty(), OptionalInt.empty());
  }
}
