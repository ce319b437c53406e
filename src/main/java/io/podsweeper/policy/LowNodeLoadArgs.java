package io.podsweeper.policy;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Koordinator's LowNodeLoad: LowNodeUtilization on measured usage (NodeMetric or metrics.k8s.io) instead of
 * requests, in percent of the node's allocatable, per resource: cpu, memory, other measured resources (extended
 * resources such as {@code example.com/foo}), and {@code pods} (the number of pods on the node). Koordinator's
 * argument names.
 *
 * @param paused the strategy does nothing
 * @param nodeMetricExpiration a measurement older than this (at the pass's time) is stale: the node takes no part
 * @param namespaces {@code evictableNamespaces}: include or exclude, exact names
 * @param nodeSelector only nodes matching it take part
 * @param podSelectors a pod is a candidate when it matches any of them (or there are none)
 * @param nodeFit a candidate needs a measured usage and a destination that takes it and stays within its high
 *     thresholds with it
 * @param lowThresholds a node is underloaded when every listed resource is at or below its value
 * @param highThresholds a node is overloaded when any listed resource is above its value
 * @param prodLowThresholds with {@code prodHighThresholds}, the same on the usage of the node's Prod-tier pods only
 *     (Koordinator's tiers: {@link #prodTier}); both empty when not set
 * @param prodHighThresholds a node not overloaded as a whole but whose Prod pods use more than this gives up Prod pods
 * @param useDeviationThresholds all threshold maps are distances from the average usage
 * @param resourceWeights weigh each resource's share of a node when ordering nodes (busiest first) and pods
 *     (largest first)
 * @param consecutiveAbnormalities {@code anomalyCondition.consecutiveAbnormalities}: act on a node only once it has
 *     been overloaded in more than this many consecutive passes (1: at once)
 * @param detectorCacheTimeout a node's count of overloaded passes is forgotten after this long without a pass
 */
public record LowNodeLoadArgs(
    boolean paused,
    int numberOfNodes,
    Duration nodeMetricExpiration,
    NamespaceFilter namespaces,
    LabelSelector nodeSelector,
    List<LabelSelector> podSelectors,
    boolean nodeFit,
    Map<String, Double> lowThresholds,
    Map<String, Double> highThresholds,
    Map<String, Double> prodLowThresholds,
    Map<String, Double> prodHighThresholds,
    boolean useDeviationThresholds,
    Map<String, Long> resourceWeights,
    int consecutiveAbnormalities,
    Duration detectorCacheTimeout)
    implements StrategyArgs {
  public static final String NAME = "LowNodeLoad";
  /** A threshold on this resource counts the pods on the node; every other resource is measured. */
  public static final String PODS = "pods";
  public static final Duration DEFAULT_EXPIRATION = Duration.ofSeconds(180);
  public static final int DEFAULT_CONSECUTIVE_ABNORMALITIES = 5;
  public static final Duration DEFAULT_DETECTOR_CACHE_TIMEOUT = Duration.ofMinutes(5);

  public LowNodeLoadArgs {
    podSelectors = List.copyOf(podSelectors);
    lowThresholds = Map.copyOf(lowThresholds);
    highThresholds = Map.copyOf(highThresholds);
    prodLowThresholds = Map.copyOf(prodLowThresholds);
    prodHighThresholds = Map.copyOf(prodHighThresholds);
    resourceWeights = Map.copyOf(resourceWeights);
  }

  /** The same arguments limited to {@code filter}'s namespaces (Koordinator's MigrationController namespaces). */
  public LowNodeLoadArgs withNamespaces(NamespaceFilter filter) {
    return new LowNodeLoadArgs(paused, numberOfNodes, nodeMetricExpiration, filter, nodeSelector, podSelectors, nodeFit, lowThresholds,
        highThresholds, prodLowThresholds, prodHighThresholds, useDeviationThresholds, resourceWeights, consecutiveAbnormalities,
        detectorCacheTimeout);
  }

  @Override
  public String strategyName() {
    return NAME;
  }
}
