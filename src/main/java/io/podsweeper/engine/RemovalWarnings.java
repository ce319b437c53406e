package io.podsweeper.engine;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.Durations;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * Warnings before a removal (README "Warnings before a removal"): once a pod-by-pod rule's deadline is within the
 * policy's {@code warnBefore}, a Normal Event {@code PodSweeperRemovalScheduled} on the pod says when and by which rule
 * it will go — once per pod and deadline. A warned pod that is no longer to go then (protected, changed, its rule gone)
 * gets one {@code PodSweeperRemovalCanceled}. Only the leader warns, and remembers whom it warned: a new leader warns
 * again. Bounded under load: at most {@link #REMEMBERED} pods are remembered, and the Events go through the events'
 * own rate and queue (what does not fit is dropped and counted there).
 */
public final class RemovalWarnings {
  static final String SCHEDULED = "PodSweeperRemovalScheduled";
  static final String CANCELED = "PodSweeperRemovalCanceled";
  static final int REMEMBERED = 100_000;

  /** Where a warning goes: a Normal Event on the pod. */
  public interface Sink {
    Sink NONE = (pod, reason, message) -> {};

    void notice(PodRecord pod, String reason, String message);
  }

  /** What a pod was warned about: its uid and deadline, and the words used. */
  private record Warned(String uid, Instant dueAt, String rule) {}

  private final Metrics metrics;
  private final BooleanSupplier leading;
  private final Cache<String, Warned> warned = Caffeine.newBuilder().maximumSize(REMEMBERED).build();
  private volatile Sink sink = Sink.NONE;

  RemovalWarnings(Metrics metrics, BooleanSupplier leading) {
    this.metrics = metrics;
    this.leading = leading;
  }

  void sendTo(Sink sink) {
    this.sink = sink;
  }

  /**
   * When the pod is to be looked at again for its warning: the deadline less the lead time, if that is still ahead.
   * Empty when there is no warning to give before the deadline itself.
   */
  static Optional<Instant> warnAt(Verdict verdict, Duration lead, Instant now) {
    if (lead.isZero()) {
      return Optional.empty();
    }
    Instant at = verdict.dueAt().minus(lead);
    return at.isAfter(now) ? Optional.of(at) : Optional.empty();
  }

  /**
   * The pod as judged now ({@code verdict}: what removes it, and when, if anything does): warns once its deadline is
   * within {@code lead}; says the warning is off when the pod it was given to is no longer to go then.
   */
  void check(PodRecord pod, Optional<Verdict> verdict, Duration lead, boolean dryRun, Instant now) {
    if (!leading.getAsBoolean()) {
      return;
    }
    Warned was = warned.getIfPresent(pod.key());
    boolean within = verdict.isPresent() && !lead.isZero() && !verdict.get().isDue(now) && warnAt(verdict.get(), lead, now).isEmpty();
    if (within) {
      Verdict v = verdict.get();
      Warned warning = new Warned(pod.uid(), v.dueAt(), v.rule());
      if (!warning.equals(was)) {
        warned.put(pod.key(), warning);
        metrics.removalWarnings.labels("scheduled").inc();
        sink.notice(pod, SCHEDULED, scheduled(pod, v, dryRun, now));
      }
      return;
    }
    if (was == null) {
      return;
    }
    warned.invalidate(pod.key());
    boolean removedNow = verdict.isPresent() && verdict.get().isDue(now);
    if (!removedNow && was.uid().equals(pod.uid())) {
      metrics.removalWarnings.labels("canceled").inc();
      sink.notice(pod, CANCELED, "the " + (Action.forPod(pod) == Action.DELETE ? "deletion" : "eviction") + " announced for " + was.dueAt() + " (rule " + was.rule()
          + ") is off: " + verdict.map(v -> "now due at " + v.dueAt() + " (rule " + v.rule() + ")").orElse("no rule wants it as it is now"));
    }
  }

  /** The pod went: nothing to remember. */
  void forget(PodRecord pod) {
    warned.invalidate(pod.key());
  }

  private static String scheduled(PodRecord pod, Verdict v, boolean dryRun, Instant now) {
    Duration in = Duration.between(now, v.dueAt()).truncatedTo(ChronoUnit.SECONDS);
    return (dryRun ? "dry-run: would be " : "to be ") + (Action.forPod(pod) == Action.DELETE ? "deleted" : "evicted") + " at " + v.dueAt() + " (in " + Durations.format(in) + ") by " + v.strategy() + " rule " + v.rule() + ": " + v.reason().apply(v.dueAt())
        + "; annotate it " + PodRecord.PROTECT_ANNOTATION + "=true to keep it";
  }
}
