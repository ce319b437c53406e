package io.podsweeper.cluster;

import io.podsweeper.policy.LabelSelector;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the scheduler would check of a pod, for nodeFit and the node-aware strategies: node selector, required and
 * preferred node affinity, tolerations, required pod anti-affinity and affinity, resource requests, the QoS class, the
 * topology spread constraints and the host ports.
 *
 * @param requests what the pod takes of a node's allocatable, as the scheduler's NodeResourcesFit counts it (cpu in
 *     millicores, memory and others in bytes or units): the main containers' requests and those of the sidecars (init
 *     containers with {@code restartPolicy: Always}), or, where more, what any other init container needs with the
 *     sidecars started before it; plus the pod's {@code overhead}
 * @param qosClass {@code BestEffort}, {@code Burstable} or {@code Guaranteed}
 * @param requiredPodAffinity required pod affinity terms: the pod goes only where each selects a pod in its domain
 * @param hostPorts the host ports of the main containers (the scheduler's NodePorts counts no others)
 */
public record Scheduling(
    Map<String, String> nodeSelector,
    List<NodeSelectorTerm> requiredNodeAffinity,
    List<PreferredTerm> preferredNodeAffinity,
    List<Toleration> tolerations,
    List<PodAffinityTerm> requiredPodAntiAffinity,
    Map<String, Long> requests,
    String qosClass,
    List<SpreadConstraint> spreadConstraints,
    List<PodAffinityTerm> requiredPodAffinity,
    List<HostPort> hostPorts) {
  public static final Scheduling NONE = new Scheduling(Map.of(), List.of(), List.of(), List.of(), List.of(), Map.of(), "BestEffort");

  /** A pod without required pod affinity or host ports. */
  public Scheduling(Map<String, String> nodeSelector, List<NodeSelectorTerm> requiredNodeAffinity,
      List<PreferredTerm> preferredNodeAffinity, List<Toleration> tolerations, List<PodAffinityTerm> requiredPodAntiAffinity,
      Map<String, Long> requests, String qosClass, List<SpreadConstraint> spreadConstraints) {
    this(nodeSelector, requiredNodeAffinity, preferredNodeAffinity, tolerations, requiredPodAntiAffinity, requests, qosClass,
        spreadConstraints, List.of(), List.of());
  }

  /** A pod without topology spread constraints (what most callers and tests build). */
  public Scheduling(Map<String, String> nodeSelector, List<NodeSelectorTerm> requiredNodeAffinity,
      List<PreferredTerm> preferredNodeAffinity, List<Toleration> tolerations, List<PodAffinityTerm> requiredPodAntiAffinity,
      Map<String, Long> requests, String qosClass) {
    this(nodeSelector, requiredNodeAffinity, preferredNodeAffinity, tolerations, requiredPodAntiAffinity, requests, qosClass, List.of());
  }

  /**
   * A host port a container asks for: the node must have it free for the protocol on the address ({@code 0.0.0.0},
   * the default, takes every address), as the scheduler's NodePorts checks.
   */
  public record HostPort(String hostIP, String protocol, int port) {
    public static final String ANY_ADDRESS = "0.0.0.0";

    /** Whether this port and {@code other} cannot both be bound on one node. */
    public boolean conflicts(HostPort other) {
      return port == other.port && protocol.equals(other.protocol)
          && (hostIP.equals(other.hostIP) || hostIP.equals(ANY_ADDRESS) || other.hostIP.equals(ANY_ADDRESS));
    }
  }

  /** A preferred node affinity term and its weight. */
  public record PreferredTerm(int weight, NodeSelectorTerm term) {}

  /**
   * A required pod (anti-)affinity term: pods matching {@code selector} in {@code namespaces} or in the namespaces
   * {@code namespaceSelector} matches (neither given: the pod's own namespace), in the same {@code topologyKey}
   * domain.
   */
  public record PodAffinityTerm(LabelSelector selector, Set<String> namespaces, Optional<LabelSelector> namespaceSelector,
      String topologyKey) {
    public PodAffinityTerm {
      namespaces = Set.copyOf(namespaces);
    }

    /** Whether the term, written by a pod in {@code ownNamespace}, is about {@code other}. */
    public boolean selects(String ownNamespace, PodRecord other, ClusterView view) {
      boolean inNamespaces = namespaces.isEmpty() && namespaceSelector.isEmpty()
          ? other.namespace().equals(ownNamespace)
          : namespaces.contains(other.namespace())
              || namespaceSelector.map(s -> s.matches(view.namespace(other.namespace()).labels())).orElse(false);
      return inNamespaces && selector.matches(other.labels());
    }

    /**
     * Whether the two nodes are in one topology domain: both carry the key, with the same value. A node without
     * the key is in no domain, so the scheduler applies the term nowhere on it, not even to pods on that node.
     */
    public boolean sameDomain(NodeRecord a, NodeRecord b) {
      String value = a.labels().get(topologyKey);
      return value != null && value.equals(b.labels().get(topologyKey));
    }
  }

  /**
   * A topology spread constraint as the pod declares it: at most {@code maxSkew} more pods matching {@code selector}
   * in one {@code topologyKey} domain than in the emptiest. {@code matchLabelKeys} narrow the selector to the pod's
   * own values of those labels. The two inclusion policies (API defaults: node affinity Honor, taints Ignore) say
   * whether nodes the pod's node affinity or tolerations rule out still count as domains. minDomains is not kept:
   * upstream's descheduler does not use it.
   *
   * @param whenUnsatisfiable {@code DoNotSchedule} or {@code ScheduleAnyway}
   */
  public record SpreadConstraint(int maxSkew, String topologyKey, String whenUnsatisfiable, LabelSelector selector,
      List<String> matchLabelKeys, boolean honorNodeAffinity, boolean honorNodeTaints) {
    public SpreadConstraint {
      matchLabelKeys = List.copyOf(matchLabelKeys);
    }
  }

  public Scheduling {
    nodeSelector = Map.copyOf(nodeSelector);
    requiredNodeAffinity = List.copyOf(requiredNodeAffinity);
    preferredNodeAffinity = List.copyOf(preferredNodeAffinity);
    tolerations = List.copyOf(tolerations);
    requiredPodAntiAffinity = List.copyOf(requiredPodAntiAffinity);
    requests = Map.copyOf(requests);
    spreadConstraints = List.copyOf(spreadConstraints);
    requiredPodAffinity = List.copyOf(requiredPodAffinity);
    hostPorts = List.copyOf(hostPorts);
  }

  /** The pod's own node selector and required node affinity hold on these node labels. */
  public boolean matchesNode(Map<String, String> labels) {
    return nodeSelector.entrySet().stream().allMatch(e -> e.getValue().equals(labels.get(e.getKey())))
        && (requiredNodeAffinity.isEmpty() || requiredNodeAffinity.stream().anyMatch(t -> t.matches(labels)));
  }

  /** The sum of the weights of the preferred node affinity terms these node labels satisfy. */
  public int preferredWeight(Map<String, String> labels) {
    return preferredNodeAffinity.stream().filter(p -> p.term().matches(labels)).mapToInt(PreferredTerm::weight).sum();
  }
}
