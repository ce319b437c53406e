package io.podsweeper.strategy;

import io.podsweeper.cluster.PodRecord;
import java.time.Instant;
import java.util.function.Function;

/**
 * Why and from when a strategy wants a pod gone. The reason is rendered at decision time, so it can say how old
 * the pod is then.
 *
 * @param dueAt the pod is due once the clock is strictly after this instant
 * @param profile the profile whose strategy this is: set by the evaluator ({@link #inProfile}), which knows it
 */
public record Verdict(String strategy, String rule, Instant dueAt, Function<Instant, String> reason, String profile) {
  /** A strategy's verdict, before the evaluator says which profile it belongs to. */
  public Verdict(String strategy, String rule, Instant dueAt, Function<Instant, String> reason) {
    this(strategy, rule, dueAt, reason, "");
  }

  public Verdict inProfile(String name) {
    return new Verdict(strategy, rule, dueAt, reason, name);
  }

  public boolean isDue(Instant now) {
    return now.isAfter(dueAt);
  }

  public Verdict notBefore(Instant earliest) {
    return earliest.isAfter(dueAt) ? new Verdict(strategy, rule, earliest, reason, profile) : this;
  }

  public Decision decide(PodRecord pod, Instant now) {
    return Decision.of(pod, strategy, profile, rule, reason.apply(now), dueAt);
  }
}
