package io.podsweeper.removal;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.safety.BlastRadiusGuard;
import io.podsweeper.strategy.Decision;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first half of every removal's path, a pod's or a PodMigrationJob's: the hold-backs, then its reservation. A held
 * or refused removal is reported once per pod state; a tripped guard pauses removals and says how to resume.
 */
final class Admission {
  private static final Logger LOG = LoggerFactory.getLogger(Admission.class);
  /** How soon a removal held by a cache, policy or guard window not yet current looks again. */
  static final Duration STALE_RETRY = Duration.ofSeconds(1);

  /** A reservation, or what the scheduler does instead and why (in a word, for a job's status). */
  record Admitted(Reservation reservation, Answer otherwise, String why) {
    static Admitted no(Answer otherwise, String why) {
      return new Admitted(null, otherwise, why);
    }
  }

  private final Checks checks;
  private final Ledger ledger;
  private final GuardJournal journal;
  private final Pause pause;
  private final Reports reports;
  private final Supplier<Rules> rules;
  private final Predicate<String> jobHolds;
  private final Metrics metrics;
  private final Consumer<String> guardTrippedNotice;

  /**
   * @param jobHolds whether a pod (by UID) has a PodMigrationJob in progress
   * @param guardTrippedNotice told (besides the log line) when the blast-radius guard stops removals
   */
  Admission(Checks checks, Ledger ledger, GuardJournal journal, Pause pause, Reports reports, Supplier<Rules> rules,
      Predicate<String> jobHolds, Metrics metrics, Consumer<String> guardTrippedNotice) {
    this.checks = checks;
    this.ledger = ledger;
    this.journal = journal;
    this.pause = pause;
    this.reports = reports;
    this.rules = rules;
    this.jobHolds = jobHolds;
    this.metrics = metrics;
    this.guardTrippedNotice = guardTrippedNotice;
  }

  Admitted admit(PodRecord pod, Candidate c) {
    if (c.dryRun() && reports.already(c.decision(), Result.DRY_RUN)) {
      return Admitted.no(Answer.REMOVED, "a dry-run accepted already"); // it would be removed: no need to ask again
    }
    Optional<String> held = heldBack(pod, c);
    if (held.isPresent()) {
      return Admitted.no(Answer.DONE, held.get());
    }
    long epoch = ledger.guardEpoch(); // a count goes only into a guard whose remembered window was read
    if (!journal.takeOver(ledger.guard(epoch))) {
      Optional<String> unreadable = journal.unreadable();
      if (unreadable.isEmpty()) {
        return Admitted.no(Answer.retryAfter(STALE_RETRY), "the guard's window is not read yet");
      }
      if (ledger.covers(c.decision())) {
        reports.once(c.decision(), c.dryRun() ? Result.WOULD_BE_LIMITED : Result.LIMITED, unreadable.get(), c.dryRun());
        return Admitted.no(Answer.retryAfter(GuardJournal.UNREADABLE_RECHECK), unreadable.get());
      }
      // Nothing of it the guard or the hourly cap would count: it goes on without the window.
    }
    Ledger.Reserve reserve = ledger.reserve(pod, c.decision(), epoch);
    if (reserve instanceof Ledger.Reserved reserved) {
      return new Admitted(reserved.reservation(), null, "");
    }
    if (reserve instanceof Ledger.Limited limited) {
      reports.once(c.decision(), c.dryRun() ? Result.WOULD_BE_LIMITED : Result.LIMITED, limited.why() + "; retried in the next pass", c.dryRun());
    } else if (reserve instanceof Ledger.Tripped tripped) {
      tripped(c, tripped.trip());
    } else {
      return Admitted.no(Answer.retryAfter(Duration.ZERO), "the guard changed");
    }
    return Admitted.no(Answer.DONE, "over a removal limit, or the blast-radius guard refused it");
  }

  /** Reasons to decide but not act: a follower, the kill switch, an eviction or job in progress, a throttle. */
  private Optional<String> heldBack(PodRecord pod, Candidate c) {
    Decision d = c.decision();
    if (!checks.mayLead()) {
      return Optional.of("this replica does not lead"); // it decides (its state stays warm), the leader removes
    }
    if (pause.holds(d.action())) {
      reports.once(d, Result.PAUSED, pause.why(), c.dryRun());
      return Optional.of(pause.why());
    }
    if (ledger.inProgress(pod.uid()).isPresent() || jobHolds.test(pod.uid())) {
      return Optional.of("an eviction in progress");
    }
    Optional<String> throttled = checks.ownerThrottle(pod, rules.get().policy().limits());
    throttled.ifPresent(why -> reports.once(d, c.dryRun() ? Result.WOULD_BE_LIMITED : Result.LIMITED, why + "; retried in the next pass",
        c.dryRun()));
    return throttled;
  }

  private void tripped(Candidate c, BlastRadiusGuard.Trip trip) {
    String what = trip.evictionsOnly() ? "evictions" : "removals";
    if (c.dryRun()) {
      reports.once(c.decision(), Result.WOULD_TRIP_GUARD, "blast-radius guard: " + trip.reason() + "; the live run would pause " + what + " here", true);
      return;
    }
    String why = "blast-radius guard: " + trip.reason() + "; " + what
        + " are paused until an operator resumes (data.paused: \"false\" in the control ConfigMap, or POST /api/v1/resume),"
        + " which starts the window over" + (trip.evictionsOnly() ? "; finished pods are still deleted" : "");
    metrics.guardTripped.set(1);
    if (trip.evictionsOnly()) {
      pause.pauseEvictions(why);
    } else {
      pause.pause(why);
    }
    guardTrippedNotice.accept(why);
    LOG.error("{}", why);
    reports.once(c.decision(), Result.PAUSED, why, false);
  }
}
