package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Policy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** One evaluation of a policy over a snapshot: the decisions due at {@code now}, oldest pod first. */
public final class Planner {
  private Planner() {}

  public static List<Decision> plan(Policy policy, ClusterSnapshot snapshot, Instant now) {
    LifetimeRules rules = new LifetimeRules(policy.rules());
    List<PodRecord> pods = new ArrayList<>(snapshot.pods());
    pods.sort(Comparator.comparing(PodRecord::creationTimestamp).thenComparing(PodRecord::key));
    List<Decision> decisions = new ArrayList<>();
    for (PodRecord pod : pods) {
      rules.evaluate(pod, snapshot.namespace(pod.namespace()))
          .filter(v -> v.isDue(now))
          .ifPresent(v -> decisions.add(v.decide(pod, now)));
    }
    return decisions;
  }
}
