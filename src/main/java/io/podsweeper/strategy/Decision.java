package io.podsweeper.strategy;

import io.podsweeper.cluster.PodRecord;
import java.time.Instant;

/**
 * A pod to remove, with the reason a person can check. It carries the UID and resourceVersion seen when it was
 * decided: the removal request uses them as preconditions, so a changed or recreated pod is never removed.
 */
public record Decision(
    String namespace,
    String name,
    String uid,
    String resourceVersion,
    String node,
    String strategy,
    String rule,
    Action action,
    String reason,
    Instant dueAt) {

  public static Decision of(PodRecord pod, String strategy, String rule, String reason, Instant dueAt) {
    return new Decision(
        pod.namespace(), pod.name(), pod.uid(), pod.resourceVersion(), pod.nodeName(), strategy, rule,
        Action.forPod(pod), reason, dueAt);
  }

  public String podKey() {
    return namespace + "/" + name;
  }
}
