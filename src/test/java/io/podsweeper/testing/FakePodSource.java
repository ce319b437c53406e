package io.podsweeper.testing;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.cluster.PvcRecord;
import io.podsweeper.cluster.QueriedUsage;
import io.podsweeper.policy.PrometheusQuery;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/** The live loop's pod source without an API server: pods in a map; {@code current} plays the informers' watch state. */
public final class FakePodSource implements PodSource {
  public final Map<String, PodRecord> pods = new ConcurrentHashMap<>();
  public final Map<String, NamespaceRecord> namespaces = new ConcurrentHashMap<>();
  /** Ready nodes, for upstream profiles (which see only the pods of Ready nodes); none by default. */
  public final List<NodeRecord> nodes = new java.util.concurrent.CopyOnWriteArrayList<>();
  public volatile boolean current = true;

  public void put(PodRecord p) {
    pods.put(p.key(), p);
  }

  private ClusterSnapshot view() {
    return ClusterSnapshot.of(pods.values(), List.of(), nodes);
  }

  /** Told after each look-up of one pod, e.g. to delete it at the worst moment. */
  public volatile Consumer<String> afterLookup = key -> {};

  @Override
  public Optional<PodRecord> pod(String key) {
    Optional<PodRecord> found = Optional.ofNullable(pods.get(key));
    afterLookup.accept(key);
    return found;
  }

  @Override
  public boolean isCurrent() {
    return current;
  }

  /** Namespaces whose look-up throws, as a value nobody foresaw would: judging any pod in them fails. */
  public final Set<String> poisoned = ConcurrentHashMap.newKeySet();

  @Override
  public NamespaceRecord namespace(String name) {
    if (poisoned.contains(name)) {
      throw new IllegalStateException("a poisoned value in namespace " + name);
    }
    return namespaces.getOrDefault(name, NamespaceRecord.unknown(name));
  }

  @Override
  public Optional<NodeRecord> node(String name) {
    return nodes.stream().filter(n -> n.name().equals(name)).findFirst();
  }

  @Override
  public Collection<NodeRecord> nodes() {
    return nodes;
  }

  @Override
  public Collection<PodRecord> pods() {
    return pods.values();
  }

  @Override
  public Collection<PodRecord> podsInNamespace(String namespace) {
    return pods.values().stream().filter(p -> p.namespace().equals(namespace)).toList();
  }

  @Override
  public int runningInNamespace(String namespace) {
    return (int) pods.values().stream().filter(p -> p.namespace().equals(namespace) && p.runningOnNode()).count();
  }

  @Override
  public int runningInCluster() {
    return (int) pods.values().stream().filter(PodRecord::runningOnNode).count();
  }

  @Override
  public Collection<PodRecord> podsOnNode(String node) {
    return pods.values().stream().filter(p -> p.nodeName().equals(node)).toList();
  }

  @Override
  public Collection<PodRecord> podsWithAntiAffinity() {
    return pods.values().stream().filter(p -> !p.scheduling().requiredPodAntiAffinity().isEmpty()).toList();
  }

  @Override
  public List<PdbRecord> pdbs(String namespace) {
    return view().pdbs(namespace);
  }

  @Override
  public Optional<PvcRecord> pvc(String namespace, String name) {
    return Optional.empty();
  }

  @Override
  public OptionalInt priorityClassValue(String name) {
    return OptionalInt.empty();
  }

  @Override
  public Optional<NodeUsage> nodeUsage(String node) {
    return Optional.empty();
  }

  @Override
  public Optional<QueriedUsage> queriedUsage(PrometheusQuery query) {
    return Optional.empty();
  }
}
