package io.podsweeper.engine;

import io.podsweeper.removal.Result;
import io.podsweeper.strategy.Decision;
import java.time.Instant;

/** What became of one decision: told to every {@link OutcomeListener} (Events, the audit log). */
public record Outcome(Instant time, Decision decision, Result result, String message, boolean dryRun, String policySource) {}
