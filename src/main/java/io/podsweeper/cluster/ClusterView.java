package io.podsweeper.cluster;

import io.podsweeper.policy.PrometheusQuery;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What strategies and the evictor may read about the rest of the cluster when they decide about one pod:
 * namespaces, nodes, PodDisruptionBudgets, PVCs, priority classes, the other pods and measured node usage.
 * Implemented by a snapshot (plan) and by the informer cache (run).
 */
public interface ClusterView {
  /** The namespace's record; for a namespace not (yet) seen, one with just its name label. */
  NamespaceRecord namespace(String name);

  Optional<NodeRecord> node(String name);

  Collection<NodeRecord> nodes();

  Collection<PodRecord> pods();

  /** The pods of one namespace (indexed: decisions about one pod must not scan the cluster). */
  Collection<PodRecord> podsInNamespace(String namespace);

  /** The pods bound to one node, finished ones included (indexed: nodeFit and the node strategies ask per node). */
  Collection<PodRecord> podsOnNode(String node);

  /** The pods with required pod anti-affinity (indexed: nodeFit asks whether one of them keeps a pod off a node). */
  Collection<PodRecord> podsWithAntiAffinity();

  List<PdbRecord> pdbs(String namespace);

  Optional<PvcRecord> pvc(String namespace, String name);

  OptionalInt priorityClassValue(String name);

  /** The node's latest measured usage, however old (the strategy judges freshness); empty when none is known. */
  Optional<NodeUsage> nodeUsage(String node);

  /** The latest answer to a Prometheus usage query; empty when there is none (no server, an error, a snapshot). */
  Optional<QueriedUsage> queriedUsage(PrometheusQuery query);
}
