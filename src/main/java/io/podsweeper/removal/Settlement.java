package io.podsweeper.removal;

import io.podsweeper.metrics.Metrics;
import io.podsweeper.strategy.Decision;
import java.time.Duration;

/**
 * What a request's answer makes of the removal: counted as happened, given back, kept counted when no answer came,
 * backed off and reported. One switch for a pod's removal and a PodMigrationJob's eviction alike; only what each holds
 * differs ({@link Hold}).
 */
final class Settlement {
  /** What a request's fate does to what it holds: a removal's reservation, or a job's eviction in background. */
  interface Hold {
    /** It happened; false if its end was told already (by the pod's deletion, seen meanwhile): nothing to report. */
    boolean happened();

    void didNotHappen();

    /** No answer came: the server may have carried it out. */
    void noAnswer();
  }

  private final Ledger ledger;
  private final OutcomeSink outcomes;
  private final Reports reports;
  private final Backoff backoff;
  private final Metrics metrics;

  Settlement(Ledger ledger, OutcomeSink outcomes, Reports reports, Backoff backoff, Metrics metrics) {
    this.ledger = ledger;
    this.outcomes = outcomes;
    this.reports = reports;
    this.backoff = backoff;
    this.metrics = metrics;
  }

  /** A removal's reservation: committed, rolled back or kept counted. */
  Hold of(Reservation r) {
    return new Hold() {
      @Override
      public boolean happened() {
        ledger.commit(r);
        return true;
      }

      @Override
      public void didNotHappen() {
        ledger.rollBack(r);
      }

      @Override
      public void noAnswer() {
        ledger.keepCounted(r);
      }
    };
  }

  /** Settles by the answer and reports it; a refusal or an error backs off, and says when it is tried again. */
  Answer settle(Decision d, RequestResult result, Hold hold) {
    switch (result.outcome()) {
      case REMOVED -> {
        backoff.forget(d.podKey());
        if (hold.happened()) {
          outcomes.record(d, Result.SUCCESS, result.message(), false);
        }
        return Answer.REMOVED;
      }
      case REFUSED -> {
        hold.didNotHappen();
        metrics.pdbRefusals.labels(d.namespace()).inc();
        return backOff(d, Result.PDB_REFUSED, result.message());
      }
      case CONFLICT -> {
        hold.didNotHappen();
        outcomes.record(d, Result.CONFLICT, "the pod changed or was recreated since the decision: " + result.message(), false);
        return Answer.DONE;
      }
      case GONE -> {
        hold.didNotHappen();
        outcomes.record(d, Result.GONE, result.message(), false);
        return Answer.DONE;
      }
      default -> {
        if (result.unanswered()) {
          hold.noAnswer();
        } else {
          hold.didNotHappen();
        }
        metrics.apiErrors.labels(d.action().wireName(), String.valueOf(result.code())).inc();
        return backOff(d, Result.ERROR, result.code() + " " + result.message());
      }
    }
  }

  private Answer backOff(Decision d, Result result, String message) {
    Duration delay = backoff.next(d.podKey());
    outcomes.record(d, result, message + "; retry in " + delay.toSeconds() + "s", false);
    return Answer.retryAfter(delay);
  }

  /**
   * A server-side dry-run's answer: accepted keeps its reservation (later pods meet the limits and the guard as they
   * would live); a refusal is what the live run would meet; neither is retried until the pod changes.
   */
  Answer dryRun(Decision d, Reservation r, RequestResult result) {
    if (result.outcome() == RequestResult.Outcome.REMOVED) {
      reports.once(d, Result.DRY_RUN, "dry-run: the API server would accept it (dryRun=All)", true);
      return Answer.REMOVED;
    }
    ledger.rollBack(r);
    if (result.outcome() == RequestResult.Outcome.REFUSED) {
      reports.once(d, Result.PDB_WOULD_REFUSE, result.message(), true);
    } else {
      Result as = switch (result.outcome()) {
        case CONFLICT -> Result.CONFLICT;
        case GONE -> Result.GONE;
        default -> Result.ERROR;
      };
      reports.once(d, as, result.code() + " " + result.message(), true);
    }
    return Answer.DONE;
  }
}
