package io.podsweeper.engine;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.removal.Rules;
import io.podsweeper.strategy.Verdict;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pods to evaluate, on a thread of their own (never an informer's): when they change, and again when their deadline
 * passes (a delayed add per pending deadline, cancelled when the pod goes or is no longer due). A pod due now is handed
 * on; a warning is raised for a lifetime written on it that does not parse.
 */
final class Evaluations {
  private static final Logger LOG = LoggerFactory.getLogger(Evaluations.class);

  private final PodSource cache;
  private final Supplier<Rules> rules;
  private final Clock clock;
  private final Metrics metrics;
  private final WorkQueue queue;
  private final LifetimeWarnings lifetimeWarnings;
  private final Consumer<String> due;
  private final Thread worker = Sweeper.daemon(this::work, "sweeper-evaluations");

  /** @param due told the key of each pod due now */
  Evaluations(PodSource cache, Supplier<Rules> rules, Clock clock, Metrics metrics, WorkQueue queue, Consumer<String> due) {
    this.cache = cache;
    this.rules = rules;
    this.clock = clock;
    this.metrics = metrics;
    this.queue = queue;
    this.lifetimeWarnings = new LifetimeWarnings(metrics);
    this.due = due;
  }

  void start() {
    worker.start();
  }

  /** Evaluates the pod under {@code key} soon (again). */
  void add(String key) {
    queue.add(key);
  }

  /** Every cached pod, soon. */
  void addAll() {
    cache.pods().forEach(p -> queue.add(p.key()));
  }

  /** The pod went: no deadline of its own any more. */
  void forget(PodRecord pod) {
    lifetimeWarnings.forget(pod);
    queue.cancel(pod.key());
  }

  void warnAboutLifetimes(LifetimeWarnings.Sink sink) {
    lifetimeWarnings.sendTo(sink);
  }

  /** Pods whose deadline is ahead, each evaluated again then. */
  int pendingDeadlines() {
    return queue.delayed();
  }

  private void work() {
    try {
      for (String key = queue.take(); key != null; key = queue.take()) {
        try {
          cache.pod(key).ifPresent(this::evaluate);
        } catch (RuntimeException e) {
          LOG.error("evaluating {} failed unexpectedly; it is evaluated again at the next pass", key, e);
        } finally {
          queue.done(key);
          metrics.pendingDeadlines.set(queue.delayed());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Due now: handed on; due later: looked at again then ("strictly older than": one millisecond after the deadline). */
  private void evaluate(PodRecord pod) {
    Rules in = rules.get();
    Optional<Verdict> verdict = in.evaluator().evaluate(pod, cache);
    lifetimeWarnings.check(pod, in.evaluator().invalidLifetimes(pod, cache));
    if (verdict.isEmpty() || verdict.get().isDue(clock.instant())) {
      queue.cancel(pod.key());
      verdict.ifPresent(v -> due.accept(pod.key()));
    } else {
      queue.addAfter(pod.key(), Duration.between(clock.instant(), verdict.get().dueAt()).plusMillis(1));
    }
  }

  void close() throws InterruptedException {
    queue.shutDown();
    worker.join(Duration.ofSeconds(5).toMillis());
  }
}
