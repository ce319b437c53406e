package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling.PodAffinityTerm;
import io.podsweeper.cluster.PvcRecord;
import io.podsweeper.cluster.Taint;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.EvictorArgs;
import io.podsweeper.policy.Protection;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The evictor's filters (upstream's DefaultEvictor), applied to every strategy of a profile. Pure: a pod and a
 * view of the cluster in, "evictable" or the protection that applies out.
 */
public final class Evictor {
  /** The only spelling of {@link PodRecord#EVICTION_COST_ANNOTATION} Koordinator reads as the maximum (no sign, no leading zeros). */
  static final String MAX_EVICTION_COST = String.valueOf(Integer.MAX_VALUE);

  private final EvictorArgs args;

  public Evictor(EvictorArgs args) {
    this.args = args;
  }

  /**
   * Upstream's Filter, without nodeFit (its PreEvictionFilter): empty if the pod may be removed (from
   * {@link #evictableFrom} on); otherwise which protection applies. Strategies that count pods (duplicates, usage)
   * count only the pods passing it.
   */
  public Optional<String> filter(PodRecord pod, ClusterView view) {
    if ("true".equals(pod.annotations().get(PodRecord.PROTECT_ANNOTATION))) {
      return Optional.of("annotated " + PodRecord.PROTECT_ANNOTATION);
    }
    if (view.namespace(pod.namespace()).protectedByAnnotation()) {
      return Optional.of("its namespace is annotated " + PodRecord.PROTECT_ANNOTATION);
    }
    // Checked before upstream's evict annotation (upstream checks them after it): the kubelet owns mirror and static
    // pods, and a terminating pod is already going; no annotation makes evicting them useful or safe.
    if (pod.annotations().containsKey(PodRecord.MIRROR_ANNOTATION)) {
      return Optional.of("a mirror pod");
    }
    if (pod.managedByKubelet()) {
      return Optional.of("a static pod");
    }
    if (pod.terminating()) {
      return Optional.of("already terminating");
    }
    if (pod.annotations().containsKey(PodRecord.EVICT_ANNOTATION)) {
      return Optional.empty();
    }
    if (args.noEvictionPolicy() == EvictorArgs.NoEvictionPolicy.Mandatory
        && pod.annotations().containsKey(PodRecord.PREFER_NO_EVICTION_ANNOTATION)) {
      return Optional.of("annotated prefer-no-eviction and noEvictionPolicy is Mandatory");
    }
    Optional<String> active = activeProtection(pod, view);
    if (active.isPresent()) {
      return active;
    }
    if (!args.labelSelector().matches(pod.labels())) {
      return Optional.of("labels do not match the evictor's labelSelector");
    }
    if (args.minReplicas() > 1 && pod.owners().size() == 1) {
      String owner = pod.owners().get(0).uid();
      long replicas = view.podsInNamespace(pod.namespace()).stream()
          .filter(p -> p.owners().size() == 1 && p.owners().get(0).uid().equals(owner)).count();
      if (replicas < args.minReplicas()) {
        return Optional.of("owner has " + replicas + " pods, fewer than minReplicas " + args.minReplicas());
      }
    }
    if (args.minPodAge().isPresent() && pod.startTime().isEmpty()) {
      return Optional.of("not started yet (minPodAge)");
    }
    return Optional.empty();
  }

  /** Upstream's Filter and PreEvictionFilter together: empty if the pod may be removed, else the protection. */
  public Optional<String> protection(PodRecord pod, ClusterView view) {
    Optional<String> filtered = filter(pod, view);
    if (filtered.isPresent()) {
      return filtered;
    }
    // As upstream's PreEvictionFilter: the evict annotation lifts the protections, never nodeFit nor the
    // namespaceLabelSelector (and the strategies that count pods count those of other namespaces too).
    if (args.nodeFit() && !fitsAnotherNode(pod, view)) {
      return Optional.of("fits no other Ready node (nodeFit)");
    }
    return namespaceRefusal(pod, view);
  }

  /**
   * {@link #protection} but nodeFit: for a strategy that places the pod itself (MakeRoom's simulation of the scheduler
   * answers nodeFit's question more exactly, on the cluster as its plan leaves it).
   */
  public Optional<String> protectionWithoutNodeFit(PodRecord pod, ClusterView view) {
    return filter(pod, view).or(() -> namespaceRefusal(pod, view));
  }

  private Optional<String> namespaceRefusal(PodRecord pod, ClusterView view) {
    if (!args.namespaceLabelSelector().matches(view.namespace(pod.namespace()).labels())) {
      return Optional.of("namespace labels do not match the evictor's namespaceLabelSelector");
    }
    return Optional.empty();
  }

  /**
   * minPodAge at {@code now}, for the strategies of a pass (the others wait for {@link #evictableFrom}): why the pod
   * stays, or empty. As upstream: younger than minPodAge since its start; the evict annotation lifts it.
   */
  public Optional<String> tooYoung(PodRecord pod, Instant now) {
    if (args.minPodAge().isPresent() && pod.startTime().isPresent() && !now.isAfter(evictableFrom(pod))) {
      return Optional.of("started less than minPodAge " + Durations.format(args.minPodAge().get()) + " ago");
    }
    return Optional.empty();
  }

  /** With minPodAge, a pod is evictable only once it has run that long; otherwise from the start. */
  public Instant evictableFrom(PodRecord pod) {
    if (args.minPodAge().isPresent() && pod.startTime().isPresent()
        && !pod.annotations().containsKey(PodRecord.EVICT_ANNOTATION)) {
      return pod.startTime().get().plus(args.minPodAge().get()).minusNanos(1);
    }
    return Instant.MIN;
  }

  /**
   * The controllers whose expected replicas Koordinator's controller finder reads (apps and OpenKruise): those that
   * recreate an evicted pod, wherever the scheduler puts it (MakeRoom moves only their pods).
   */
  static final Set<String> REPLICATED_KINDS = Set.of("ReplicaSet", "ReplicationController", "StatefulSet", "CloneSet");

  private Optional<String> activeProtection(PodRecord pod, ClusterView view) {
    if (args.protections().contains(Protection.SystemCriticalPods)) {
      int threshold = priorityThreshold(view);
      if (threshold > EvictorArgs.SYSTEM_CRITICAL_PRIORITY) {
        // Upstream refuses such a threshold and does not start: nothing is evicted. Resolved against a live cluster
        // here, it protects every pod for as long as the class says so.
        return Optional.of("priorityThreshold " + args.priorityThresholdName().orElse("") + " is " + threshold
            + ", above " + EvictorArgs.SYSTEM_CRITICAL_PRIORITY + ", which upstream refuses: every pod is protected");
      }
      if (pod.priority().isPresent() && pod.priority().getAsInt() >= threshold) {
        return Optional.of("priority " + pod.priority().getAsInt() + " >= threshold " + threshold);
      }
    }
    if (args.upstreamBarePodRule() && pod.owners().isEmpty()) {
      if (args.protections().contains(Protection.FailedBarePods)) {
        return Optional.of("a bare pod (no owner)");
      }
      if (!"Failed".equals(pod.phase())) {
        return Optional.of("a bare pod that has not failed");
      }
    }
    if (args.protections().contains(Protection.PodsWithLocalStorage) && pod.volumes().localStorage()) {
      return Optional.of("uses local storage (emptyDir or hostPath)");
    }
    if (args.protections().contains(Protection.DaemonSetPods) && pod.owners().stream().map(OwnerRef::kind).anyMatch("DaemonSet"::equals)) {
      return Optional.of("a DaemonSet pod");
    }
    if (args.protections().contains(Protection.PodsWithPVC) && protectedByPvc(pod, view)) {
      return Optional.of("uses a PersistentVolumeClaim");
    }
    if (args.protections().contains(Protection.PodsWithoutPDB)
        && view.pdbs(pod.namespace()).stream().noneMatch(p -> p.selector().matches(pod.labels()))) {
      return Optional.of("no PodDisruptionBudget covers it");
    }
    if (args.protections().contains(Protection.PodsWithResourceClaims) && pod.volumes().resourceClaims()) {
      return Optional.of("has resource claims");
    }
    if (args.protections().contains(Protection.PodsWithMaxEvictionCost)
        && MAX_EVICTION_COST.equals(pod.annotations().get(PodRecord.EVICTION_COST_ANNOTATION))) {
      return Optional.of("annotated " + PodRecord.EVICTION_COST_ANNOTATION + ": " + MAX_EVICTION_COST + " (Koordinator never evicts it)");
    }
    // After the annotation: this one scans the namespace's pods.
    if (args.protections().contains(Protection.PodsOfSingleReplicaWorkloads)) {
      Optional<String> single = singleReplica(pod, view);
      if (single.isPresent()) {
        return single;
      }
    }
    return Optional.empty();
  }

  /**
   * Koordinator's expected-replicas check, from the cache: a pod whose controller has no replica count Koordinator
   * reads (a Deployment's pods are its ReplicaSet's), or whose controller runs no other pod that has not finished.
   */
  private static Optional<String> singleReplica(PodRecord pod, ClusterView view) {
    Optional<OwnerRef> controller = pod.owners().stream().filter(OwnerRef::controller).findFirst();
    if (controller.isEmpty()) {
      return Optional.empty();
    }
    OwnerRef owner = controller.get();
    if (!REPLICATED_KINDS.contains(owner.kind())) {
      return Optional.of("its " + owner.kind() + " has no replica count (Koordinator migrates only the pods of replicated workloads)");
    }
    long running = view.podsInNamespace(pod.namespace()).stream()
        .filter(p -> !p.terminated() && p.owners().stream().anyMatch(o -> o.controller() && o.kind().equals(owner.kind())
            && o.name().equals(owner.name()))).count();
    return running > 1 ? Optional.empty()
        : Optional.of("the single replica of " + owner.kind() + " " + owner.name() + " (Koordinator's expected-replicas check)");
  }

  private int priorityThreshold(ClusterView view) {
    if (args.priorityThreshold().isPresent()) {
      return args.priorityThreshold().getAsInt();
    }
    if (args.priorityThresholdName().isPresent()) {
      OptionalInt value = view.priorityClassValue(args.priorityThresholdName().get());
      // An unknown class protects as much as the default: never less than upstream would.
      return value.orElse(EvictorArgs.SYSTEM_CRITICAL_PRIORITY);
    }
    return EvictorArgs.SYSTEM_CRITICAL_PRIORITY;
  }

  private boolean protectedByPvc(PodRecord pod, ClusterView view) {
    if (pod.volumes().persistentVolumeClaims().isEmpty()) {
      return false;
    }
    if (args.protectedStorageClasses().isEmpty()) {
      return true;
    }
    for (String claim : pod.volumes().persistentVolumeClaims()) {
      Optional<PvcRecord> pvc = view.pvc(pod.namespace(), claim);
      // A claim we cannot resolve, or one without a class, keeps the pod protected.
      if (pvc.isEmpty() || pvc.get().storageClass().isEmpty() || args.protectedStorageClasses().contains(pvc.get().storageClass())) {
        return true;
      }
    }
    return false;
  }

  /** Upstream nodeFit: some other Ready, schedulable node takes the pod (selectors, affinity, taints, resources). */
  private boolean fitsAnotherNode(PodRecord pod, ClusterView view) {
    for (NodeRecord node : view.nodes()) {
      if (node.name().equals(pod.nodeName()) || !node.ready() || node.unschedulable()
          || !args.nodeSelector().matches(node.labels())) {
        continue;
      }
      if (fits(pod, node, view)) {
        return true;
      }
    }
    return false;
  }

  /** Whether the pod could be scheduled on some node of {@code nodes} that is schedulable (upstream's PodFitsAnyNode). */
  static Optional<NodeRecord> anyFit(PodRecord pod, java.util.Collection<NodeRecord> nodes, ClusterView view) {
    return nodes.stream().filter(n -> !n.unschedulable() && fits(pod, n, view)).findFirst();
  }

  static boolean fits(PodRecord pod, NodeRecord node, ClusterView view) {
    var scheduling = pod.scheduling();
    if (!scheduling.matchesNode(node.labels())) {
      return false;
    }
    for (Taint taint : node.taints()) {
      boolean blocking = "NoSchedule".equals(taint.effect()) || "NoExecute".equals(taint.effect());
      if (blocking && scheduling.tolerations().stream().noneMatch(t -> t.tolerates(taint))) {
        return false;
      }
    }
    Map<String, Long> used = new HashMap<>();
    for (PodRecord other : view.podsOnNode(node.name())) {
      if (!other.terminated()) {
        other.scheduling().requests().forEach((k, v) -> used.merge(k, v, Long::sum));
        used.merge("pods", 1L, Long::sum);
      }
    }
    // The pod itself takes a slot too.
    used.merge("pods", 1L, Long::sum);
    for (Map.Entry<String, Long> request : scheduling.requests().entrySet()) {
      Long allocatable = node.allocatable().get(request.getKey());
      if (allocatable == null || used.getOrDefault(request.getKey(), 0L) + request.getValue() > allocatable) {
        return false;
      }
    }
    Long podSlots = node.allocatable().get("pods");
    return (podSlots == null || used.get("pods") <= podSlots) && !antiAffinityConflict(pod, node, view);
  }

  /**
   * Whether required inter-pod anti-affinity keeps the pod off the node, either way: the pod's terms select a pod in
   * the node's domains, or a pod there has a term selecting the pod. The scheduler refuses the node in both cases;
   * upstream checks only the first, and only against the pods on the node itself.
   */
  private static boolean antiAffinityConflict(PodRecord pod, NodeRecord node, ClusterView view) {
    for (PodAffinityTerm term : pod.scheduling().requiredPodAntiAffinity()) {
      for (NodeRecord other : view.nodes()) {
        if (term.sameDomain(node, other)) {
          for (PodRecord there : view.podsOnNode(other.name())) {
            if (placed(there, pod) && term.selects(pod.namespace(), there, view)) {
              return true;
            }
          }
        }
      }
    }
    for (PodRecord holder : view.podsWithAntiAffinity()) {
      if (!placed(holder, pod)) {
        continue;
      }
      for (PodAffinityTerm term : holder.scheduling().requiredPodAntiAffinity()) {
        // Whether a term is about the pod does not depend on the node: asked first, it rules out most holders at once.
        if (term.selects(holder.namespace(), pod, view)) {
          Optional<NodeRecord> at = view.node(holder.nodeName());
          if (at.isPresent() && term.sameDomain(at.get(), node)) {
            return true;
          }
        }
      }
    }
    return false;
  }


  /** Another pod that holds its place on its node: scheduled and not finished. */
  private static boolean placed(PodRecord other, PodRecord pod) {
    return other.scheduled() && !other.terminated() && !other.key().equals(pod.key());
  }

}
