package io.podsweeper.kube;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.RunningPods;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The cached pods by namespace, by node, and those with required anti-affinity: what decisions about one pod look up
 * instead of scanning the cluster. Kept by the pod store as it changes, on the informer's thread.
 */
final class PodIndexes implements RecordStore.Change<PodRecord> {
  private final Map<String, Map<String, PodRecord>> byNamespace = new ConcurrentHashMap<>();
  private final Map<String, Map<String, PodRecord>> byNode = new ConcurrentHashMap<>();
  private final Map<String, PodRecord> withAntiAffinity = new ConcurrentHashMap<>();
  private final RunningPods running = new RunningPods();

  Collection<PodRecord> inNamespace(String namespace) {
    return group(byNamespace, namespace);
  }

  /** Bound to the node, finished ones included. */
  Collection<PodRecord> onNode(String node) {
    return group(byNode, node);
  }

  Collection<PodRecord> withAntiAffinity() {
    return withAntiAffinity.values();
  }

  RunningPods running() {
    return running;
  }

  @Override
  public void changed(String key, PodRecord before, PodRecord after) {
    running.changed(before, after);
    move(byNamespace, key, groupOf(before, PodRecord::namespace), groupOf(after, PodRecord::namespace), after);
    move(byNode, key, groupOf(before, PodIndexes::boundNode), groupOf(after, PodIndexes::boundNode), after);
    if (after == null || after.scheduling().requiredPodAntiAffinity().isEmpty()) {
      withAntiAffinity.remove(key);
    } else {
      withAntiAffinity.put(key, after);
    }
  }

  private static Collection<PodRecord> group(Map<String, Map<String, PodRecord>> index, String name) {
    Map<String, PodRecord> pods = index.get(name);
    return pods == null ? List.of() : pods.values();
  }

  private static String boundNode(PodRecord pod) {
    return pod.scheduled() ? pod.nodeName() : null;
  }

  private static String groupOf(PodRecord pod, Function<PodRecord, String> by) {
    return pod == null ? null : by.apply(pod);
  }

  /** Files the pod under its new group before taking it from an old, different one: a reader never misses it. */
  private static void move(Map<String, Map<String, PodRecord>> index, String key, String from, String to, PodRecord pod) {
    if (to != null) {
      index.computeIfAbsent(to, g -> new ConcurrentHashMap<>()).put(key, pod);
    }
    if (from != null && !from.equals(to)) {
      index.computeIfPresent(from, (g, pods) -> {
        pods.remove(key);
        return pods.isEmpty() ? null : pods;
      });
    }
  }
}
