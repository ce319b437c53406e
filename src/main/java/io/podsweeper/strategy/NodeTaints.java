package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Taint;
import io.podsweeper.policy.NodeTaintsArgs;
import java.util.List;
import java.util.Optional;

/**
 * Upstream's RemovePodsViolatingNodeTaints: node by node, pods that do not tolerate a NoSchedule or NoExecute taint
 * of their node (PreferNoSchedule with {@code includePreferNoSchedule}), restricted by included/excluded taints.
 */
final class NodeTaints implements NodeStrategy {
  private final NodeTaintsArgs args;

  NodeTaints(NodeTaintsArgs args) {
    this.args = args;
  }

  @Override
  public void run(NodePass pass) {
    nodes:
    for (NodeRecord node : pass.nodes()) {
      for (PodRecord pod : pass.pods(node)) {
        if (!args.namespaces().matches(pod.namespace()) || !args.labelSelector().matches(pod.labels())) {
          continue;
        }
        Optional<Taint> violated = node.taints().stream().filter(this::considered)
            .filter(t -> pod.scheduling().tolerations().stream().noneMatch(tol -> tol.tolerates(t)))
            .findFirst();
        if (violated.isEmpty()) {
          continue;
        }
        switch (pass.evict(pod, NodeTaintsArgs.NAME, "node " + node.name() + " has taint " + describe(violated.get())
            + " the pod does not tolerate")) {
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

  private boolean considered(Taint taint) {
    if (!args.includedTaints().isEmpty() && !listed(args.includedTaints(), taint)) {
      return false;
    }
    if (listed(args.excludedTaints(), taint)) {
      return false;
    }
    return switch (taint.effect()) {
      case "NoSchedule", "NoExecute" -> true;
      case "PreferNoSchedule" -> args.includePreferNoSchedule();
      default -> false;
    };
  }

  /** Entries are {@code key} (any value) or {@code key=value}. */
  private static boolean listed(List<String> entries, Taint taint) {
    return entries.contains(taint.key()) || entries.contains(taint.key() + "=" + taint.value());
  }

  static String describe(Taint t) {
    return t.key() + (t.value().isEmpty() ? "" : "=" + t.value()) + ":" + t.effect();
  }
}
