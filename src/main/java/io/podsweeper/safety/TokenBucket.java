package io.podsweeper.safety;

import java.time.Duration;
import java.util.OptionalInt;

/**
 * A token bucket for removal requests: a steady {@code perSecond} rate with a burst of one second's worth, or as set. Neither
 * Caffeine nor the Kubernetes client offers one; the client's own QPS limit guards the API server, this one guards
 * the workloads.
 */
public final class TokenBucket {
  private double perSecond;
  private double capacity;
  private final java.util.function.LongSupplier nanoClock;
  private double tokens;
  private long last;

  public TokenBucket(double perSecond, java.util.function.LongSupplier nanoClock) {
    this(perSecond, OptionalInt.empty(), nanoClock);
  }

  /** With {@code burst} tokens at most (empty: one second's worth). */
  public TokenBucket(double perSecond, OptionalInt burst, java.util.function.LongSupplier nanoClock) {
    this.perSecond = perSecond;
    this.capacity = burst(perSecond, burst);
    this.nanoClock = nanoClock;
    this.tokens = capacity;
    this.last = nanoClock.getAsLong();
  }

  public TokenBucket(double perSecond) {
    this(perSecond, System::nanoTime);
  }

  public TokenBucket(double perSecond, OptionalInt burst) {
    this(perSecond, burst, System::nanoTime);
  }

  /** Takes a token if there is one; otherwise says how long until there will be, and takes nothing. */
  public synchronized Duration tryTake() {
    refill(nanoClock.getAsLong());
    if (tokens >= 1.0) {
      tokens -= 1.0;
      return Duration.ZERO;
    }
    return Duration.ofNanos((long) Math.ceil((1.0 - tokens) / perSecond * 1e9));
  }

  /**
   * A new rate from now on, keeping the tokens already spent: a fresh bucket would hand out a full burst at every
   * reload, and an edited policy would be a way past the rate. A raised rate fills the bucket faster at once.
   */
  public synchronized void setRate(double newPerSecond, OptionalInt newBurst) {
    refill(nanoClock.getAsLong());
    perSecond = newPerSecond;
    capacity = burst(newPerSecond, newBurst);
    tokens = Math.min(tokens, capacity);
  }

  /**
   * The burst asked for; else one second's worth, and at least one token: a rate below 1/s still lets one request
   * through.
   */
  private static double burst(double perSecond, OptionalInt burst) {
    return burst.isPresent() ? Math.max(1, burst.getAsInt()) : Math.max(1.0, perSecond);
  }

  private void refill(long now) {
    tokens = Math.min(capacity, tokens + (now - last) / 1e9 * perSecond);
    last = now;
  }
}
