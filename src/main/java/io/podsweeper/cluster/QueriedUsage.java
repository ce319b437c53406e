package io.podsweeper.cluster;

import java.util.Map;

/** The answer to a Prometheus usage query: each node's usage in percent (the sample's 0 to 1, times 100). */
public record QueriedUsage(Map<String, Double> percentByNode) {
  public QueriedUsage {
    percentByNode = Map.copyOf(percentByNode);
  }
}
