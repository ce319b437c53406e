package io.podsweeper.cluster;

import io.podsweeper.policy.PrometheusQuery;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Function;
import java.util.stream.Collectors;

/** An immutable view of the cluster at one moment: what {@code plan} reads from a file. Indexed for lookups. */
public final class ClusterSnapshot implements ClusterView {
  private final List<PodRecord> pods;
  private final Map<String, List<PodRecord>> podsByNamespace;
  private final Map<String, List<PodRecord>> podsByNode;
  private final List<PodRecord> withAntiAffinity;
  private final Map<String, NamespaceRecord> namespaces;
  private final Map<String, NodeRecord> nodes;
  private final Map<String, List<PdbRecord>> pdbsByNamespace;
  private final Map<String, PvcRecord> pvcs;
  private final Map<String, Integer> priorityClasses;
  private final Map<String, NodeUsage> nodeUsage;
  /** Recorded answers of Prometheus usage queries, by query. */
  private final Map<String, QueriedUsage> queried;

  private ClusterSnapshot(
      Collection<PodRecord> pods,
      Collection<NamespaceRecord> namespaces,
      Collection<NodeRecord> nodes,
      Collection<PdbRecord> pdbs,
      Collection<PvcRecord> pvcs,
      Map<String, Integer> priorityClasses,
      Collection<NodeUsage> nodeUsage,
      Map<String, QueriedUsage> queried) {
    this.pods = List.copyOf(pods);
    this.podsByNamespace = this.pods.stream().collect(Collectors.groupingBy(PodRecord::namespace));
    this.podsByNode = this.pods.stream().filter(PodRecord::scheduled).collect(Collectors.groupingBy(PodRecord::nodeName));
    this.withAntiAffinity = this.pods.stream().filter(p -> !p.scheduling().requiredPodAntiAffinity().isEmpty()).toList();
    this.namespaces = namespaces.stream().collect(Collectors.toUnmodifiableMap(NamespaceRecord::name, Function.identity(), (a, b) -> b));
    this.nodes = nodes.stream().collect(Collectors.toUnmodifiableMap(NodeRecord::name, Function.identity(), (a, b) -> b));
    this.pdbsByNamespace = pdbs.stream().collect(Collectors.groupingBy(PdbRecord::namespace));
    this.pvcs = pvcs.stream().collect(Collectors.toUnmodifiableMap(p -> p.namespace() + "/" + p.name(), Function.identity(), (a, b) -> b));
    this.priorityClasses = Map.copyOf(priorityClasses);
    this.nodeUsage = nodeUsage.stream().collect(Collectors.toUnmodifiableMap(NodeUsage::node, Function.identity(), (a, b) -> b));
    this.queried = Map.copyOf(queried);
  }

  public static ClusterSnapshot of(Collection<PodRecord> pods, Collection<NamespaceRecord> namespaces, Collection<NodeRecord> nodes) {
    return of(pods, namespaces, nodes, List.of(), List.of(), Map.of());
  }

  public static ClusterSnapshot of(
      Collection<PodRecord> pods,
      Collection<NamespaceRecord> namespaces,
      Collection<NodeRecord> nodes,
      Collection<PdbRecord> pdbs,
      Collection<PvcRecord> pvcs,
      Map<String, Integer> priorityClasses) {
    return new ClusterSnapshot(pods, namespaces, nodes, pdbs, pvcs, priorityClasses, List.of(), Map.of());
  }

  /** The same snapshot with measured node usage (NodeMetric or metrics.k8s.io objects), for LowNodeLoad. */
  public ClusterSnapshot withNodeUsage(Collection<NodeUsage> usage) {
    return new ClusterSnapshot(pods, namespaces.values(), nodes.values(), pdbsByNamespace.values().stream().flatMap(List::stream).toList(),
        pvcs.values(), priorityClasses, usage, queried);
  }

  /** The same snapshot with a recorded answer of Prometheus to {@code query}, for LowNodeUtilization. */
  public ClusterSnapshot withQueriedUsage(String query, QueriedUsage answer) {
    Map<String, QueriedUsage> answers = new java.util.HashMap<>(queried);
    answers.put(query, answer);
    return new ClusterSnapshot(pods, namespaces.values(), nodes.values(), pdbsByNamespace.values().stream().flatMap(List::stream).toList(),
        pvcs.values(), priorityClasses, nodeUsage.values(), answers);
  }

  @Override
  public List<PodRecord> pods() {
    return pods;
  }

  @Override
  public List<PodRecord> podsInNamespace(String namespace) {
    return podsByNamespace.getOrDefault(namespace, List.of());
  }

  @Override
  public List<PodRecord> podsOnNode(String node) {
    return podsByNode.getOrDefault(node, List.of());
  }

  @Override
  public List<PodRecord> podsWithAntiAffinity() {
    return withAntiAffinity;
  }

  @Override
  public NamespaceRecord namespace(String name) {
    NamespaceRecord known = namespaces.get(name);
    return known != null ? known : NamespaceRecord.unknown(name);
  }

  @Override
  public Optional<NodeRecord> node(String name) {
    return Optional.ofNullable(nodes.get(name));
  }

  @Override
  public Collection<NodeRecord> nodes() {
    return nodes.values();
  }

  @Override
  public List<PdbRecord> pdbs(String namespace) {
    return pdbsByNamespace.getOrDefault(namespace, List.of());
  }

  @Override
  public Optional<PvcRecord> pvc(String namespace, String name) {
    return Optional.ofNullable(pvcs.get(namespace + "/" + name));
  }

  @Override
  public OptionalInt priorityClassValue(String name) {
    Integer v = priorityClasses.get(name);
    return v == null ? OptionalInt.empty() : OptionalInt.of(v);
  }

  @Override
  public Optional<NodeUsage> nodeUsage(String node) {
    return Optional.ofNullable(nodeUsage.get(node));
  }

  /** Only a recorded answer: a snapshot read from the cluster or a file holds none, and the strategy says so. */
  @Override
  public Optional<QueriedUsage> queriedUsage(PrometheusQuery query) {
    return Optional.ofNullable(queried.get(query.query()));
  }
}
