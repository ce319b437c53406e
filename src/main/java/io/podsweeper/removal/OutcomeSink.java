package io.podsweeper.removal;

import io.podsweeper.strategy.Decision;

/** Where every outcome of a decision goes (counters, recent decisions, log line, Events, audit log): one place. */
@FunctionalInterface
public interface OutcomeSink {
  void record(Decision decision, Result result, String message, boolean dryRun);
}
