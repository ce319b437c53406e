package io.podsweeper.cluster;

import java.util.List;
import java.util.Map;

/**
 * What the scheduler would check of a pod, for the evictor's nodeFit: node selector, required node affinity,
 * tolerations and resource requests (cpu in millicores, memory and others in bytes or units).
 */
public record Scheduling(
    Map<String, String> nodeSelector,
    List<NodeSelectorTerm> requiredNodeAffinity,
    List<Toleration> tolerations,
    Map<String, Long> requests) {
  public static final Scheduling NONE = new Scheduling(Map.of(), List.of(), List.of(), Map.of());

  public Scheduling {
    nodeSelector = Map.copyOf(nodeSelector);
    requiredNodeAffinity = List.copyOf(requiredNodeAffinity);
    tolerations = List.copyOf(tolerations);
    requests = Map.copyOf(requests);
  }
}
