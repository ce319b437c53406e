package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PodLifeTimeArgs;
import io.podsweeper.policy.Profile;
import io.podsweeper.policy.RemoveFailedPodsArgs;
import io.podsweeper.policy.StrategyArgs;
import io.podsweeper.policy.TooManyRestartsArgs;
import io.podsweeper.safety.RemovalBudget;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A policy, compiled: every profile's strategies behind its evictor. {@link #evaluate} answers for one pod (what
 * the live service asks on every event and deadline); {@link #plan} runs one whole pass the way upstream does
 * (what {@code plan} prints). Both use the same strategies and filters.
 */
public final class PolicyEvaluator {
  private record CompiledProfile(Profile profile, Evictor evictor, List<PodStrategy> strategies) {}

  private final Policy policy;
  private final List<CompiledProfile> profiles;

  public PolicyEvaluator(Policy policy) {
    this.policy = policy;
    this.profiles = policy.profiles().stream()
        .map(p -> new CompiledProfile(p, new Evictor(p.evictor()), p.deschedule().stream().map(a -> strategy(a, p)).toList()))
        .toList();
  }

  private static PodStrategy strategy(StrategyArgs args, Profile profile) {
    if (args instanceof PodLifeTimeArgs a) {
      return new PodLifeTime(a.rules());
    }
    if (args instanceof RemoveFailedPodsArgs a) {
      return new RemoveFailedPods(a, profile.name());
    }
    return new TooManyRestarts((TooManyRestartsArgs) args, profile.name());
  }

  public Policy policy() {
    return policy;
  }

  /** The earliest verdict of any strategy of any profile whose evictor lets the pod go, or empty. */
  public Optional<Verdict> evaluate(PodRecord pod, ClusterView view) {
    Verdict best = null;
    for (CompiledProfile p : profiles) {
      if (!inScope(p.profile(), pod, view)) {
        continue;
      }
      Verdict earliest = null;
      for (PodStrategy s : p.strategies()) {
        Optional<Verdict> v = s.evaluate(pod, view);
        if (v.isPresent() && (earliest == null || v.get().dueAt().isBefore(earliest.dueAt()))) {
          earliest = v.get();
        }
      }
      if (earliest == null || p.evictor().protection(pod, view).isPresent()) {
        continue;
      }
      earliest = earliest.notBefore(p.evictor().evictableFrom(pod));
      if (best == null || earliest.dueAt().isBefore(best.dueAt())) {
        best = earliest;
      }
    }
    return Optional.ofNullable(best);
  }

  /**
   * One pass at {@code now}, as upstream runs it: profile by profile, strategy by strategy, candidates in the
   * strategy's order, each through the evictor and the limits; a pod is decided at most once.
   */
  public List<Decision> plan(ClusterView view, Instant now) {
    RemovalBudget budget = new RemovalBudget(policy.limits());
    List<Decision> decisions = new ArrayList<>();
    Set<String> decided = new HashSet<>();
    for (CompiledProfile p : profiles) {
      for (PodStrategy strategy : p.strategies()) {
        List<PodRecord> candidates = new ArrayList<>();
        for (PodRecord pod : view.pods()) {
          if (!decided.contains(pod.key()) && inScope(p.profile(), pod, view)) {
            candidates.add(pod);
          }
        }
        candidates.sort(strategy.candidateOrder());
        for (PodRecord pod : candidates) {
          Optional<Verdict> verdict = strategy.evaluate(pod, view)
              .map(v -> v.notBefore(p.evictor().evictableFrom(pod)))
              .filter(v -> v.isDue(now));
          if (verdict.isEmpty() || p.evictor().protection(pod, view).isPresent()) {
            continue;
          }
          Decision decision = verdict.get().decide(pod, now);
          Optional<String> limit = budget.take(decision);
          if (limit.isPresent()) {
            if (limit.get().equals(RemovalBudget.TOTAL_REACHED)) {
              break;
            }
            continue;
          }
          decided.add(pod.key());
          decisions.add(decision);
        }
      }
    }
    return decisions;
  }

  /** Upstream profiles see only pods bound to a Ready node in their node set; Podsweeper's rules see every pod. */
  private static boolean inScope(Profile profile, PodRecord pod, ClusterView view) {
    if (!profile.readyNodesOnly()) {
      return true;
    }
    Optional<NodeRecord> node = pod.scheduled() ? view.node(pod.nodeName()) : Optional.empty();
    return node.isPresent() && node.get().ready()
        && profile.nodeSelector().map(s -> s.matches(node.get().labels())).orElse(true);
  }
}
