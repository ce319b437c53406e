package io.podsweeper.engine;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.removal.Rules;
import io.podsweeper.strategy.BudgetLedger;
import io.podsweeper.strategy.BudgetUsage;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.FinishedPodBudgets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The finished-pod budget in the live service (README "Finished-pod budget"): the policy's {@link BudgetLedger}, kept
 * current with every pod event, and its removals handed to {@link DueRemovals} as they come, so that each goes the one
 * removal path (dry-run, kill switch, blast-radius guard, limits, rate) and its final check asks the ledger again
 * ({@link #refusal}).
 *
 * <p>At most {@link #IN_FLIGHT} removals are handed on at once, each reserved in the ledger (it counts no more and is
 * not offered twice): enough to keep up with the rate, few enough that each next one is chosen on what is current. A
 * removal carried out stays reserved until the pod's deletion reaches the cache; one that did not go counts again, and
 * its namespace is passed over for {@link #HELD_RETRY} (its pod would be chosen at once, and held the same way), while
 * the other namespaces over a budget go on: a namespace held by a limit does not hold the others.
 * With nothing to hand on, it looks again when the next pod over a budget turns minRetention (a delayed add on its
 * queue), or at the next finished pod's event. A reload builds the ledger anew.
 *
 * <p>Its own thread takes the one key of its work queue; time is injected (a clock, a nanosecond ticker) and tests
 * call {@link #look} themselves.
 */
final class BudgetRemovals {
  private static final Logger LOG = LoggerFactory.getLogger(BudgetRemovals.class);
  static final int IN_FLIGHT = 32;
  static final Duration HELD_RETRY = Duration.ofSeconds(1);
  static final String LOOK = "finished-pod budget";
  private static final Duration LONGEST_WAIT = Duration.ofDays(1);

  /** Where a removal goes: {@link DueRemovals#add(Decision, long)}. */
  @FunctionalInterface
  interface Due {
    void add(Decision decision, long generation);
  }

  /** The ledger of a policy generation, or none when that policy sets no budget. */
  private record Held(Optional<BudgetLedger> ledger, long generation) {}

  private final PodSource cache;
  private final Clock clock;
  private final LongSupplier ticker;
  private final WorkQueue queue;
  private final Due due;
  private final BooleanSupplier active;
  private volatile Held held = new Held(Optional.empty(), 0);
  /** The removals handed on and not settled yet, by pod key. */
  private final Set<String> handed = new HashSet<>();
  /** Namespaces passed over until a ticker time: a removal there did not go. */
  private final Map<String, Long> heldBack = new HashMap<>();
  private final Thread worker = Sweeper.daemon(this::work, "sweeper-budget");

  /**
   * @param ticker nanoseconds, for the wait after a removal that did not go
   * @param active whether removals may be handed on (this replica leads, not stopping); {@link #wake} when it turns true
   */
  BudgetRemovals(PodSource cache, Clock clock, LongSupplier ticker, WorkQueue queue, Due due, BooleanSupplier active) {
    this.cache = cache;
    this.clock = clock;
    this.ticker = ticker;
    this.queue = queue;
    this.due = due;
    this.active = active;
  }

  void start() {
    worker.start();
  }

  /** The policy in force (at start, on a reload): the ledger over every cached pod, nothing handed on under it yet. */
  synchronized void rebuild(Rules rules) {
    held = new Held(rules.evaluator().budgetLedger(cache), rules.generation());
    handed.clear();
    wake();
  }

  synchronized void podChanged(PodRecord pod) {
    held.ledger().ifPresent(l -> {
      l.podChanged(pod);
      if (pod.terminated()) {
        queue.add(LOOK);
      }
    });
  }

  /** A pod that goes frees room: it never makes another removal necessary, so no look. */
  synchronized void podDeleted(PodRecord pod) {
    held.ledger().ifPresent(l -> l.podDeleted(pod.key()));
  }

  synchronized void namespaceChanged(String namespace) {
    held.ledger().ifPresent(l -> {
      l.namespaceChanged(namespace);
      queue.add(LOOK);
    });
  }

  /** Look now, in every namespace, even within {@link #HELD_RETRY} (a new limits window, a resume, leadership won). */
  synchronized void wake() {
    heldBack.clear();
    queue.add(LOOK);
  }

  /** What became of a removal handed on (told by {@link DueRemovals} for every decision it was given). */
  synchronized void settled(Decision decision, long generation, boolean removed) {
    if (!decision.strategy().equals(FinishedPodBudgets.STRATEGY) || generation != held.generation() || !handed.remove(decision.podKey())) {
      return;
    }
    if (!removed && held.ledger().map(l -> l.release(decision.podKey())).orElse(false)) {
      heldBack.put(decision.namespace(), ticker.getAsLong() + HELD_RETRY.toNanos());
    }
    queue.add(LOOK);
  }

  /** The final check's question: see {@link BudgetLedger#refusal(Decision, PodRecord, Instant)}. */
  Optional<String> refusal(Decision decision, PodRecord current) {
    return held.ledger().map(l -> l.refusal(decision, current, clock.instant()))
        .orElse(Optional.of("the policy in force sets no finished-pod budget"));
  }

  /** What the budgets hold now, for the metrics; empty when the policy sets none. */
  Optional<BudgetUsage> usage() {
    return held.ledger().map(l -> l.usage(clock.instant()));
  }

  /**
   * Hands on the budget's next removals, up to {@link #IN_FLIGHT} on their way, from the namespaces not held back; with
   * none to hand on, schedules a look for when the next pod over a budget is old enough, or a held namespace's turn.
   */
  synchronized void look() {
    Held h = held;
    if (h.ledger().isEmpty() || !active.getAsBoolean()) {
      return;
    }
    long ticks = ticker.getAsLong();
    heldBack.values().removeIf(until -> until <= ticks);
    BudgetLedger ledger = h.ledger().get();
    Instant now = clock.instant();
    while (handed.size() < IN_FLIGHT) {
      Optional<Decision> next = ledger.next(now, heldBack::containsKey);
      if (next.isEmpty()) {
        heldBack.values().stream().min(Long::compare).ifPresent(until -> queue.addAfter(LOOK, Duration.ofNanos(until - ticks)));
        ledger.wakeAt(now).ifPresent(at -> {
          Duration until = Duration.between(now, at);
          queue.addAfter(LOOK, until.compareTo(LONGEST_WAIT) > 0 ? LONGEST_WAIT : until);
        });
        return;
      }
      ledger.reserve(next.get().podKey());
      handed.add(next.get().podKey());
      due.add(next.get(), h.generation());
    }
  }

  private void work() {
    try {
      for (String key = queue.take(); key != null; key = queue.take()) {
        try {
          look();
        } catch (RuntimeException e) {
          LOG.error("the finished-pod budget's look failed; it looks again at the next finished pod", e);
        } finally {
          queue.done(key);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  void close() throws InterruptedException {
    queue.shutDown();
    worker.join(Duration.ofSeconds(5).toMillis());
  }
}
