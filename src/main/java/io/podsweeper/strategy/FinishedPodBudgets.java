package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.EvictorArgs;
import io.podsweeper.policy.FinishedPodBudget;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PodState;
import io.podsweeper.policy.Rule;
import io.podsweeper.safety.RemovalBudget;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A policy's budgets for finished pods, compiled (README "Finished-pod budget"): the cluster's (policy file), the
 * namespaces' own (PodCleanupPolicies), the keepLast rules they honour and the protections they respect. The decision
 * itself is a {@link BudgetLedger} over a view; here it is run once for {@code plan} ({@link #pass}), over time for the
 * forecast ({@link #forecast}) and for one pod for {@code explain}.
 *
 * <p>What a budget never removes: a pod of a phase it does not name, one younger than its minRetention since it
 * finished, one a keepLast rule of the policy keeps, and one a protection holds: {@code podsweeper.io/protect} on the
 * pod or its namespace, mirror and static pods, terminating pods (these count no more). The rule protections
 * (SystemCriticalPods, DaemonSetPods, BarePods) guard running and pending pods only: they hold no finished pod, for a
 * budget as for any rule that opts in to finished pods.
 */
public final class FinishedPodBudgets {
  public static final String STRATEGY = "FinishedPodBudget";
  /** The protections of Podsweeper's own rules for any pod: no DefaultEvictor argument applies. */
  private static final Evictor PROTECTIONS = new Evictor(EvictorArgs.NONE);

  private final Optional<FinishedPodBudget> cluster;
  private final Map<String, FinishedPodBudget> byNamespace;
  private final List<Rule> retentionRules;

  private FinishedPodBudgets(List<FinishedPodBudget> budgets, List<Rule> rules) {
    this.cluster = budgets.stream().filter(b -> b.namespace().isEmpty()).findFirst();
    this.byNamespace = budgets.stream().filter(b -> b.namespace().isPresent())
        .collect(Collectors.toUnmodifiableMap(b -> b.namespace().get(), Function.identity()));
    this.retentionRules = rules.stream().filter(r -> r.retention().isPresent()).toList();
  }

  /** The policy's budgets, honouring the keepLast of {@code rules} (every rule of the policy); empty if it has none. */
  static Optional<FinishedPodBudgets> of(Policy policy, List<Rule> rules) {
    return policy.finishedPodBudgets().isEmpty() ? Optional.empty() : Optional.of(new FinishedPodBudgets(policy.finishedPodBudgets(), rules));
  }

  Optional<FinishedPodBudget> cluster() {
    return cluster;
  }

  /** A namespace's own budget (a PodCleanupPolicy's). */
  Optional<FinishedPodBudget> of(String namespace) {
    return Optional.ofNullable(byNamespace.get(namespace));
  }

  List<Rule> retentionRules() {
    return retentionRules;
  }

  Optional<String> protection(PodRecord pod, ClusterView view) {
    return PROTECTIONS.filter(pod, view);
  }

  /** A ledger of every pod of the view: O(pods × log). The live service keeps it up to date with each pod's events. */
  public BudgetLedger ledger(ClusterView view) {
    BudgetLedger ledger = new BudgetLedger(this, view);
    view.pods().forEach(ledger::podChanged);
    return ledger;
  }

  /**
   * The budgets' removals in a pass at {@code now} (what {@code plan} prints), after the pods {@code decided} earlier in
   * it, which count no more; each within the pass's limits. Notes say what the cluster's budget counts and where a
   * budget cannot be held.
   */
  void pass(ClusterView view, Instant now, RemovalBudget limits, Set<String> decided, List<Decision> decisions, List<String> notes) {
    BudgetLedger ledger = ledger(view);
    decided.forEach(ledger::reserve);
    int before = ledger.usage(now).clusterPods();
    int taken = 0;
    int limited = 0;
    for (Optional<Decision> next = ledger.next(now); next.isPresent(); next = ledger.next(now)) {
      // Reserved whatever the limits say, as the live service holds a limited pod until the next window.
      ledger.reserve(next.get().podKey());
      NodePass.Outcome outcome = NodePass.take(next.get(), limits, decided, decisions);
      if (outcome == NodePass.Outcome.EVICTED) {
        taken++;
      } else {
        limited++;
      }
      if (outcome == NodePass.Outcome.TOTAL_LIMIT) {
        break;
      }
    }
    cluster.ifPresent(b -> notes.add(b.name() + ": " + BudgetLedger.number(before) + " " + BudgetLedger.pods(b) + " counted after the rules'"
        + " removals, budget " + BudgetLedger.number(b.maxPods()) + describe(b)));
    if (taken + limited > 0) {
      notes.add("finished-pod budgets: " + BudgetLedger.number(taken) + " removal(s)"
          + (limited > 0 ? ", " + BudgetLedger.number(limited) + " more held back by the limits" : ""));
    }
    notes.addAll(ledger.usage(now).notHeld());
  }

  /** E.g. " (at most 500 per namespace, minRetention 10m)". */
  private static String describe(FinishedPodBudget b) {
    return " (" + (b.maxPodsPerNamespace().isPresent() ? "at most " + BudgetLedger.number(b.maxPodsPerNamespace().getAsInt())
        + " per namespace, " : "")
        + "minRetention " + Durations.format(b.minRetention()) + ")";
  }

  /**
   * The budgets' removals by {@code until} if the pods stay as they are and the rules remove {@code ruleRemovals} at
   * their {@code dueAt}: what is over now goes now, then each pod over a budget when it becomes old enough, unless the
   * rules' removals have brought its namespace within by then. Each with the instant it goes as {@code dueAt}.
   */
  List<Decision> forecast(ClusterView view, Instant now, Instant until, List<Decision> ruleRemovals) {
    BudgetLedger ledger = ledger(view);
    List<Decision> byRules = ruleRemovals.stream().sorted(Comparator.comparing(Decision::dueAt)).toList();
    List<Decision> removals = new ArrayList<>();
    int rule = 0;
    Instant at = now;
    while (true) {
      for (; rule < byRules.size() && !byRules.get(rule).dueAt().isAfter(at); rule++) {
        ledger.reserve(byRules.get(rule).podKey());
      }
      for (Optional<Decision> next = ledger.next(at); next.isPresent(); next = ledger.next(at)) {
        removals.add(next.get());
        ledger.reserve(next.get().podKey());
      }
      Instant wake = ledger.wakeAt(at).orElse(null);
      if (rule < byRules.size() && (wake == null || byRules.get(rule).dueAt().isBefore(wake))) {
        wake = byRules.get(rule).dueAt();
      }
      if (wake == null || wake.isAfter(until)) {
        return removals;
      }
      at = wake;
    }
  }

  /** For {@code explain}: for a finished pod, each budget over its namespace, and whether it would remove the pod now. */
  List<String> explain(PodRecord pod, ClusterView view, Instant now) {
    if (!pod.terminated()) {
      return List.of();
    }
    BudgetLedger ledger = ledger(view);
    List<String> lines = new ArrayList<>();
    for (FinishedPodBudget budget : ledger.budgetsOf(pod.namespace())) {
      lines.add("finished-pod budget " + budget.name() + " (" + budget.phases().stream().map(PodState::wireName).sorted()
          .collect(Collectors.joining(", ")) + ", minRetention " + Durations.format(budget.minRetention()) + "): " + ledger.standing(pod.namespace(), budget));
      lines.add("  this pod: " + ledger.refusal(budget, pod, now).orElse("the budget may remove it now (its namespace's oldest removable"
          + " pods go first, while it is over)"));
    }
    return lines;
  }
}
