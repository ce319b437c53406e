package io.podsweeper.removal;

import io.podsweeper.policy.Limits;
import io.podsweeper.safety.TokenBucket;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * How fast removals go, by two token buckets at the rate in force and a few request slots. On the scheduler's one
 * worker, a removal that took its place in the limits waits for its turn (a token of the admissions' bucket), so the
 * next takes its place no sooner and the limits and the guard count in step with the rate; then for a request slot.
 * On the sender, after the guard's write-ahead and right before its request, it waits for a token of the sends'
 * bucket, so requests held up together by a slow write do not go out back to back. Each bucket gives the rate, so a
 * write slower than the rate's interval costs no second token of the same bucket (one bucket, spent twice, halved the
 * rate whenever a write took longer than the interval: 56 removals a second at perSecond 100). A wait gives up the
 * moment its removal can no longer go (pause, step-down, reload, shutdown), and the rate in force is read on every
 * try, so a reload that raises it frees a waiting removal at once. Time is injected: the buckets read a nanosecond
 * ticker and waiting goes through {@link Waits}, so tests drive both without threads or sleeps.
 */
final class Pacing {
  /**
   * Requests in flight at once, each still paced by the sends' bucket and checked just before it is sent: enough to
   * reach 100 removals a second against an API server taking 100 ms to answer (docs/benchmarks.md, removal rate).
   */
  static final int MAX_IN_FLIGHT = 16;
  /** How often a waiting removal looks again whether it may still go (the lease also expires without an event). */
  static final long WAIT_SLICE_MILLIS = 50;

  /** Where a removal waits: until {@code ready}, woken, or {@code millis} have passed. */
  interface Waits {
    void await(BooleanSupplier ready, long millis) throws InterruptedException;

    void wake();

    /** Waiting on a monitor: {@link #wake} ends every wait at once. */
    static Waits onMonitor() {
      Object monitor = new Object();
      return new Waits() {
        @Override
        public void await(BooleanSupplier ready, long millis) throws InterruptedException {
          synchronized (monitor) {
            if (!ready.getAsBoolean()) {
              monitor.wait(millis);
            }
          }
        }

        @Override
        public void wake() {
          synchronized (monitor) {
            monitor.notifyAll();
          }
        }
      };
    }
  }

  private final TokenBucket admissions;
  private final TokenBucket sends;
  private final LongSupplier ticker;
  private final Waits waits;
  private final Semaphore slots = new Semaphore(MAX_IN_FLIGHT);

  Pacing(Limits limits, LongSupplier ticker, Waits waits) {
    this.admissions = new TokenBucket(limits.perSecond(), limits.burst(), ticker);
    this.sends = new TokenBucket(limits.perSecond(), limits.burst(), ticker);
    this.ticker = ticker;
    this.waits = waits;
  }

  /** The rate of a reloaded policy, keeping the tokens already spent (a fresh bucket would be a way past the rate). */
  void setRate(Limits limits) {
    admissions.setRate(limits.perSecond(), limits.burst());
    sends.setRate(limits.perSecond(), limits.burst());
    waits.wake();
  }

  /** Waits for a removal's turn to take its place; false, with none taken, as soon as it can no longer go. */
  boolean awaitTurn(BooleanSupplier stillGoes) throws InterruptedException {
    return await(admissions, stillGoes);
  }

  /** Waits for a request's turn to be sent; false, with none taken, as soon as its removal can no longer go. */
  boolean awaitSend(BooleanSupplier stillGoes) throws InterruptedException {
    return await(sends, stillGoes);
  }

  private boolean await(TokenBucket bucket, BooleanSupplier stillGoes) throws InterruptedException {
    for (Duration wait = bucket.tryTake(); !wait.isZero(); wait = bucket.tryTake()) {
      if (!stillGoes.getAsBoolean()) {
        return false;
      }
      waits.await(() -> false, Math.max(1, Math.min(wait.toMillis(), WAIT_SLICE_MILLIS)));
    }
    return true;
  }

  /** A request's turn to be sent if there is one now, without waiting (a PodMigrationJob's eviction). */
  boolean trySend() {
    return sends.tryTake().isZero();
  }

  /** Waits for a request slot; false, with none taken, as soon as the removal can no longer go. */
  boolean awaitSlot(BooleanSupplier stillGoes) throws InterruptedException {
    while (!slots.tryAcquire()) {
      if (!stillGoes.getAsBoolean()) {
        return false;
      }
      waits.await(() -> slots.availablePermits() > 0, WAIT_SLICE_MILLIS);
    }
    if (!stillGoes.getAsBoolean()) {
      releaseSlot();
      return false;
    }
    return true;
  }

  void releaseSlot() {
    slots.release();
    waits.wake();
  }

  /** The ticker now, in nanoseconds. */
  long now() {
    return ticker.getAsLong();
  }

  /** Something a waiting removal depends on changed (leadership, policy, the kill switch): let it look again now. */
  void wake() {
    waits.wake();
  }
}
