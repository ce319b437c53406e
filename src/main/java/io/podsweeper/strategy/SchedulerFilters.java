package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeSelectorTerm;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.cluster.Taint;
import io.podsweeper.cluster.Toleration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The kube-scheduler's (v1.29) filters that read only the pod and one node: NodeUnschedulable, TaintToleration,
 * NodeAffinity, NodePorts and NodeResourcesFit, with the scheduler's own words for a refusal. The filters that count
 * pods across topology domains (InterPodAffinity, PodTopologySpread) are {@link Simulation}'s.
 */
final class SchedulerFilters {
  /** The taint the scheduler reads a cordoned node as (NodeUnschedulable): a pod tolerating it may still go there. */
  static final Taint UNSCHEDULABLE = new Taint("node.kubernetes.io/unschedulable", "", "NoSchedule");

  private SchedulerFilters() {}

  /** A refusal: the filter (plugin) that refused the node, and why, as the scheduler says it. */
  record Unfit(String filter, String reason) {
    /** The refusal in a few words, for "Pending: ..." lines. */
    String brief() {
      return switch (filter) {
        case "NodeUnschedulable" -> "cordoned";
        case "TaintToleration" -> "taints";
        case "NodeAffinity" -> "node affinity";
        case "NodePorts" -> "host ports";
        case "NodeResourcesFit" -> reason.toLowerCase(java.util.Locale.ROOT);
        case "PodTopologySpread" -> "topology spread";
        case "InterPodAffinity" -> reason.contains("anti-affinity") ? "anti-affinity" : "pod affinity";
        default -> reason;
      };
    }
  }

  /** A cordoned node takes only pods tolerating {@link #UNSCHEDULABLE}. */
  static Optional<Unfit> nodeUnschedulable(PodRecord pod, NodeRecord node) {
    if (node.unschedulable() && !tolerated(pod.scheduling().tolerations(), UNSCHEDULABLE)) {
      return Optional.of(new Unfit("NodeUnschedulable", "node(s) were unschedulable"));
    }
    return Optional.empty();
  }

  /** Every NoSchedule and NoExecute taint must be tolerated; PreferNoSchedule is only a score. */
  static Optional<Unfit> taintToleration(PodRecord pod, NodeRecord node) {
    Optional<Taint> untolerated = untoleratedTaint(pod.scheduling().tolerations(), node);
    return untolerated.map(t -> new Unfit("TaintToleration", "node(s) had untolerated taint {" + t.key() + ": " + t.value() + "}"));
  }

  /** The first NoSchedule or NoExecute taint of the node the tolerations do not tolerate. */
  static Optional<Taint> untoleratedTaint(List<Toleration> tolerations, NodeRecord node) {
    for (Taint taint : node.taints()) {
      if (("NoSchedule".equals(taint.effect()) || "NoExecute".equals(taint.effect())) && !tolerated(tolerations, taint)) {
        return Optional.of(taint);
      }
    }
    return Optional.empty();
  }

  private static boolean tolerated(List<Toleration> tolerations, Taint taint) {
    for (Toleration t : tolerations) {
      if (t.tolerates(taint)) {
        return true;
      }
    }
    return false;
  }

  /** The node selector and the required node affinity (terms ORed; a term without requirements matches nothing). */
  static Optional<Unfit> nodeAffinity(PodRecord pod, NodeRecord node) {
    return matchesNodeAffinity(pod.scheduling(), node.labels()) ? Optional.empty()
        : Optional.of(new Unfit("NodeAffinity", "node(s) didn't match Pod's node affinity/selector"));
  }

  /**
   * The scheduler's reading of a node selector and required node affinity. Unlike {@link Scheduling#matchesNode}, a
   * term with no requirements matches nothing, as in the scheduler: a term of only {@code matchFields} (which records
   * do not keep, e.g. a DaemonSet pod's node name) is never taken to match every node.
   */
  static boolean matchesNodeAffinity(Scheduling scheduling, Map<String, String> labels) {
    for (Map.Entry<String, String> e : scheduling.nodeSelector().entrySet()) {
      if (!e.getValue().equals(labels.get(e.getKey()))) {
        return false;
      }
    }
    if (scheduling.requiredNodeAffinity().isEmpty()) {
      return true;
    }
    for (NodeSelectorTerm term : scheduling.requiredNodeAffinity()) {
      if (!term.requirements().isEmpty() && term.matches(labels)) {
        return true;
      }
    }
    return false;
  }

  /** The pod's host ports must be free on the node ({@code used}: those of the pods there). */
  static Optional<Unfit> nodePorts(PodRecord pod, Collection<Scheduling.HostPort> used) {
    for (Scheduling.HostPort wanted : pod.scheduling().hostPorts()) {
      for (Scheduling.HostPort taken : used) {
        if (wanted.conflicts(taken)) {
          return Optional.of(new Unfit("NodePorts", "node(s) didn't have free ports for the requested pod ports"));
        }
      }
    }
    return Optional.empty();
  }

  /**
   * One pod slot more than the node's pods (allocatable {@code pods}; none given: none allowed, as the scheduler reads
   * it), and each resource the pod requests within what the node's pods leave of its allocatable (a resource the node
   * does not offer: none of it).
   */
  static Optional<Unfit> resourcesFit(PodRecord pod, NodeRecord node, Map<String, Long> requested, int pods) {
    if (pods + 1 > node.allocatable().getOrDefault("pods", 0L)) {
      return Optional.of(new Unfit("NodeResourcesFit", "Too many pods"));
    }
    for (Map.Entry<String, Long> request : pod.scheduling().requests().entrySet()) {
      if (request.getValue() > 0
          && node.allocatable().getOrDefault(request.getKey(), 0L) < request.getValue() + requested.getOrDefault(request.getKey(), 0L)) {
        return Optional.of(new Unfit("NodeResourcesFit", "Insufficient " + request.getKey()));
      }
    }
    return Optional.empty();
  }
}
