package io.podsweeper.policy;

import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * What Podsweeper's own rules never evict unless a rule names it in its {@code evict} list: the upstream
 * DefaultEvictor's default protections that matter to rules removing pods by age and state, under upstream's names,
 * and the pods an admission controller holds back on purpose, which upstream never sees (it sees only pods on a node).
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
  BarePods,
  /**
   * Held by scheduling gates ({@code spec.schedulingGates}, Kubernetes 1.27 and later): Kueue or another admission
   * controller keeps it from the scheduler on purpose, often for hours while it waits in a queue; removed, it loses its
   * place there (and a bare one is gone for good). Not "stuck": neither its age nor the Pending state says it failed.
   * Unlike the three above, the {@code descheduler.alpha.kubernetes.io/evict} annotation does not lift it: upstream,
   * whose annotation that is, never sees such a pod.
   */
  SchedulingGatedPods;

  public static Optional<RuleProtection> parse(String name) {
    return Arrays.stream(values()).filter(p -> p.name().equals(name)).findFirst();
  }

  public static String allowedNames() {
    return Arrays.stream(values()).map(Enum::name).sorted().collect(Collectors.joining(", "));
  }
}
