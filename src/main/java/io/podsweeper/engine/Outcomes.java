package io.podsweeper.engine;

import io.podsweeper.metrics.Metrics;
import io.podsweeper.removal.OutcomeSink;
import io.podsweeper.removal.Result;
import io.podsweeper.safety.RemovalBudget;
import io.podsweeper.strategy.Decision;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every outcome of a decision goes: the counters, the recent-decisions view, the log line, and the listeners
 * (Events, the audit log). One place, so that every path through the gate reports the same way.
 */
final class Outcomes implements OutcomeSink {
  private static final Logger LOG = LoggerFactory.getLogger(Sweeper.class);

  private final Metrics metrics;
  private final RecentDecisions recent;
  private final Clock clock;
  private final Supplier<String> policySource;
  private final List<OutcomeListener> listeners = new CopyOnWriteArrayList<>();

  Outcomes(Metrics metrics, RecentDecisions recent, Clock clock, Supplier<String> policySource) {
    this.metrics = metrics;
    this.recent = recent;
    this.clock = clock;
    this.policySource = policySource;
  }

  void addListener(OutcomeListener listener) {
    listeners.add(listener);
  }

  @Override
  public void record(Decision d, Result result, String message, boolean dryRun) {
    metrics.removals.labels(result.label(), d.strategy(), d.namespace(), d.action().wireName(), d.rule()).inc();
    // Upstream's counter knows no pause and no canceled EvictionRequest (its attempt was counted as background).
    if (result != Result.PAUSED && result != Result.WOULD_TRIP_GUARD && result != Result.CANCELED) {
      metrics.deschedulerEvicted.labels(deschedulerResult(result, message), d.strategy(), d.profile(), d.namespace(), d.node()).inc();
    }
    Instant time = clock.instant();
    recent.add(new RecentDecisions.Entry(time, d, result.label(), message, dryRun));
    Outcome outcome = new Outcome(time, d, result, message, dryRun, policySource.get());
    for (OutcomeListener listener : listeners) {
      try {
        listener.outcome(outcome);
      } catch (RuntimeException e) {
        LOG.warn("outcome listener failed: {}", e.toString());
      }
    }
    // The message says what happened to which pod, and whether it did ("did not evict pod ..." when it was held, refused
    // or failed: `result` says how); every field is a key of its own: top-level keys in the JSON format (so the message
    // repeats none of them), appended as key="value" in the text format (cli/LogFormat).
    // A removal that failed (an API error: a 403 names a missing grant) is a WARN; every other outcome an INFO.
    LOG.atLevel(result == Result.ERROR ? org.slf4j.event.Level.WARN : org.slf4j.event.Level.INFO)
        .addKeyValue("namespace", d.namespace())
        .addKeyValue("pod", d.name())
        .addKeyValue("uid", d.uid())
        .addKeyValue("rule", d.rule())
        .addKeyValue("strategy", d.strategy())
        .addKeyValue("action", d.action().wireName())
        .addKeyValue("dryRun", dryRun)
        .addKeyValue("result", result.label())
        .addKeyValue("reason", d.reason())
        .addKeyValue("detail", message)
        .log("{} pod {}", (dryRun ? "would " : "") + (happened(result) ? "" : dryRun ? "not " : "did not ") + d.action().wireName(), d.podKey());
  }

  /** Whether the removal was made (or, in dry-run, would have been): sent and taken, or under way in the background. */
  private static boolean happened(Result result) {
    return result == Result.SUCCESS || result == Result.BACKGROUND || result == Result.DRY_RUN;
  }

  /**
   * The upstream counter's result values: success (dry-run included, as upstream counts it), error, upstream's text
   * for a reached cap, or "throttled" for our per-workload and hourly throttles. A bounded set: a message naming an
   * owner or a count would make a new series per rollout.
   */
  private static String deschedulerResult(Result result, String message) {
    return switch (result) {
      case SUCCESS, DRY_RUN -> "success";
      case BACKGROUND -> "background";
      case LIMITED, WOULD_BE_LIMITED -> RemovalBudget.CAPS.stream().filter(message::startsWith).findFirst().orElse("throttled");
      default -> "error";
    };
  }
}
