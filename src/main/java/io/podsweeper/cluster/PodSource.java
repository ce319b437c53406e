package io.podsweeper.cluster;

import java.util.Optional;

/** The live view the engine reads pods from: the informer cache in production, a map in unit tests. */
public interface PodSource extends ClusterView {
  Optional<PodRecord> pod(String key);

  /** True only while the view is known to be current (synced and watching): removals wait otherwise. */
  boolean isCurrent();
}
