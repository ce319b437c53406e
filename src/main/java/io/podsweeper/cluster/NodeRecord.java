package io.podsweeper.cluster;

import java.util.Map;

/** A node, as far as decisions need it. */
public record NodeRecord(String name, Map<String, String> labels, boolean ready, boolean unschedulable) {
  public NodeRecord {
    labels = Map.copyOf(labels);
  }
}
