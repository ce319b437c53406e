package io.podsweeper.engine;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The CPU time teams' PodCleanupPolicies may take on the evaluation thread, shared fairly by namespace. Within each
 * interval a namespace whose team rules used up its share waits for the next interval for them: its own pods' team rules
 * only; the cluster's rules, and every other namespace, go on. A share is the interval's budget for all team rules
 * divided among the namespaces that used any in the last interval, never less than a floor.
 */
final class TenantBudget {
  static final Duration INTERVAL = Duration.ofSeconds(1);
  /** What all team rules together may take of each interval on the evaluation thread: a quarter of it. */
  static final Duration TOTAL = Duration.ofMillis(250);
  /** The least share of a namespace, however many namespaces ask: enough for an ordinary team's rules. */
  static final Duration FLOOR = Duration.ofMillis(5);

  private final LongSupplier ticker;
  private long intervalStart;
  private final Map<String, Long> spent = new HashMap<>();
  private int askedLastInterval = 1;

  /** @param ticker nanoseconds, for the intervals */
  TenantBudget(LongSupplier ticker) {
    this.ticker = ticker;
    this.intervalStart = ticker.getAsLong();
  }

  /** How long {@code namespace}'s team rules must wait for its share; empty if they may run now. */
  synchronized Optional<Duration> waitFor(String namespace) {
    long now = ticker.getAsLong();
    if (now - intervalStart >= INTERVAL.toNanos()) {
      askedLastInterval = Math.max(1, spent.size());
      spent.clear();
      intervalStart = now - (now - intervalStart) % INTERVAL.toNanos();
    }
    return spent.getOrDefault(namespace, 0L) < share() ? Optional.empty()
        : Optional.of(Duration.ofNanos(intervalStart + INTERVAL.toNanos() - now));
  }

  /** {@code namespace}'s team rules took {@code nanos} of CPU time. */
  synchronized void spend(String namespace, long nanos) {
    spent.merge(namespace, nanos, Long::sum);
  }

  /** Why {@code namespace}'s team rules wait, in figures. */
  synchronized String why(String namespace) {
    return "its PodCleanupPolicies took " + spent.getOrDefault(namespace, 0L) / 1_000_000 + "ms of Podsweeper's evaluation thread in this"
        + " second, their share is " + share() / 1_000_000 + "ms: their rules judge its pods again in the next second (the"
        + " cluster's rules and other namespaces are not held)";
  }

  /** Each namespace's share of an interval now, in nanoseconds. */
  synchronized long share() {
    return Math.max(FLOOR.toNanos(), TOTAL.toNanos() / askedLastInterval);
  }
}
