package io.podsweeper.cluster;

import java.util.Collection;
import java.util.Optional;

/** The live view the engine reads pods from: the informer cache in production, a map in unit tests. */
public interface PodSource {
  Optional<PodRecord> pod(String key);

  Collection<PodRecord> pods();

  /** The namespace's record; for a namespace not (yet) seen, one with just its name label. */
  NamespaceRecord namespace(String name);

  /** True only while the view is known to be current (synced and watching): removals wait otherwise. */
  boolean isCurrent();
}
