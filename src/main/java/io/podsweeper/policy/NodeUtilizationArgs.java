package io.podsweeper.policy;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * LowNodeUtilization ({@code high} false) or HighNodeUtilization ({@code high} true): node usage as the sum of the
 * requests of the pods on it (or, with {@code measuredUsage}, as metrics-server measures it), in percent of the
 * node's allocatable, per resource.
 *
 * @param thresholds a node is underutilized when every listed resource is at or below its value
 * @param targetThresholds LowNodeUtilization only: a node is overutilized when any listed resource is above its value
 * @param useDeviationThresholds LowNodeUtilization only: both maps are distances from the average usage
 * @param numberOfNodes act only when more nodes than this are underutilized
 * @param excludedNamespaces {@code evictableNamespaces.exclude}
 * @param onlyThresholdingResources HighNodeUtilization's {@code evictionModes: [OnlyThresholdingResources]}
 * @param nodeEvictionLimit LowNodeUtilization's {@code evictionLimits.node}
 * @param measuredUsage LowNodeUtilization's {@code metricsUtilization.source: KubernetesMetrics} (or the deprecated
 *     {@code metricsServer: true}): node and pod usage from metrics.k8s.io instead of requests
 * @param prometheus LowNodeUtilization's {@code metricsUtilization.source: Prometheus}: node usage from this query
 *     instead, as the one resource {@link PrometheusQuery#METRIC_RESOURCE}
 */
public record NodeUtilizationArgs(
    boolean high,
    Map<String, Double> thresholds,
    Map<String, Double> targetThresholds,
    boolean useDeviationThresholds,
    int numberOfNodes,
    List<String> excludedNamespaces,
    boolean onlyThresholdingResources,
    OptionalInt nodeEvictionLimit,
    boolean measuredUsage,
    Optional<PrometheusQuery> prometheus)
    implements StrategyArgs {
  public static final String LOW = "LowNodeUtilization";
  public static final String HIGH = "HighNodeUtilization";

  public NodeUtilizationArgs {
    thresholds = Map.copyOf(thresholds);
    targetThresholds = Map.copyOf(targetThresholds);
    excludedNamespaces = List.copyOf(excludedNamespaces);
  }

  @Override
  public String strategyName() {
    return high ? HIGH : LOW;
  }
}
