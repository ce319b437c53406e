package io.podsweeper.removal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.podsweeper.strategy.Decision;
import java.time.Duration;

/**
 * Held removals (dry-run, paused, limited) are reported once per state, not again every pass and every reload: the
 * pod's version, the rule, the result, and for a pause its reason (a limit's message changes with counts that are
 * not the pod's state).
 */
final class Reports {
  private final OutcomeSink outcomes;
  /** What was last reported for a pod held back, by UID. */
  private final Cache<String, String> reported = Caffeine.newBuilder().expireAfterAccess(Duration.ofHours(1)).maximumSize(500_000).build();

  Reports(OutcomeSink outcomes) {
    this.outcomes = outcomes;
  }

  /** Reports a held removal unless this very state was reported already. */
  void once(Decision decision, Result result, String message, boolean dryRun) {
    String state = state(decision, result) + (result == Result.PAUSED ? "\n" + message : "");
    if (!state.equals(reported.asMap().put(decision.uid(), state))) {
      outcomes.record(decision, result, message, dryRun);
    }
  }

  /** True if this very pod state was last reported with {@code result}. */
  boolean already(Decision decision, Result result) {
    return state(decision, result).equals(reported.getIfPresent(decision.uid()));
  }

  void forget(String uid) {
    reported.invalidate(uid);
  }

  private static String state(Decision decision, Result result) {
    return decision.resourceVersion() + "\n" + decision.profile() + "\n" + decision.rule() + "\n" + result;
  }
}
