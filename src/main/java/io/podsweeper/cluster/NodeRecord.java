package io.podsweeper.cluster;

import java.util.List;
import java.util.Map;

/** A node, as far as decisions need it: labels, readiness, taints and allocatable resources. */
public record NodeRecord(
    String name, Map<String, String> labels, boolean ready, boolean unschedulable, List<Taint> taints,
    Map<String, Long> allocatable) {
  public NodeRecord {
    labels = Map.copyOf(labels);
    taints = List.copyOf(taints);
    allocatable = Map.copyOf(allocatable);
  }
}
