package io.podsweeper.cluster;

import java.util.Map;

/**
 * A namespace: its labels (for namespace selectors) and whether it carries the {@code podsweeper.io/protect}
 * annotation, which protects every pod in it from every strategy.
 */
public record NamespaceRecord(String name, Map<String, String> labels, boolean protectedByAnnotation) {
  public NamespaceRecord {
    labels = Map.copyOf(labels);
  }

  public NamespaceRecord(String name, Map<String, String> labels) {
    this(name, labels, false);
  }

  /** What the API server labels every namespace with since 1.21; added here so selectors work on older servers. */
  public static NamespaceRecord unknown(String name) {
    return new NamespaceRecord(name, Map.of("kubernetes.io/metadata.name", name));
  }
}
