package io.podsweeper.policy;

import java.net.URI;
import java.util.Optional;

/**
 * LowNodeUtilization's {@code metricsUtilization} from Prometheus: an instant query whose vector gives each node's
 * usage as a fraction (a sample per node, labelled {@code instance} with the node's name, 0 to 1), and the server of
 * the policy's {@code metricsProviders} entry with {@code source: Prometheus}.
 */
public record PrometheusQuery(Server server, String query) {
  /**
   * @param authToken the Secret (in key {@code prometheusAuthToken}) holding the bearer token; empty: the pod's
   *     ServiceAccount token, when there is one
   */
  public record Server(URI url, Optional<SecretRef> authToken) {}

  public record SecretRef(String namespace, String name) {}

  /** The resource name of the measured usage, as upstream calls it in thresholds. */
  public static final String METRIC_RESOURCE = "MetricResource";
}
