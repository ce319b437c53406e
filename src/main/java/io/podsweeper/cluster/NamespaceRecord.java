package io.podsweeper.cluster;

import java.util.Map;

/**
 * A namespace: its labels (for namespace selectors), whether it carries the {@code podsweeper.io/protect}
 * annotation, which protects every pod in it from every strategy, and its per-pod lifetime annotations (the
 * default of its pods for rules with {@code ttlFrom}; only those keys, see PodRecords).
 */
public record NamespaceRecord(String name, Map<String, String> labels, boolean protectedByAnnotation, Map<String, String> annotations) {
  public NamespaceRecord {
    labels = Map.copyOf(labels);
    annotations = Map.copyOf(annotations);
  }

  public NamespaceRecord(String name, Map<String, String> labels, boolean protectedByAnnotation) {
    this(name, labels, protectedByAnnotation, Map.of());
  }

  public NamespaceRecord(String name, Map<String, String> labels) {
    this(name, labels, false);
  }

  /** What the API server labels every namespace with since 1.21; added here so selectors work on older servers. */
  public static NamespaceRecord unknown(String name) {
    return new NamespaceRecord(name, Map.of("kubernetes.io/metadata.name", name));
  }
}
