package io.podsweeper.strategy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.safety.Removal;
import java.time.Instant;

/**
 * A pod to remove, with the reason a person can check. It carries the UID and resourceVersion seen when it was
 * decided: the removal request uses them as preconditions, so a changed or recreated pod is never removed.
 *
 * @param profile the profile that decided (a PodCleanupPolicy is one too): per-profile caps and the upstream metric's
 *     {@code profile} label
 * @param rule the rule that decided (Podsweeper's rules); for upstream strategies, the profile
 * @param owner the pod's controller as {@code Kind/name}, empty for a bare pod (for the audit trail)
 */
public record Decision(
    String namespace,
    String name,
    String uid,
    String resourceVersion,
    String node,
    String strategy,
    String profile,
    String rule,
    Action action,
    String reason,
    Instant dueAt,
    String owner) {

  public static Decision of(PodRecord pod, String strategy, String profile, String rule, String reason, Instant dueAt) {
    return new Decision(
        pod.namespace(), pod.name(), pod.uid(), pod.resourceVersion(), pod.nodeName(), strategy, profile, rule,
        Action.forPod(pod), reason, dueAt, pod.controller().map(o -> o.kind() + "/" + o.name()).orElse(""));
  }

  public String podKey() {
    return namespace + "/" + name;
  }

  /** What the limits and the blast-radius guard count of it. */
  public Removal removal() {
    return new Removal(namespace, node, action == Action.EVICT);
  }

  /** Writes the decision's fields into {@code o}: the one JSON shape of a decision, for plan output and the HTTP API. */
  public ObjectNode writeTo(ObjectNode o) {
    return o.put("namespace", namespace)
        .put("name", name)
        .put("uid", uid)
        .put("resourceVersion", resourceVersion)
        .put("node", node)
        .put("strategy", strategy)
        .put("profile", profile)
        .put("rule", rule)
        .put("action", action.wireName())
        .put("reason", reason)
        .put("dueAt", dueAt.toString())
        .put("owner", owner);
  }
}
