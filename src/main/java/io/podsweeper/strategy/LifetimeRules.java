package io.podsweeper.strategy;

import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.PodState;
import io.podsweeper.policy.Rule;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The PodLifeTime strategy over Podsweeper's rules: for one pod, the earliest moment a rule wants it gone.
 *
 * <p>The answer depends only on the pod as it is now (its state and timestamps), so a pod that does not change
 * has a fixed deadline: the live service sets one timer for it instead of re-scanning.
 */
public final class LifetimeRules {
  public static final String STRATEGY = "PodLifeTime";

  private final List<Rule> rules;

  public LifetimeRules(List<Rule> rules) {
    this.rules = List.copyOf(rules);
  }

  /** Why and from when a rule wants a pod gone. */
  public record Verdict(Rule rule, Instant dueAt, String matched) {
    public boolean isDue(Instant now) {
      return now.isAfter(dueAt);
    }

    public Decision decide(PodRecord pod, Instant now) {
      return Decision.of(pod, STRATEGY, rule.name(), reason(pod, now), dueAt);
    }

    private String reason(PodRecord pod, Instant now) {
      StringBuilder reason = new StringBuilder(matched);
      if (rule.maxAgeAfterFinish().isPresent()) {
        reason.append(", finished ").append(ago(pod.finishedAt(), now)).append(" ago");
      } else {
        reason.append(", age ").append(ago(pod.creationTimestamp(), now));
      }
      reason.append("; rule ").append(rule.name());
      rule.maxAge().ifPresent(a -> reason.append(" allows ").append(Durations.format(a)));
      rule.maxAgeAfterFinish()
          .ifPresent(a -> reason.append(rule.maxAge().isPresent() ? " and " : " allows ")
              .append(Durations.format(a)).append(" after finish"));
      if (rule.maxAge().isEmpty() && rule.maxAgeAfterFinish().isEmpty()) {
        reason.append(" removes it in this state");
      }
      return reason.toString();
    }

    private static String ago(Instant then, Instant now) {
      return Durations.format(Duration.between(then, now).withNanos(0));
    }
  }

  /** The earliest verdict of any rule, or empty if no rule will ever want this pod as it is now. */
  public Optional<Verdict> evaluate(PodRecord pod, NamespaceRecord namespace) {
    if (pod.terminating() || pod.managedByKubelet()) {
      return Optional.empty();
    }
    Verdict best = null;
    for (Rule rule : rules) {
      Optional<Verdict> verdict = evaluate(rule, pod, namespace);
      if (verdict.isPresent() && (best == null || verdict.get().dueAt().isBefore(best.dueAt()))) {
        best = verdict.get();
      }
    }
    return Optional.ofNullable(best);
  }

  private static Optional<Verdict> evaluate(Rule rule, PodRecord pod, NamespaceRecord namespace) {
    if (!rule.namespaces().matches(pod.namespace())
        || !rule.namespaceSelector().matches(namespace.labels())
        || !rule.podSelector().matches(pod.labels())) {
      return Optional.empty();
    }
    if (pod.terminated() && !rule.optsInToTerminated()) {
      return Optional.empty();
    }
    String matched;
    if (rule.states().isEmpty()) {
      matched = describe(pod);
    } else {
      Optional<String> state = matchingState(rule, pod);
      if (state.isEmpty()) {
        return Optional.empty();
      }
      matched = state.get();
    }
    Instant due = pod.creationTimestamp();
    if (rule.maxAge().isPresent()) {
      due = pod.creationTimestamp().plus(rule.maxAge().get());
    }
    if (rule.maxAgeAfterFinish().isPresent()) {
      Instant afterFinish = pod.finishedAt().plus(rule.maxAgeAfterFinish().get());
      due = afterFinish.isAfter(due) ? afterFinish : due;
    }
    return Optional.of(new Verdict(rule, due, matched));
  }

  /**
   * The first of the rule's states the pod is in, described. Matching is blind to where a value comes from
   * (phase, pod reason, container waiting or terminated reason), as upstream's is. A finished pod is matched only
   * by terminal states: that a container of a Failed pod was once in CrashLoopBackOff does not opt it in.
   */
  private static Optional<String> matchingState(Rule rule, PodRecord pod) {
    for (PodState state : rule.states()) {
      if (pod.terminated() && !state.terminal()) {
        continue;
      }
      String name = state.wireName();
      if (name.equals(pod.phase())) {
        return Optional.of(describe(pod));
      }
      if (pod.reason().filter(name::equals).isPresent()) {
        return Optional.of(pod.phase() + " (reason " + name + ")");
      }
      for (ContainerStatus c : pod.containers()) {
        if (c.kind() != ContainerStatus.Kind.MAIN) {
          continue;
        }
        if (c.waitingReason().filter(name::equals).isPresent()
            || c.terminatedReason().filter(name::equals).isPresent()) {
          return Optional.of(name + " (container " + c.name() + ")");
        }
      }
    }
    return Optional.empty();
  }

  private static String describe(PodRecord pod) {
    if ("Pending".equals(pod.phase()) && !pod.scheduled()) {
      return "Pending with no node";
    }
    return pod.phase();
  }
}
