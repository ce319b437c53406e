package io.podsweeper.strategy;

import java.util.Locale;

/** How a pod is removed: finished pods are deleted; anything else is evicted so PodDisruptionBudgets hold. */
public enum Action {
  DELETE,
  EVICT;

  public static Action forPod(io.podsweeper.cluster.PodRecord pod) {
    return pod.terminated() ? DELETE : EVICT;
  }

  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
