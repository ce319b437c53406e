package io.podsweeper.policy;

import java.time.Duration;
import java.util.List;

/**
 * The one internal model every policy format is read into; nothing downstream knows which file format a rule
 * came from.
 *
 * @param source where the policy came from (a file name), for messages and the audit trail
 * @param fullPassInterval how often every pod is evaluated again, as a safety net behind events and deadlines
 */
public record Policy(String source, boolean dryRun, Limits limits, Duration fullPassInterval, List<Rule> rules) {
  public static final Duration DEFAULT_FULL_PASS_INTERVAL = Duration.ofMinutes(5);

  public Policy {
    rules = List.copyOf(rules);
  }

  public Policy withDryRun(boolean value) {
    return new Policy(source, value, limits, fullPassInterval, rules);
  }
}
