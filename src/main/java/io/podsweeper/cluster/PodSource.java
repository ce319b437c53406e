package io.podsweeper.cluster;

import java.util.Optional;

/** The live view the engine reads pods from: the informer cache in production, a map in unit tests. */
public interface PodSource extends ClusterView {
  Optional<PodRecord> pod(String key);

  /** True only while the view is known to be current (synced and watching): removals wait otherwise. */
  boolean isCurrent();

  /**
   * Pods {@link PodRecord#runningOnNode() running on a node} in one namespace, in O(1): the guard reads it on every
   * removal, and a scan of a 20k-pod namespace each time cost more than the removal.
   */
  int runningInNamespace(String namespace);

  /** Pods {@link PodRecord#runningOnNode() running on a node} in the whole cluster, in O(1). */
  int runningInCluster();
}
