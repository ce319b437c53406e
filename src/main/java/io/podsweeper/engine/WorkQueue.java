package io.podsweeper.engine;

import io.podsweeper.removal.Backoff;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * A keyed work queue, as client-go's: a key waits at most once (adding it again changes nothing), may be added after a
 * delay (the earliest wins; cancelled when its object goes), or rate-limited with per-key exponential backoff until
 * {@link #forget}; a worker holds the key it took until {@link #done}, and a key added meanwhile waits until then, so
 * never two workers have one key. Time is a nanosecond ticker; {@link #poll} takes without waiting, for tests.
 */
final class WorkQueue {
  private record Delayed(long at, String key) {}

  private final LongSupplier ticker;
  private final Backoff backoff;
  private final Deque<String> ready = new ArrayDeque<>();
  private final Set<String> queued = new HashSet<>();
  private final Set<String> processing = new HashSet<>();
  /** Added while a worker held them: queued again when it is done. */
  private final Set<String> dirty = new HashSet<>();
  /** When each delayed key is due, by key, and the same ordered by time. */
  private final Map<String, Long> waiting = new HashMap<>();
  private final TreeSet<Delayed> delayed = new TreeSet<>(Comparator.comparingLong(Delayed::at).thenComparing(Delayed::key));
  private boolean shutDown;

  WorkQueue(LongSupplier ticker, Backoff backoff) {
    this.ticker = ticker;
    this.backoff = backoff;
  }

  synchronized void add(String key) {
    if (shutDown) {
      return;
    }
    if (processing.contains(key)) {
      dirty.add(key);
    } else if (queued.add(key)) {
      ready.addLast(key);
      notifyAll();
    }
  }

  /** Adds {@code key} once {@code delay} has passed, unless it is due earlier already. */
  synchronized void addAfter(String key, Duration delay) {
    if (delay.isNegative() || delay.isZero()) {
      add(key);
      return;
    }
    long at = ticker.getAsLong() + delay.toNanos();
    Long before = waiting.get(key);
    if (before != null && before <= at) {
      return;
    }
    if (before != null) {
      delayed.remove(new Delayed(before, key));
    }
    waiting.put(key, at);
    delayed.add(new Delayed(at, key));
    notifyAll();
  }

  /** Adds {@code key} after its next backoff: 5 s, doubling with each failure, until {@link #forget}. */
  synchronized Duration addRateLimited(String key) {
    Duration delay = backoff.next(key);
    addAfter(key, delay);
    return delay;
  }

  /** {@code key} succeeded, or its object went: its backoff starts over. */
  void forget(String key) {
    backoff.forget(key);
  }

  /** Drops a delayed add of {@code key} (its object went, or no longer needs one). */
  synchronized void cancel(String key) {
    Long at = waiting.remove(key);
    if (at != null) {
      delayed.remove(new Delayed(at, key));
    }
  }

  /** Takes the next key that is due, waiting for one; null once shut down. */
  synchronized String take() throws InterruptedException {
    while (true) {
      String key = poll();
      if (key != null || shutDown) {
        return key;
      }
      if (delayed.isEmpty()) {
        wait();
      } else {
        long nanos = delayed.first().at() - ticker.getAsLong();
        wait(Math.max(1, nanos / 1_000_000), 0);
      }
    }
  }

  /** The next key that is due, without waiting; null if none. The worker holds it until {@link #done}. */
  synchronized String poll() {
    for (long now = ticker.getAsLong(); !delayed.isEmpty() && delayed.first().at() <= now; ) {
      Delayed due = delayed.pollFirst();
      waiting.remove(due.key());
      add(due.key());
    }
    String key = ready.pollFirst();
    if (key != null) {
      queued.remove(key);
      processing.add(key);
    }
    return key;
  }

  /** The worker is done with {@code key}: added meanwhile, it waits again now. */
  synchronized void done(String key) {
    processing.remove(key);
    if (dirty.remove(key)) {
      add(key);
    }
  }

  /** Keys due now and waiting for a worker. */
  synchronized int ready() {
    return queued.size();
  }

  /** Keys added with a delay, not due yet. */
  synchronized int delayed() {
    return waiting.size();
  }

  synchronized void shutDown() {
    shutDown = true;
    notifyAll();
  }
}
