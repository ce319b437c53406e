package io.podsweeper.cluster;

import java.util.Map;

/** A namespace and its labels (for namespace selectors). */
public record NamespaceRecord(String name, Map<String, String> labels) {
  public NamespaceRecord {
    labels = Map.copyOf(labels);
  }

  /** What the API server labels every namespace with since 1.21; added here so selectors work on older servers. */
  public static NamespaceRecord unknown(String name) {
    return new NamespaceRecord(name, Map.of("kubernetes.io/metadata.name", name));
  }
}
