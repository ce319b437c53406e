package io.podsweeper.cluster;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * A node's measured resource usage (cpu in millicores, memory in bytes), for LowNodeLoad. Read at the edge from
 * Koordinator's NodeMetric ({@code slo.koordinator.sh}) or from metrics-server ({@code metrics.k8s.io}).
 *
 * @param measuredAt when the source measured it (NodeMetric's {@code status.updateTime}, metrics.k8s.io's
 *     {@code timestamp}): decides whether it is still fresh
 * @param source where it came from, for reasons and notes, e.g. {@code NodeMetric} or {@code metrics.k8s.io}
 * @param pods the measured usage of the pods on the node, by {@code namespace/name}; a pod may be missing
 */
public record NodeUsage(String node, Map<String, Long> usage, Instant measuredAt, String source, Map<String, Map<String, Long>> pods) {
  public NodeUsage {
    usage = Map.copyOf(usage);
    pods = Map.copyOf(pods);
  }

  public Optional<Map<String, Long>> pod(String podKey) {
    return Optional.ofNullable(pods.get(podKey));
  }
}
