package io.podsweeper.strategy;

import io.podsweeper.cluster.PodRecord;
import java.time.Instant;
import java.util.function.Function;

/**
 * Why and from when a strategy wants a pod gone. The reason is rendered at decision time, so it can say how old
 * the pod is then.
 *
 * @param dueAt the pod is due once the clock is strictly after this instant
 */
public record Verdict(String strategy, String rule, Instant dueAt, Function<Instant, String> reason) {
  public boolean isDue(Instant now) {
    return now.isAfter(dueAt);
  }

  public Verdict notBefore(Instant earliest) {
    return earliest.isAfter(dueAt) ? new Verdict(strategy, rule, earliest, reason) : this;
  }

  public Decision decide(PodRecord pod, Instant now) {
    return Decision.of(pod, strategy, rule, reason.apply(now), dueAt);
  }
}
