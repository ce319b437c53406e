package io.podsweeper.policy;

import io.podsweeper.policy.CleanupPolicies.ClusterRails;
import io.podsweeper.policy.CleanupPolicies.Source;
import io.podsweeper.policy.CleanupPolicies.Verdict;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The verdicts on the PodCleanupPolicies, remembered from one judgement of them all to the next: a policy whose
 * namespace, name and spec are as they were, under the same guard rails, keeps its verdict and is not judged again
 * (judging compiles and estimates every CEL condition: about 0.16 s for a costly policy, so 40 s for 250 of them,
 * at each change of any one). What depends on the others (a namespace's count and its one budget) is worked out
 * anew each time. Only the verdicts of the latest judgement are kept.
 */
public final class Judgements {
  private ClusterRails rails;
  private Map<Source, Verdict> last = Map.of();

  /** The verdicts on {@code oldestFirst}, in the same order, as {@link CleanupPolicies#judgeAll(List, ClusterRails)}. */
  public synchronized List<Verdict> judgeAll(List<Source> oldestFirst, ClusterRails cluster) {
    Map<Source, Verdict> before = cluster.equals(rails) ? last : Map.of();
    Map<Source, Verdict> now = new HashMap<>();
    List<Verdict> verdicts = CleanupPolicies.judgeAll(oldestFirst, cluster,
        policy -> now.computeIfAbsent(policy, p -> before.containsKey(p) ? before.get(p) : CleanupPolicies.judge(p, cluster)));
    rails = cluster;
    last = now;
    return verdicts;
  }
}
