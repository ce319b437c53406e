package io.podsweeper.cluster;

/** Told about every pod change, on an informer thread, after the cache has the new state: must not block. */
public interface PodListener {
  void podChanged(PodRecord pod);

  void podDeleted(PodRecord pod);

  /** A namespace's labels changed: namespace selectors may now match its pods differently. */
  void namespaceChanged(String namespace);
}
