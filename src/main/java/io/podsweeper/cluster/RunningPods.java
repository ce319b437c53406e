package io.podsweeper.cluster;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts of pods {@link PodRecord#runningOnNode() running on a node}, per namespace and in the cluster, kept as each
 * pod record changes so that reading one is O(1) (see {@link PodSource#runningInNamespace}).
 */
public final class RunningPods {
  private final Map<String, Integer> byNamespace = new ConcurrentHashMap<>();
  private final AtomicInteger inCluster = new AtomicInteger();

  /** A pod's record went from {@code before} to {@code after}; null before: added, null after: deleted. */
  public void changed(PodRecord before, PodRecord after) {
    if (before != null && before.runningOnNode()) {
      add(before.namespace(), -1);
    }
    if (after != null && after.runningOnNode()) {
      add(after.namespace(), 1);
    }
  }

  public int inNamespace(String namespace) {
    return byNamespace.getOrDefault(namespace, 0);
  }

  public int inCluster() {
    return inCluster.get();
  }

  private void add(String namespace, int delta) {
    // A count back to zero leaves the map: namespaces come and go.
    byNamespace.merge(namespace, delta, (count, d) -> count + d == 0 ? null : count + d);
    inCluster.addAndGet(delta);
  }
}
