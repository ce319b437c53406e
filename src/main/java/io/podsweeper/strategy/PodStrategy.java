package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.PodRecord;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * A strategy that decides pod by pod, from the pod's own state and timestamps: PodLifeTime, RemoveFailedPods,
 * RemovePodsHavingTooManyRestarts. Pure: the same pod and view always give the same verdict.
 */
public interface PodStrategy {
  /** The upstream name, as in metrics and decisions. */
  String name();

  /** The earliest moment this strategy wants the pod gone, or empty if it never will as the pod is now. */
  Optional<Verdict> evaluate(PodRecord pod, ClusterView view);

  /** The order in which upstream takes its candidates within one pass (it matters once a limit is reached). */
  Comparator<PodRecord> candidateOrder();

  /**
   * Why the strategy itself leaves a pod it selects (a protection of one of Podsweeper's own rules, which a rule may
   * lift), as {@code explain} says it; empty if none does. The evictor's protections are the evictor's to say.
   */
  default Optional<String> ruleProtection(PodRecord pod, ClusterView view) {
    return Optional.empty();
  }

  /** For {@code explain}: one line per rule of the strategy, saying what it makes of the pod; none for a strategy without rules. */
  default List<String> explainRules(PodRecord pod, ClusterView view, Instant now) {
    return List.of();
  }
}
