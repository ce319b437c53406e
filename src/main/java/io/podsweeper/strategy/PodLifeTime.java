package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodCondition;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.ConditionFilter;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.PodState;
import io.podsweeper.policy.Rule;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * PodLifeTime over a list of rules: for one pod, the earliest moment a rule wants it gone. A rule never wants a pod
 * one of its protections keeps (Podsweeper's own rules: {@link RuleProtections}), so that another rule opting in to
 * evicting it still can.
 *
 * <p>The answer depends only on the pod as it is now (its state and timestamps), so a pod that does not change has
 * a fixed deadline: the live service sets one timer for it instead of re-scanning.
 */
public final class PodLifeTime implements PodStrategy {
  public static final String NAME = "PodLifeTime";

  private final List<Rule> rules;

  public PodLifeTime(List<Rule> rules) {
    this.rules = List.copyOf(rules);
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Comparator<PodRecord> candidateOrder() {
    return Comparator.comparing(PodRecord::creationTimestamp).thenComparing(PodRecord::key);
  }

  @Override
  public Optional<Verdict> evaluate(PodRecord pod, ClusterView view) {
    Verdict best = null;
    for (Rule rule : rules) {
      Optional<Verdict> verdict = evaluate(rule, pod, view);
      if (verdict.isPresent() && (best == null || verdict.get().dueAt().isBefore(best.dueAt()))) {
        best = verdict.get();
      }
    }
    return Optional.ofNullable(best);
  }

  private static Optional<Verdict> evaluate(Rule rule, PodRecord pod, ClusterView view) {
    Optional<String> selected = selects(rule, pod, view);
    if (selected.isEmpty() || RuleProtections.keeps(rule, pod)) {
      return Optional.empty();
    }
    String matched = selected.get();
    if (rule.retention().isPresent()) {
      Optional<String> beyond = beyondRetention(rule, rule.retention().get(), pod, view);
      if (beyond.isEmpty()) {
        return Optional.empty();
      }
      matched += ", " + beyond.get();
    }
    Instant due = pod.creationTimestamp();
    if (!rule.conditions().isEmpty()) {
      Optional<Instant> conditionsDue = conditionsDue(rule.conditions(), pod);
      if (conditionsDue.isEmpty()) {
        return Optional.empty();
      }
      due = later(due, conditionsDue.get());
    }
    if (rule.maxAge().isPresent()) {
      due = later(due, pod.creationTimestamp().plus(rule.maxAge().get()));
    }
    if (rule.maxAgeAfterFinish().isPresent()) {
      due = later(due, pod.finishedAt().plus(rule.maxAgeAfterFinish().get()));
    }
    String what = matched;
    return Optional.of(new Verdict(NAME, rule.name(), due, now -> reason(rule, pod, what, now)));
  }

  /** The protection that keeps the pod from the first rule selecting it, with that rule's name; for explain. */
  @Override
  public Optional<String> ruleProtection(PodRecord pod, ClusterView view) {
    for (Rule rule : rules) {
      if (selects(rule, pod, view).isPresent()) {
        Optional<String> protection = RuleProtections.protection(rule, pod);
        if (protection.isPresent()) {
          return Optional.of("rule " + rule.name() + " selects it, but it is protected: " + protection.get());
        }
      }
    }
    return Optional.empty();
  }

  /**
   * Whether the rule selects the pod by what it is (scope, labels, owners, states, exit codes), regardless of time;
   * described for the reason if so.
   */
  private static Optional<String> selects(Rule rule, PodRecord pod, ClusterView view) {
    if (!rule.namespaces().matches(pod.namespace())
        || !rule.namespaceSelector().matches(view.namespace(pod.namespace()).labels())
        || !rule.podSelector().matches(pod.labels())
        || !ownerKindsMatch(rule, pod)) {
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
    if (!rule.exitCodes().isEmpty()) {
      Optional<ContainerStatus> exited = Containers.of(pod, rule.includingInitContainers(), false)
          .filter(c -> c.exitCode().isPresent() && rule.exitCodes().contains(c.exitCode().getAsInt()))
          .findFirst();
      if (exited.isEmpty()) {
        return Optional.empty();
      }
      matched += ", container " + exited.get().name() + " exited " + exited.get().exitCode().getAsInt();
    }
    return Optional.of(matched);
  }

  /** Empty while the pod is among the newest {@code keep} of its group that the rule selects; else its rank. */
  private static Optional<String> beyondRetention(Rule rule, Rule.Retention retention, PodRecord pod, ClusterView view) {
    String group = pod.retentionGroup();
    List<PodRecord> history = view.podsInNamespace(pod.namespace()).stream()
        .filter(p -> p.terminated() && !p.terminating() && (retention.perNamespace() || p.retentionGroup().equals(group)))
        .filter(p -> selects(rule, p, view).isPresent())
        .sorted(Comparator.comparing(PodRecord::finishedAt).reversed().thenComparing(PodRecord::key))
        .toList();
    int rank = 0;
    while (rank < history.size() && !history.get(rank).key().equals(pod.key())) {
      rank++;
    }
    if (rank < retention.keep()) {
      return Optional.empty();
    }
    String of = retention.perNamespace() ? "namespace " + pod.namespace() : group.isEmpty() ? "the bare pods" : group;
    return Optional.of("number " + (rank + 1) + " of " + history.size() + " of " + of + " by finish time, rule keeps "
        + retention.keep());
  }

  private static boolean ownerKindsMatch(Rule rule, PodRecord pod) {
    if (rule.ownerKindsInclude().isEmpty() && rule.ownerKindsExclude().isEmpty()) {
      return true;
    }
    List<String> kinds = pod.owners().stream().map(OwnerRef::kind).toList();
    return (rule.ownerKindsInclude().isEmpty() || kinds.stream().anyMatch(rule.ownerKindsInclude()::contains))
        && kinds.stream().noneMatch(rule.ownerKindsExclude()::contains);
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
      // A plain loop: this runs for every state of every rule of every pod in a pass.
      for (ContainerStatus c : pod.containers()) {
        if (Containers.considered(c, rule.includingInitContainers(), rule.includingEphemeralContainers())
            && (name.equals(c.waitingReason().orElse(null)) || name.equals(c.terminatedReason().orElse(null)))) {
          return Optional.of(name + " (container " + c.name() + ")");
        }
      }
    }
    return Optional.empty();
  }

  /** When the first condition filter is satisfied (its transition old enough), or empty if none matches. */
  private static Optional<Instant> conditionsDue(List<ConditionFilter> filters, PodRecord pod) {
    Instant best = null;
    for (ConditionFilter f : filters) {
      for (PodCondition c : pod.conditions()) {
        if (f.type().filter(t -> !t.equals(c.type())).isPresent()
            || f.status().filter(s -> !s.equals(c.status())).isPresent()
            || f.reason().filter(r -> !r.equals(c.reason().orElse(""))).isPresent()) {
          continue;
        }
        Instant from;
        if (f.minTimeSinceLastTransition().isPresent()) {
          if (c.lastTransitionTime().isEmpty()) {
            continue;
          }
          // At least this long ago (inclusive): due one nanosecond before the bound, as isDue is strict.
          from = c.lastTransitionTime().get().plus(f.minTimeSinceLastTransition().get()).minusNanos(1);
        } else {
          from = pod.creationTimestamp();
        }
        best = best == null || from.isBefore(best) ? from : best;
      }
    }
    return Optional.ofNullable(best);
  }

  private static String reason(Rule rule, PodRecord pod, String matched, Instant now) {
    StringBuilder reason = new StringBuilder(matched);
    if (rule.maxAgeAfterFinish().isPresent()) {
      PodRecord.Finish finish = pod.finish();
      reason.append(", finished ").append(ago(finish.at(), now)).append(" ago");
      finish.source().ifPresent(source -> reason.append(" (").append(source).append(")"));
    } else {
      reason.append(", age ").append(ago(pod.creationTimestamp(), now));
    }
    reason.append("; rule ").append(rule.name());
    rule.maxAge().ifPresent(a -> reason.append(" allows ").append(Durations.format(a)));
    rule.maxAgeAfterFinish().ifPresent(a -> reason.append(rule.maxAge().isPresent() ? " and " : " allows ")
        .append(Durations.format(a)).append(" after finish"));
    if (rule.maxAge().isEmpty() && rule.maxAgeAfterFinish().isEmpty()) {
      reason.append(" removes it in this state");
    }
    return reason.toString();
  }

  static String ago(Instant then, Instant now) {
    return Durations.format(Duration.between(then, now).withNanos(0));
  }

  static String describe(PodRecord pod) {
    if ("Pending".equals(pod.phase()) && !pod.scheduled()) {
      return "Pending with no node";
    }
    return pod.phase();
  }

  private static Instant later(Instant a, Instant b) {
    return a.isAfter(b) ? a : b;
  }
}
