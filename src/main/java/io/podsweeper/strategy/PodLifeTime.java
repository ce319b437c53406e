package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodCondition;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.ConditionFilter;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.NamespaceFilter;
import io.podsweeper.policy.PodMatch;
import io.podsweeper.policy.PodState;
import io.podsweeper.policy.Rule;
import io.podsweeper.policy.TtlSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

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

  /**
   * One line per rule: when it wants the pod gone and, while not yet, what it waits for; or why it does not want the
   * pod at all (the first of its criteria the pod fails, in the order {@link #evaluate} checks them).
   */
  @Override
  public List<String> explainRules(PodRecord pod, ClusterView view, Instant now) {
    return rules.stream().map(rule -> "rule " + rule.name() + ": " + explain(rule, pod, view, now)).toList();
  }

  private static String explain(Rule rule, PodRecord pod, ClusterView view, Instant now) {
    Optional<Verdict> verdict = evaluate(rule, pod, view);
    if (verdict.isPresent()) {
      Verdict v = verdict.get();
      String matched = rule.match().map(m -> " (match " + m.source() + " is true)").orElse("");
      return (v.isDue(now) ? "due since " + v.dueAt() + ": " + v.reason().apply(now)
          : "due at " + v.dueAt() + ": " + waitingFor(rule, pod, view, now)) + matched;
    }
    Mismatch mismatch = mismatch(rule, pod, view);
    if (mismatch != null) {
      return mismatch.describe(rule, pod, view);
    }
    // Selected: what keeps the pod is the rule's protection, its count, or its conditions, checked in evaluate's order.
    Optional<String> protection = RuleProtections.protection(rule, pod);
    if (protection.isPresent()) {
      return "selects it, but it is protected: " + protection.get();
    }
    if (rule.retention().isPresent()) {
      Rank rank = rank(rule, rule.retention().get(), pod, view);
      if (rank.kept()) {
        return "kept: " + rank;
      }
    }
    return "no condition of the pod matches the rule's conditions " + rule.conditions();
  }

  /** The rule's clocks that have not run out at {@code now}, for a pod the rule selects but does not want yet. */
  private static String waitingFor(Rule rule, PodRecord pod, ClusterView view, Instant now) {
    List<String> waiting = new ArrayList<>();
    rule.maxAge().filter(age -> !now.isAfter(pod.creationTimestamp().plus(age)))
        .ifPresent(age -> waiting.add("age " + ago(pod.creationTimestamp(), now) + " is under maxAge " + Durations.format(age)));
    rule.maxAgeAfterFinish().filter(age -> !now.isAfter(pod.finishedAt().plus(age)))
        .ifPresent(age -> waiting.add("finished " + ago(pod.finishedAt(), now) + " ago, under maxAgeAfterFinish " + Durations.format(age)));
    conditionsDue(rule.conditions(), pod).filter(due -> !now.isAfter(due))
        .ifPresent(due -> waiting.add("its condition has held for less than minTimeSinceLastTransition"));
    ttl(rule, pod, view).filter(ttl -> !now.isAfter(ttl.due())).ifPresent(ttl -> waiting.add(PodTtls.waiting(ttl, now)));
    return waiting.isEmpty() ? "the pod was created at " + pod.creationTimestamp() + ", not before " + now : String.join("; ", waiting);
  }

  private static Optional<Verdict> evaluate(Rule rule, PodRecord pod, ClusterView view) {
    Optional<String> selected = selects(rule, pod, view);
    if (selected.isEmpty() || RuleProtections.keeps(rule, pod)) {
      return Optional.empty();
    }
    String matched = selected.get();
    if (rule.retention().isPresent()) {
      Rank rank = rank(rule, rule.retention().get(), pod, view);
      if (rank.kept()) {
        return Optional.empty();
      }
      matched += ", " + rank;
    }
    Instant due = pod.creationTimestamp();
    Optional<PodTtls.PodTtl> ttl = ttl(rule, pod, view);
    if (rule.ttlFrom().isPresent()) {
      if (ttl.isEmpty()) {
        return Optional.empty();
      }
      due = later(due, ttl.get().due());
    }
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
    Optional<String> written = ttl.map(PodTtls.PodTtl::describe);
    return Optional.of(new Verdict(NAME, rule.name(), due, now -> reason(rule, pod, what, written, now)));
  }

  /** The rule's match expression on the pod, over what the slim records hold. */
  private static PodMatch.Result match(Rule rule, PodRecord pod, ClusterView view) {
    return rule.match().get().evaluate(PodViews.pod(pod), PodViews.namespace(view.namespace(pod.namespace())));
  }

  /** The lifetime written for the pod, for a rule with ttlFrom; empty for other rules, or when none is written. */
  private static Optional<PodTtls.PodTtl> ttl(Rule rule, PodRecord pod, ClusterView view) {
    return rule.ttlFrom().flatMap(t -> PodTtls.of(t, pod, view.namespace(pod.namespace())));
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
    if (scopeMismatch(rule, pod, view) != null) {
      return Optional.empty();
    }
    String matched;
    if (rule.states().isEmpty()) {
      matched = PodFacts.describe(pod);
    } else {
      Optional<String> state = matchingState(rule, pod);
      if (state.isEmpty()) {
        return Optional.empty();
      }
      matched = state.get();
    }
    if (!rule.exitCodes().isEmpty()) {
      Optional<ContainerStatus> exited = exitedWithACode(rule, pod);
      if (exited.isEmpty()) {
        return Optional.empty();
      }
      matched += ", " + PodFacts.container(exited.get()) + " exited " + exited.get().exitCode().getAsInt();
    }
    if (!endedAsTheRuleSays(rule, pod)) {
      return Optional.empty();
    }
    if (rule.match().isPresent() && !match(rule, pod, view).matches()) {
      return Optional.empty();
    }
    return Optional.of(matched);
  }

  /** True if the rule names no ending, or the pod shows one it names. */
  private static boolean endedAsTheRuleSays(Rule rule, PodRecord pod) {
    return rule.endedBy().isEmpty() || pod.endedBy().stream().anyMatch(rule.endedBy()::contains);
  }

  /**
   * The rule's criteria of what a pod is (regardless of time), in the order they are checked; each says how the pod
   * fails it, for {@code explain}.
   */
  private enum Mismatch {
    NAMESPACES {
      @Override
      String describe(Rule rule, PodRecord pod, ClusterView view) {
        NamespaceFilter includeOnly = new NamespaceFilter(rule.namespaces().include(), List.of());
        return "namespace " + pod.namespace() + (includeOnly.matches(pod.namespace())
            ? " is in exclude " + rule.namespaces().exclude() : " is not in include " + rule.namespaces().include());
      }
    },
    NAMESPACE_SELECTOR {
      @Override
      String describe(Rule rule, PodRecord pod, ClusterView view) {
        return "namespace " + pod.namespace() + "'s labels " + new TreeMap<>(view.namespace(pod.namespace()).labels())
            + " do not match namespaceSelector " + rule.namespaceSelector().text();
      }
    },
    POD_SELECTOR {
      @Override
      String describe(Rule rule, PodRecord pod, ClusterView view) {
        return "pod labels " + new TreeMap<>(pod.labels()) + " do not match podSelector " + rule.podSelector().text();
      }
    },
    OWNER_KINDS {
      @Override
      String describe(Rule rule, PodRecord pod, ClusterView view) {
        return "owner kinds " + pod.owners().stream().map(OwnerRef::kind).toList() + " do not pass ownerKinds include "
            + new TreeSet<>(rule.ownerKindsInclude()) + ", exclude " + new TreeSet<>(rule.ownerKindsExclude());
      }
    },
    FINISHED {
      @Override
      String describe(Rule rule, PodRecord pod, ClusterView view) {
        return "the pod has finished (" + pod.phase() + ") and the rule names no state only finished pods have (the opt-in they need)";
      }
    },
    STATES {
      @Override
      String describe(Rule rule, PodRecord pod, ClusterView view) {
        return "state " + state(pod, rule);
      }
    },
    EXIT_CODES {
      @Override
      String describe(Rule rule, PodRecord pod, ClusterView view) {
        return "no container exited with one of " + new TreeSet<>(rule.exitCodes());
      }
    },
    ENDED_BY {
      @Override
      String describe(Rule rule, PodRecord pod, ClusterView view) {
        List<String> named = rule.endedBy().stream().sorted().map(Enum::name).toList();
        return pod.endedBy().isEmpty() ? "the pod shows no ending, and the rule's endedBy is " + named
            : "ended by " + pod.endedBy().stream().map(Enum::name).toList() + ", none of endedBy " + named;
      }
    },
    MATCH {
      @Override
      String describe(Rule rule, PodRecord pod, ClusterView view) {
        return "match " + rule.match().get().source() + " is " + match(rule, pod, view);
      }
    },
    TTL {
      @Override
      String describe(Rule rule, PodRecord pod, ClusterView view) {
        List<String> sources = rule.ttlFrom().get().sources().stream().sorted().map(TtlSource::wireName).toList();
        List<TtlSource.Found> invalid = PodTtls.invalid(rule.ttlFrom().get().sources(), pod.annotations(), pod.labels());
        if (!invalid.isEmpty()) {
          TtlSource.Found f = invalid.get(0);
          return f.key() + ": \"" + f.text() + "\" on the pod does not parse (" + ((TtlSource.Value.Invalid) f.value()).why()
              + "), so the rule does not apply to it";
        }
        return "no lifetime from ttlFrom " + sources + " on the pod or its namespace " + pod.namespace();
      }
    };

    abstract String describe(Rule rule, PodRecord pod, ClusterView view);
  }

  /** The first criterion the pod fails, in the order {@link #selects} checks them, or null when the rule selects it. */
  private static Mismatch mismatch(Rule rule, PodRecord pod, ClusterView view) {
    Mismatch scope = scopeMismatch(rule, pod, view);
    if (scope != null) {
      return scope;
    }
    if (!rule.states().isEmpty() && matchingState(rule, pod).isEmpty()) {
      return Mismatch.STATES;
    }
    if (!rule.exitCodes().isEmpty() && exitedWithACode(rule, pod).isEmpty()) {
      return Mismatch.EXIT_CODES;
    }
    if (!endedAsTheRuleSays(rule, pod)) {
      return Mismatch.ENDED_BY;
    }
    if (rule.match().isPresent() && !match(rule, pod, view).matches()) {
      return Mismatch.MATCH;
    }
    if (rule.ttlFrom().isPresent() && ttl(rule, pod, view).isEmpty()) {
      return Mismatch.TTL;
    }
    return null;
  }

  /**
   * The first criterion of scope (and the finished pods' opt-in) the pod fails, or null. No allocation: it runs for
   * every rule and pod of a pass, and most pods fail here.
   */
  private static Mismatch scopeMismatch(Rule rule, PodRecord pod, ClusterView view) {
    if (!rule.namespaces().matches(pod.namespace())) {
      return Mismatch.NAMESPACES;
    }
    if (!rule.namespaceSelector().matches(view.namespace(pod.namespace()).labels())) {
      return Mismatch.NAMESPACE_SELECTOR;
    }
    if (!rule.podSelector().matches(pod.labels())) {
      return Mismatch.POD_SELECTOR;
    }
    if (!ownerKindsMatch(rule, pod)) {
      return Mismatch.OWNER_KINDS;
    }
    if (pod.terminated() && !rule.optsInToTerminated()) {
      return Mismatch.FINISHED;
    }
    return null;
  }

  private static Optional<ContainerStatus> exitedWithACode(Rule rule, PodRecord pod) {
    return Containers.of(pod, rule.includingInitContainers(), false)
        .filter(c -> c.exitCode().isPresent() && rule.exitCodes().contains(c.exitCode().getAsInt()))
        .findFirst();
  }

  /** Where a finished pod stands among those of its group the rule selects, newest first (0: the newest). */
  private record Rank(int position, int of, String group, int keep) {
    boolean kept() {
      return position < keep;
    }

    @Override
    public String toString() {
      return "number " + (position + 1) + " of " + of + " of " + group + " by finish time, rule keeps " + keep;
    }
  }

  private static Rank rank(Rule rule, Rule.Retention retention, PodRecord pod, ClusterView view) {
    String group = pod.retentionGroup();
    List<PodRecord> history = view.podsInNamespace(pod.namespace()).stream()
        .filter(p -> (retention.perNamespace() || p.retentionGroup().equals(group)) && ranked(rule, p, view))
        .sorted(Comparator.comparing(PodRecord::finishedAt).reversed().thenComparing(PodRecord::key))
        .toList();
    int position = 0;
    while (position < history.size() && !history.get(position).key().equals(pod.key())) {
      position++;
    }
    return new Rank(position, history.size(), retentionGroupName(retention, pod), retention.keep());
  }

  /**
   * Whether the pod is among those a rule with keepLast ranks (in its group, newest finish first, then by key): a
   * finished pod, not terminating, that the rule selects.
   */
  static boolean ranked(Rule rule, PodRecord pod, ClusterView view) {
    return pod.terminated() && !pod.terminating() && selects(rule, pod, view).isPresent();
  }

  /** The group keepLast counts the pod in, as reasons name it. */
  static String retentionGroupName(Rule.Retention retention, PodRecord pod) {
    String group = pod.retentionGroup();
    return retention.perNamespace() ? "namespace " + pod.namespace() : group.isEmpty() ? "the bare pods" : group;
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
        return Optional.of(PodFacts.describe(pod));
      }
      if (pod.reason().filter(name::equals).isPresent()) {
        return Optional.of(pod.phase() + " (reason " + name + ")");
      }
      // A plain loop: this runs for every state of every rule of every pod in a pass.
      for (ContainerStatus c : pod.containers()) {
        if (Containers.considered(c, rule.includingInitContainers(), rule.includingEphemeralContainers())
            && (name.equals(c.waitingReason().orElse(null)) || name.equals(c.terminatedReason().orElse(null)))) {
          return Optional.of(name + " (" + PodFacts.container(c) + ")");
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

  private static String reason(Rule rule, PodRecord pod, String matched, Optional<String> written, Instant now) {
    StringBuilder reason = new StringBuilder(matched);
    PodFacts.ended(pod).ifPresent(ended -> reason.append(", ").append(ended));
    if (rule.maxAgeAfterFinish().isPresent() || (rule.ttlFrom().isPresent() && pod.terminated())) {
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
    if (written.isPresent()) {
      reason.append(" honours ").append(written.get());
    } else if (rule.maxAge().isEmpty() && rule.maxAgeAfterFinish().isEmpty()) {
      reason.append(" removes it in this state");
    }
    return reason.toString();
  }

  /**
   * The pod's phase (and pod reason) and the reasons its containers the rule counts wait or ended with: what states are
   * matched against; then the reasons of those it does not count (an init or ephemeral container, without the rule's
   * switch for it), said apart, so that none reads as a reason the rule overlooked.
   */
  private static String state(PodRecord pod, Rule rule) {
    List<String> counted = new ArrayList<>();
    List<String> uncounted = new ArrayList<>();
    pod.reason().ifPresent(r -> counted.add("reason " + r));
    for (ContainerStatus c : pod.containers()) {
      Optional<String> reason = c.waitingReason().or(c::terminatedReason);
      if (reason.isEmpty()) {
        continue;
      }
      if (Containers.considered(c, rule.includingInitContainers(), rule.includingEphemeralContainers())) {
        counted.add(PodFacts.container(c) + " " + reason.get());
      } else {
        uncounted.add(PodFacts.container(c) + " " + reason.get() + (c.kind() == ContainerStatus.Kind.INIT
            ? " counts only with includingInitContainers: true"
            : " is not counted (only upstream's PodLifeTime counts one, with includingEphemeralContainers: true)"));
      }
    }
    String phase = PodFacts.describe(pod);
    // A finished pod is matched by the rule's finished states only (matchingState): those are the ones it is not in.
    List<String> states = rule.states().stream().filter(st -> !pod.terminated() || st.terminal()).map(PodState::wireName).toList();
    return (counted.isEmpty() ? phase : phase + " (" + String.join(", ", counted) + ")") + " is not one of " + states
        + (states.size() < rule.states().size() ? " (a finished pod is matched by the rule's finished states only)" : "")
        + (uncounted.isEmpty() ? "" : "; " + String.join("; ", uncounted));
  }

  static String ago(Instant then, Instant now) {
    return Durations.format(Duration.between(then, now).withNanos(0));
  }

  private static Instant later(Instant a, Instant b) {
    return a.isAfter(b) ? a : b;
  }
}
