package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Taint;
import io.podsweeper.policy.RemoveDuplicatesArgs;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Upstream's RemoveDuplicates. Pods are duplicates on a node when they share namespace, every owner (kind and name)
 * and the same set of container images; bare pods, finished pods, pods of excluded owner kinds and pods the
 * evictor would not let go are not counted. Each owner's pods may keep ceil(count / feasible nodes) per node, where
 * the feasible nodes are those the duplicates could land on (taints with effect NoSchedule, node selector and
 * required node affinity); the rest of a node's duplicates go, unless fewer than two nodes are feasible.
 */
final class RemoveDuplicates implements NodeStrategy {
  private record Owner(String namespace, String kind, String name, String images) {
    @Override
    public String toString() {
      return kind + " " + namespace + "/" + name + " (images " + images.replace("#", ", ") + ")";
    }
  }

  private final RemoveDuplicatesArgs args;

  RemoveDuplicates(RemoveDuplicatesArgs args) {
    this.args = args;
  }

  @Override
  public void run(NodePass pass) {
    Map<Owner, Integer> occurrences = new TreeMap<>(java.util.Comparator.comparing(Owner::toString));
    Map<Owner, Map<String, List<PodRecord>>> duplicates = new TreeMap<>(java.util.Comparator.comparing(Owner::toString));
    for (NodeRecord node : pass.nodes()) {
      Set<List<String>> seenOnNode = new HashSet<>();
      for (PodRecord pod : pass.pods(node)) {
        if (pod.owners().isEmpty() || pod.images().isEmpty() || !args.namespaces().matches(pod.namespace())
            || pod.owners().stream().map(OwnerRef::kind).anyMatch(args.excludeOwnerKinds()::contains)
            || pass.protection(pod).isPresent()) {
          continue;
        }
        String images = String.join("#", new TreeSet<>(pod.images()));
        List<String> keys = new ArrayList<>();
        for (OwnerRef owner : pod.owners()) {
          occurrences.merge(owner(pod, owner, images), 1, Integer::sum);
          pod.images().forEach(image -> keys.add(pod.namespace() + "/" + owner.kind() + "/" + owner.name() + "/" + image));
        }
        keys.sort(null);
        if (!seenOnNode.add(keys)) {
          for (OwnerRef owner : pod.owners()) {
            duplicates.computeIfAbsent(owner(pod, owner, images), o -> new TreeMap<>())
                .computeIfAbsent(node.name(), n -> new ArrayList<>()).add(pod);
          }
        }
      }
    }
    for (Map.Entry<Owner, Map<String, List<PodRecord>>> e : duplicates.entrySet()) {
      List<NodeRecord> targets = targetNodes(e.getValue(), pass.nodes());
      if (targets.size() < 2) {
        pass.note(RemoveDuplicatesArgs.NAME, "duplicates of " + e.getKey() + ": fewer than two feasible nodes, not spread");
        continue;
      }
      int count = occurrences.get(e.getKey());
      int perNode = (count + targets.size() - 1) / targets.size();
      nodes:
      for (Map.Entry<String, List<PodRecord>> onNode : e.getValue().entrySet()) {
        List<PodRecord> pods = onNode.getValue();
        // The list holds the duplicates, not the first pod of the owner on the node.
        if (pods.size() + 1 <= perNode) {
          continue;
        }
        String reason = (pods.size() + 1) + " pods of " + e.getKey() + " on node " + onNode.getKey() + "; " + count
            + " spread over " + targets.size() + " feasible nodes is at most " + perNode + " per node";
        for (PodRecord pod : pods.subList(perNode - 1, pods.size())) {
          switch (pass.evict(pod, RemoveDuplicatesArgs.NAME, reason)) {
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

  private static Owner owner(PodRecord pod, OwnerRef owner, String images) {
    return new Owner(pod.namespace(), owner.kind(), owner.name(), images);
  }

  /**
   * The nodes some duplicate could land on, counting only nodes that are feasible for a pod with more than one
   * feasible node (upstream's getTargetNodes; resources are not considered).
   */
  private static List<NodeRecord> targetNodes(Map<String, List<PodRecord>> podsByNode, List<NodeRecord> nodes) {
    Map<String, NodeRecord> targets = new LinkedHashMap<>();
    Set<Object> distinct = new HashSet<>();
    for (List<PodRecord> pods : podsByNode.values()) {
      for (PodRecord pod : pods) {
        var s = pod.scheduling();
        if (!distinct.add(List.of(Set.copyOf(s.tolerations()), s.requiredNodeAffinity(), s.nodeSelector()))) {
          continue;
        }
        List<NodeRecord> feasible = nodes.stream().filter(n -> s.matchesNode(n.labels()) && n.taints().stream()
            .filter(t -> "NoSchedule".equals(t.effect()) || "NoExecute".equals(t.effect()))
            .allMatch((Taint t) -> s.tolerations().stream().anyMatch(tol -> tol.tolerates(t)))).toList();
        if (feasible.size() > 1) {
          feasible.forEach(n -> targets.put(n.name(), n));
        }
      }
    }
    return List.copyOf(targets.values());
  }
}
