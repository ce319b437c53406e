package io.podsweeper.strategy;

import io.podsweeper.cluster.PodRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** A pod-by-pod strategy run as a step of a pass: candidates in the strategy's order, each through the evictor. */
record LifetimePass(PodStrategy strategy) implements NodeStrategy {
  @Override
  public void run(NodePass pass) {
    List<PodRecord> candidates = new ArrayList<>();
    for (PodRecord pod : pass.view.pods()) {
      if (!pass.decided(pod) && PolicyEvaluator.inScope(pass.profile, pod, pass.view)) {
        candidates.add(pod);
      }
    }
    candidates.sort(strategy.candidateOrder());
    for (PodRecord pod : candidates) {
      Optional<Verdict> verdict;
      try {
        verdict = strategy.evaluate(pod, pass.view)
            .map(v -> v.notBefore(pass.evictor.evictableFrom(pod)).inProfile(pass.profile.name()))
            .filter(v -> v.isDue(pass.now));
      } catch (RuntimeException e) {
        pass.fault(pod.key(), e);
        continue;
      }
      if (verdict.isEmpty() || pass.judged(pod, () -> pass.evictor.protection(pod, pass.view)).isPresent()) {
        continue;
      }
      if (pass.take(verdict.get().decide(pod, pass.now)) == NodePass.Outcome.TOTAL_LIMIT) {
        return;
      }
    }
  }
}
