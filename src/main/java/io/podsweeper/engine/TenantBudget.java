package io.podsweeper.engine;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The CPU time teams' PodCleanupPolicies may take on the evaluation thread, shared fairly by namespace. Each namespace
 * has a balance that fills at its share per interval (up to one share) and that its team rules spend; all team rules
 * together have one more, filling at {@link #TOTAL} per interval. Team rules run only while both are above zero, and
 * what one judging overspends is owed: it waits until both have filled again. So however costly one judging is, a
 * namespace takes at most its share over time, and all teams together at most {@link #TOTAL} plus one judging; its own
 * pods' team rules wait, the cluster's rules and every other namespace go on. A share is {@link #TOTAL} divided among
 * the namespaces that asked in the last interval, never less than a floor.
 */
final class TenantBudget {
  static final Duration INTERVAL = Duration.ofSeconds(1);
  /** What all team rules together may take of each interval on the evaluation thread: a quarter of it. */
  static final Duration TOTAL = Duration.ofMillis(250);
  /** The least share of a namespace, however many namespaces ask: enough for an ordinary team's rules. */
  static final Duration FLOOR = Duration.ofMillis(5);

  private final LongSupplier ticker;
  private long intervalStart;
  private long filledAt;
  /** Each namespace's balance in nanoseconds: a namespace not in it has a full share. */
  private final Map<String, Long> balance = new HashMap<>();
  private long total = TOTAL.toNanos();
  private final Set<String> asked = new HashSet<>();
  private int askedLastInterval = 1;

  /** @param ticker nanoseconds, for the intervals */
  TenantBudget(LongSupplier ticker) {
    this.ticker = ticker;
    this.intervalStart = ticker.getAsLong();
    this.filledAt = intervalStart;
  }

  /** How long {@code namespace}'s team rules must wait for its share; empty if they may run now. */
  synchronized Optional<Duration> waitFor(String namespace) {
    fill(ticker.getAsLong());
    asked.add(namespace);
    long own = balance.getOrDefault(namespace, share());
    if (own > 0 && total > 0) {
      return Optional.empty();
    }
    // Until both are above zero again, at the rates they fill.
    long ownWait = own > 0 ? 0 : (-own * INTERVAL.toNanos()) / share() + 1;
    long totalWait = total > 0 ? 0 : (-total * INTERVAL.toNanos()) / TOTAL.toNanos() + 1;
    return Optional.of(Duration.ofNanos(Math.max(ownWait, totalWait)));
  }

  /** {@code namespace}'s team rules took {@code nanos} of CPU time. */
  synchronized void spend(String namespace, long nanos) {
    balance.merge(namespace, share() - nanos, (was, fresh) -> was - nanos);
    total -= nanos;
  }

  /** Why {@code namespace}'s team rules wait, in figures. */
  synchronized String why(String namespace) {
    long own = balance.getOrDefault(namespace, share());
    return "its PodCleanupPolicies' judging owes " + Math.max(0, -own) / 1_000_000 + "ms of Podsweeper's evaluation thread (all teams' "
        + Math.max(0, -total) / 1_000_000 + "ms), their share is " + share() / 1_000_000 + "ms a second: their rules judge its pods again"
        + " once it is paid back (the cluster's rules and other namespaces are not held)";
  }

  /** Each namespace's share of an interval now, in nanoseconds. */
  synchronized long share() {
    return Math.max(FLOOR.toNanos(), TOTAL.toNanos() / askedLastInterval);
  }

  /** The balances filled for the time since they last were; the namespaces that asked counted per interval. */
  private void fill(long now) {
    if (now - intervalStart >= INTERVAL.toNanos()) {
      askedLastInterval = Math.max(1, asked.size());
      asked.clear();
      intervalStart = now - (now - intervalStart) % INTERVAL.toNanos();
    }
    long elapsed = now - filledAt;
    filledAt = now;
    long share = share();
    long ownFill = filled(share, elapsed);
    balance.replaceAll((ns, b) -> Math.min(share, b + ownFill));
    // A namespace back at a full share holds nothing worth remembering.
    balance.values().removeIf(b -> b >= share);
    total = Math.min(TOTAL.toNanos(), total + filled(TOTAL.toNanos(), elapsed));
  }

  /** What a balance filling at {@code perInterval} gains in {@code elapsed} nanoseconds (in floating point: no overflow). */
  private static long filled(long perInterval, long elapsed) {
    return (long) Math.min(Long.MAX_VALUE / 2.0, (double) perInterval * elapsed / INTERVAL.toNanos());
  }
}
