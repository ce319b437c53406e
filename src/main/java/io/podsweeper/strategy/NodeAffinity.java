package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.NodeAffinityArgs;
import java.util.Optional;

/**
 * Upstream's RemovePodsViolatingNodeAffinity, once per listed type. Required: the pod has required node affinity,
 * its node no longer satisfies it (or its node selector), and some node of the node set would take it. Preferred:
 * the pod has preferred terms, some node would take it, and the best weight any node offers exceeds its node's.
 */
final class NodeAffinity implements NodeStrategy {
  private final NodeAffinityArgs args;

  NodeAffinity(NodeAffinityArgs args) {
    this.args = args;
  }

  @Override
  public void run(NodePass pass) {
    for (String type : args.nodeAffinityType()) {
      nodes:
      for (NodeRecord node : pass.nodes()) {
        for (PodRecord pod : pass.pods(node)) {
          if (!args.namespaces().matches(pod.namespace()) || !args.labelSelector().matches(pod.labels())) {
            continue;
          }
          Optional<String> reason = type.equals(NodeAffinityArgs.REQUIRED) ? required(pass, pod, node) : preferred(pass, pod, node);
          if (reason.isEmpty()) {
            continue;
          }
          switch (pass.evict(pod, NodeAffinityArgs.NAME, reason.get())) {
            case NODE_LIMIT -> {
              continue nodes;
            }
            case TOTAL_LIMIT -> {
              return;
            }
            default -> { }
          }
        }
      }
    }
  }

  private static Optional<String> required(NodePass pass, PodRecord pod, NodeRecord node) {
    if (pod.scheduling().requiredNodeAffinity().isEmpty() || pod.scheduling().matchesNode(node.labels())) {
      return Optional.empty();
    }
    return Evictor.anyFit(pod, pass.nodes(), pass.view)
        .map(fit -> "node " + node.name() + " no longer satisfies the pod's required node affinity; node " + fit.name() + " does");
  }

  private static Optional<String> preferred(NodePass pass, PodRecord pod, NodeRecord node) {
    if (pod.scheduling().preferredNodeAffinity().isEmpty() || Evictor.anyFit(pod, pass.nodes(), pass.view).isEmpty()) {
      return Optional.empty();
    }
    int current = pod.scheduling().preferredWeight(node.labels());
    Optional<NodeRecord> best = pass.nodes().stream()
        .max(java.util.Comparator.comparingInt((NodeRecord n) -> pod.scheduling().preferredWeight(n.labels())));
    int bestWeight = best.map(n -> pod.scheduling().preferredWeight(n.labels())).orElse(0);
    if (bestWeight <= current) {
      return Optional.empty();
    }
    return Optional.of("node " + node.name() + " offers preferred node affinity weight " + current + "; node "
        + best.get().name() + " offers " + bestWeight);
  }
}
