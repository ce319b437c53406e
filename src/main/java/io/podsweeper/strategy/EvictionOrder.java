package io.podsweeper.strategy;

import io.podsweeper.cluster.PodRecord;
import java.util.Comparator;
import java.util.Map;

/**
 * The order in which upstream's node strategies give up a node's pods (its SortPodsBasedOnPriorityLowToHigh): lowest
 * priority first (pods without one before all others), then BestEffort, Burstable, Guaranteed; then by key, so a
 * pass decides the same way every time.
 */
final class EvictionOrder {
  private static final Map<String, Integer> QOS_ORDER = Map.of("BestEffort", 0, "Burstable", 1, "Guaranteed", 2);

  private EvictionOrder() {}

  static Comparator<PodRecord> lowestPriorityFirst() {
    return lowestPriorityFirst((a, b) -> 0);
  }

  /** As {@link #lowestPriorityFirst()}, with {@code within} (e.g. largest measured usage first) before the key. */
  static Comparator<PodRecord> lowestPriorityFirst(Comparator<PodRecord> within) {
    return Comparator.<PodRecord>comparingInt(p -> p.priority().isPresent() ? 1 : 0)
        .thenComparingInt(p -> p.priority().orElse(0))
        .thenComparingInt(p -> QOS_ORDER.getOrDefault(p.scheduling().qosClass(), 1))
        .thenComparing(within)
        .thenComparing(PodRecord::key);
  }
}
