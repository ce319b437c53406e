package io.podsweeper.kube;

import com.fasterxml.jackson.databind.JsonNode;
import io.podsweeper.cluster.NodeUsage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Measured usage objects read as {@link NodeUsage}: Koordinator's {@code NodeMetric} and metrics-server's
 * {@code NodeMetrics} and {@code PodMetrics}, as a snapshot file holds them or the API serves them. An object without
 * a measurement time or usage gives nothing, so its node counts as not measured, never as idle.
 */
final class NodeUsages {
  /** Koordinator's NodeMetric, written by koordlet on every node. */
  static final String NODE_METRIC_API = "slo.koordinator.sh/v1alpha1";
  static final String NODE_METRIC = "NodeMetric";
  /** metrics-server's resource metrics API. */
  static final String METRICS_API = "metrics.k8s.io/v1beta1";
  static final String NODE_METRICS = "NodeMetrics";
  static final String POD_METRICS = "PodMetrics";

  private NodeUsages() {}

  /**
   * A NodeMetric: usage is {@code status.nodeMetric.systemUsage} plus every {@code status.podsMetric[].podUsage} (as
   * Koordinator adds it up), measured at {@code status.updateTime}.
   */
  static Optional<NodeUsage> fromNodeMetric(JsonNode item) {
    JsonNode status = item.path("status");
    Optional<Instant> at = PodRecords.time(status.path("updateTime").asText(null));
    if (at.isEmpty() || !status.path("nodeMetric").isObject()) {
      return Optional.empty();
    }
    Map<String, Long> usage = resources(status.path("nodeMetric").path("systemUsage").path("resources"));
    Map<String, Map<String, Long>> pods = new HashMap<>();
    for (JsonNode pod : status.path("podsMetric")) {
      Map<String, Long> podUsage = resources(pod.path("podUsage").path("resources"));
      podUsage.forEach((r, v) -> usage.merge(r, v, Long::sum));
      pods.put(pod.path("namespace").asText() + "/" + pod.path("name").asText(), podUsage);
    }
    return Optional.of(new NodeUsage(item.path("metadata").path("name").asText(), usage, at.get(), NODE_METRIC, pods));
  }

  /** A metrics.k8s.io NodeMetrics: {@code usage} at {@code timestamp}; its pods' usage comes from PodMetrics. */
  static Optional<NodeUsage> fromNodeMetrics(JsonNode item) {
    Optional<Instant> at = PodRecords.time(item.path("timestamp").asText(null));
    if (at.isEmpty() || !item.path("usage").isObject()) {
      return Optional.empty();
    }
    return Optional.of(new NodeUsage(item.path("metadata").path("name").asText(), resources(item.path("usage")), at.get(), "metrics.k8s.io",
        Map.of()));
  }

  /** A metrics.k8s.io PodMetrics, by {@code namespace/name}: the sum of its containers' usage. */
  static Map.Entry<String, Map<String, Long>> fromPodMetrics(JsonNode item) {
    Map<String, Long> usage = new HashMap<>();
    for (JsonNode container : item.path("containers")) {
      resources(container.path("usage")).forEach((r, v) -> usage.merge(r, v, Long::sum));
    }
    JsonNode metadata = item.path("metadata");
    return Map.entry(metadata.path("namespace").asText() + "/" + metadata.path("name").asText(), usage);
  }

  /** Adds each pod's measured usage to the usage of the node it runs on ({@code nodeOf}), where not measured yet. */
  static List<NodeUsage> withPods(List<NodeUsage> nodes, Map<String, Map<String, Long>> podUsage,
      Function<String, Optional<String>> nodeOf) {
    Map<String, Map<String, Map<String, Long>>> byNode = new HashMap<>();
    podUsage.forEach((pod, usage) -> nodeOf.apply(pod).ifPresent(node -> byNode.computeIfAbsent(node, n -> new HashMap<>()).put(pod, usage)));
    List<NodeUsage> out = new ArrayList<>();
    for (NodeUsage n : nodes) {
      Map<String, Map<String, Long>> pods = new HashMap<>(byNode.getOrDefault(n.node(), Map.of()));
      pods.putAll(n.pods());
      out.add(new NodeUsage(n.node(), n.usage(), n.measuredAt(), n.source(), pods));
    }
    return out;
  }

  /** A resource list ({@code cpu: 250m, memory: 1Gi}): millicores for cpu, bytes for memory. */
  private static Map<String, Long> resources(JsonNode list) {
    Map<String, Long> out = new HashMap<>();
    list.fields().forEachRemaining(e -> out.put(e.getKey(), PodRecords.amount(e.getKey(), e.getValue().asText())));
    return out;
  }
}
