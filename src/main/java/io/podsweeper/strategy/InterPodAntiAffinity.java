package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling.PodAffinityTerm;
import io.podsweeper.policy.InterPodAntiAffinityArgs;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Upstream's RemovePodsViolatingInterPodAntiAffinity: node by node, lowest priority first, pods whose own required
 * pod anti-affinity selects another pod in the same topology domain. As upstream, only the pods passing the
 * plugin's namespaces and labelSelector, on the node set, count on either side; an evicted pod stops counting, so
 * of two pods excluding each other only one goes. As upstream, only the pod holding the term is a candidate: a pod
 * that merely matches another pod's term is not evicted for it (the holder is, when its node's turn comes).
 */
final class InterPodAntiAffinity implements NodeStrategy {
  private final InterPodAntiAffinityArgs args;

  InterPodAntiAffinity(InterPodAntiAffinityArgs args) {
    this.args = args;
  }

  @Override
  public void run(NodePass pass) {
    Map<String, List<PodRecord>> counted = new HashMap<>();
    for (NodeRecord node : pass.nodes()) {
      counted.put(node.name(), new ArrayList<>(pass.pods(node).stream()
          .filter(p -> args.namespaces().matches(p.namespace()) && args.labelSelector().matches(p.labels())).toList()));
    }
    nodes:
    for (NodeRecord node : pass.nodes()) {
      for (PodRecord pod : counted.get(node.name()).stream().sorted(EvictionOrder.lowestPriorityFirst()).toList()) {
        Optional<String> reason = violation(pod, node, pass, counted);
        if (reason.isEmpty()) {
          continue;
        }
        switch (pass.evict(pod, InterPodAntiAffinityArgs.NAME, reason.get())) {
          case EVICTED -> counted.get(node.name()).remove(pod);
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

  /** The first counted pod one of {@code pod}'s terms excludes from its domain, described; empty if none. */
  private static Optional<String> violation(PodRecord pod, NodeRecord node, NodePass pass, Map<String, List<PodRecord>> counted) {
    for (PodAffinityTerm term : pod.scheduling().requiredPodAntiAffinity()) {
      for (NodeRecord other : pass.nodes()) {
        if (!term.sameDomain(node, other)) {
          continue;
        }
        for (PodRecord candidate : counted.get(other.name())) {
          if (!candidate.key().equals(pod.key()) && term.selects(pod.namespace(), candidate, pass.view)) {
            return Optional.of(describe(term, node) + ", and pod " + candidate.key() + " runs there on node " + other.name());
          }
        }
      }
    }
    return Optional.empty();
  }

  private static String describe(PodAffinityTerm term, NodeRecord node) {
    String pods = term.selector().isEmpty() ? "every pod" : "pods matching " + term.selector().text();
    return "the pod's required anti-affinity excludes " + pods + " from its topology domain " + term.topologyKey() + "="
        + node.labels().get(term.topologyKey());
  }
}
