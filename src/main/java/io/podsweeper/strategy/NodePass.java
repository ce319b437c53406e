package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.QueriedUsage;
import io.podsweeper.policy.Limits;
import io.podsweeper.policy.Profile;
import io.podsweeper.policy.PrometheusQuery;
import io.podsweeper.safety.RemovalBudget;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * One profile's share of a pass: its node set (Ready nodes matching the node selector, by name), the pods on each,
 * its evictor, and the budget and decisions shared by every profile. A pod decided earlier in the pass is gone for
 * later strategies, as in upstream's dry run.
 */
final class NodePass {
  enum Outcome {
    EVICTED,
    NOT_EVICTABLE,
    NODE_LIMIT,
    TOTAL_LIMIT
  }

  final ClusterView view;
  final Instant now;
  final Profile profile;
  final Evictor evictor;
  /** The policy's limits: a plan's moves must fit in one window of them. */
  final Limits limits;
  private final List<NodeRecord> nodes;
  private final RemovalBudget budget;
  private final Set<String> decided;
  private final List<Decision> decisions;
  private final List<String> notes;
  private final List<String> faults;
  private final List<RoomPlan> plans;
  private final Map<PrometheusQuery, Optional<QueriedUsage>> answers = new HashMap<>();

  NodePass(ClusterView view, Instant now, Profile profile, Evictor evictor, Limits limits, RemovalBudget budget, Set<String> decided,
      List<Decision> decisions, List<String> notes, List<String> faults, List<RoomPlan> plans) {
    this.view = view;
    this.now = now;
    this.profile = profile;
    this.evictor = evictor;
    this.limits = limits;
    this.budget = budget;
    this.decided = decided;
    this.decisions = decisions;
    this.notes = notes;
    this.faults = faults;
    this.plans = plans;
    this.nodes = view.nodes().stream().filter(n -> inNodeSet(profile, Optional.of(n))).sorted(Comparator.comparing(NodeRecord::name)).toList();
  }

  /** Upstream profiles see only Ready nodes matching the node selector; Podsweeper's rules see every pod. */
  static boolean inNodeSet(Profile profile, Optional<NodeRecord> node) {
    return node.isPresent() && node.get().ready() && profile.nodeSelector().map(s -> s.matches(node.get().labels())).orElse(true);
  }

  List<NodeRecord> nodes() {
    return nodes;
  }

  /**
   * Prometheus' answer to {@code query}, asked once per pass: every node of the pass is judged on the same answer,
   * and a later pass never acts again on an answer a pod already moved on.
   */
  Optional<QueriedUsage> queriedUsage(PrometheusQuery query) {
    return answers.computeIfAbsent(query, view::queriedUsage);
  }

  /** The pods bound to {@code node} that are not finished and not decided yet, by key (upstream's ListPodsOnANode). */
  List<PodRecord> pods(NodeRecord node) {
    return view.podsOnNode(node.name()).stream()
        .filter(p -> !p.terminated() && !decided.contains(p.key()))
        .sorted(Comparator.comparing(PodRecord::key))
        .toList();
  }

  boolean decided(PodRecord pod) {
    return decided.contains(pod.key());
  }

  /**
   * Upstream's Filter at this pass's instant: the evictor's filter, and minPodAge (a pod younger than that stays, also
   * out of the counts of the strategies that count pods).
   */
  Optional<String> filter(PodRecord pod) {
    return judged(pod, () -> evictor.filter(pod, view).or(() -> evictor.tooYoung(pod, now)));
  }

  /** Upstream's Filter and PreEvictionFilter (nodeFit) at this pass's instant: empty if the pod may go. */
  Optional<String> protection(PodRecord pod) {
    return judged(pod, () -> evictor.protection(pod, view).or(() -> evictor.tooYoung(pod, now)));
  }

  /**
   * Why the pod must stay, by {@code judge}; a pod whose judging throws stays too, as a fault of the pass: one pod's
   * value stops neither the pass nor any other pod.
   */
  Optional<String> judged(PodRecord pod, Supplier<Optional<String>> judge) {
    try {
      return judge.get();
    } catch (RuntimeException e) {
      return Optional.of(fault(pod.key(), e));
    }
  }

  /** Notes what threw while judging {@code what} (a pod's key, or a strategy), and says so in a reason. */
  String fault(String what, RuntimeException e) {
    String why = "judging it failed: " + e;
    faults.add(profile.name() + ": " + what + ": " + why);
    return why;
  }

  /**
   * The evictor's protections but nodeFit, and minPodAge, at this pass's instant: for a strategy that places the pod
   * itself (MakeRoom). Empty if the pod may go.
   */
  Optional<String> movable(PodRecord pod) {
    return evictor.protectionWithoutNodeFit(pod, view).or(() -> evictor.tooYoung(pod, now));
  }

  /** The plans made so far in this pass, by every profile. */
  List<RoomPlan> plans() {
    return plans;
  }

  void plan(RoomPlan plan) {
    plans.add(plan);
  }

  /** Evicts the pod if the evictor lets it go and the limits allow, with a reason a person can check. */
  Outcome evict(PodRecord pod, String strategy, String reason) {
    if (decided.contains(pod.key()) || protection(pod).isPresent()) {
      return Outcome.NOT_EVICTABLE;
    }
    return take(Decision.of(pod, strategy, profile.name(), profile.name(), reason, now));
  }

  /** Takes a decision already checked against the evictor, within the limits. */
  Outcome take(Decision decision) {
    return take(decision, budget, decided, decisions);
  }

  /** Takes a decision within the pass's limits: {@code decided} and {@code decisions} get it if they allow it. */
  static Outcome take(Decision decision, RemovalBudget budget, Set<String> decided, List<Decision> decisions) {
    Optional<String> limit = budget.take(decision.removal());
    if (limit.isPresent()) {
      return switch (limit.get()) {
        case RemovalBudget.TOTAL_REACHED -> Outcome.TOTAL_LIMIT;
        case RemovalBudget.NODE_REACHED -> Outcome.NODE_LIMIT;
        default -> Outcome.NOT_EVICTABLE;
      };
    }
    decided.add(decision.podKey());
    decisions.add(decision);
    return Outcome.EVICTED;
  }

  void note(String strategy, String text) {
    notes.add(profile.name() + "/" + strategy + ": " + text);
  }
}
