package io.podsweeper.policy;

import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * What Podsweeper's own rules never evict unless a rule names it in its {@code evict} list: the upstream
 * DefaultEvictor's default protections that matter to rules removing pods by age and state, under upstream's names.
 * Each guards only a pod still running or pending: a finished pod holds nothing and is deleted, not evicted (that is
 * garbage collection). Mirror and static pods have no name here: no rule removes them, as upstream's never do.
 * Policies in the upstream formats keep their DefaultEvictor instead.
 */
public enum RuleProtection {
  /**
   * Priority at or above 2000000000 (system-cluster-critical), or priority class system-cluster-critical or
   * system-node-critical: cluster add-ons, which often live outside {@code kube-*} (ingress, certificates, CNI).
   */
  SystemCriticalPods,
  /** Owned by a DaemonSet: evicted, it comes straight back to the same node. */
  DaemonSetPods,
  /** No controller (no ownerReference with {@code controller: true}): evicted, it is gone for good. */
  BarePods;

  public static Optional<RuleProtection> parse(String name) {
    return Arrays.stream(values()).filter(p -> p.name().equals(name)).findFirst();
  }

  public static String allowedNames() {
    return Arrays.stream(values()).map(Enum::name).sorted().collect(Collectors.joining(", "));
  }
}
