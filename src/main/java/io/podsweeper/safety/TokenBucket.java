package io.podsweeper.safety;

import java.time.Duration;

/**
 * A token bucket for removal requests: a steady {@code perSecond} rate with a burst of one second's worth. Neither
 * Caffeine nor the Kubernetes client offers one; the client's own QPS limit guards the API server, this one guards
 * the workloads.
 */
public final class TokenBucket {
  private final double perSecond;
  private final double capacity;
  private final java.util.function.LongSupplier nanoClock;
  private double tokens;
  private long last;

  public TokenBucket(double perSecond, java.util.function.LongSupplier nanoClock) {
    this.perSecond = perSecond;
    this.capacity = Math.max(1.0, perSecond);
    this.nanoClock = nanoClock;
    this.tokens = capacity;
    this.last = nanoClock.getAsLong();
  }

  public TokenBucket(double perSecond) {
    this(perSecond, System::nanoTime);
  }

  /** Takes a token if there is one; otherwise says how long until there will be, and takes nothing. */
  public synchronized Duration tryTake() {
    long now = nanoClock.getAsLong();
    tokens = Math.min(capacity, tokens + (now - last) / 1e9 * perSecond);
    last = now;
    if (tokens >= 1.0) {
      tokens -= 1.0;
      return Duration.ZERO;
    }
    return Duration.ofNanos((long) Math.ceil((1.0 - tokens) / perSecond * 1e9));
  }

  /** Blocks until a token is taken. */
  public void take() throws InterruptedException {
    for (Duration wait = tryTake(); !wait.isZero(); wait = tryTake()) {
      Thread.sleep(Math.max(1, wait.toMillis()));
    }
  }
}
