package io.podsweeper.removal;

import io.podsweeper.strategy.Decision;
import java.time.Instant;

/**
 * A pod the scheduler wants removed.
 *
 * @param balance made by a node-aware strategy over a whole pass (it holds only under the policy it was made by)
 * @param generation the policy generation it was made under
 * @param dryRun the policy it was made under is a dry-run: the whole path runs, the request is a server-side dry-run
 * @param dueSince when it became due, for the decision-to-request latency
 */
public record Candidate(Decision decision, boolean balance, long generation, boolean dryRun, Instant dueSince) {}
