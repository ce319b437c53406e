package io.podsweeper.removal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.podsweeper.strategy.PolicyEvaluator;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Per-key exponential backoff after a refusal or an error: 5 s doubling to 5 min, as {@code explain} tells operators.
 * The work queue's rate-limited add and a PodMigrationJob's eviction read the same one, so a pod backs off once
 * whichever way its removal goes. An entry is forgotten once the removal happens, the pod goes, or twice the longest
 * delay has passed.
 */
public final class Backoff {
  static final Duration FIRST = PolicyEvaluator.REFUSAL_FIRST_BACKOFF;
  static final Duration MAX = PolicyEvaluator.REFUSAL_MAX_BACKOFF;

  private record Entry(int attempts, Instant retryAt) {}

  private final Clock clock;
  private final Cache<String, Entry> entries;

  /** @param ticker nanoseconds, for the entries' expiry */
  public Backoff(Clock clock, LongSupplier ticker) {
    this.clock = clock;
    this.entries = Caffeine.newBuilder().expireAfterWrite(MAX.multipliedBy(2)).ticker(ticker::getAsLong).build();
  }

  /** One failure more for {@code key}: how long until it is tried again. */
  public Duration next(String key) {
    Entry previous = entries.getIfPresent(key);
    int attempts = previous == null ? 1 : previous.attempts() + 1;
    Duration delay = FIRST.multipliedBy(1L << Math.min(attempts - 1, 10));
    if (delay.compareTo(MAX) > 0) {
      delay = MAX;
    }
    entries.put(key, new Entry(attempts, clock.instant().plus(delay)));
    return delay;
  }

  /** When {@code key} may be tried again, if that is still ahead. */
  public Optional<Instant> until(String key) {
    Entry entry = entries.getIfPresent(key);
    return entry == null || !entry.retryAt().isAfter(clock.instant()) ? Optional.empty() : Optional.of(entry.retryAt());
  }

  public void forget(String key) {
    entries.invalidate(key);
  }
}
