package io.podsweeper.policy;

import java.util.OptionalInt;

/**
 * Caps on removals within one pass (and, for removals triggered by events or deadlines, within the pass
 * interval that follows it), plus a steady rate limit.
 */
public record Limits(OptionalInt maxPerNode, OptionalInt maxPerNamespace, OptionalInt maxTotal, double perSecond) {
  public static final double DEFAULT_PER_SECOND = 10.0;
  public static final Limits DEFAULTS =
      new Limits(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(), DEFAULT_PER_SECOND);
}
