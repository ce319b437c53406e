package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.ReducedStateItemStore;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.RunningPods;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PvcRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.metrics.Metrics;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service's view of the cluster: fabric8 SharedInformers for pods, nodes and namespaces, kept as the decision
 * core's slim records. Pod changes are passed on to a {@link PodListener} after the cache is updated.
 */
public final class ClusterCache implements PodSource, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterCache.class);

  /** Told about every pod change, on the informer's thread, after the cache has the new state. */
  public interface PodListener {
    void podChanged(PodRecord pod);

    void podDeleted(PodRecord pod);

    /** A namespace's labels changed: namespace selectors may now match its pods differently. */
    void namespaceChanged(String namespace);
  }

  /** Pods per page of the initial list, so a 100k-pod cluster never arrives as one response. */
  static final long PAGE = 500;

  private final Map<String, PodRecord> pods = new ConcurrentHashMap<>();
  private final Map<String, Map<String, PodRecord>> podsByNamespace = new ConcurrentHashMap<>();
  private final Map<String, Map<String, PodRecord>> podsByNode = new ConcurrentHashMap<>();
  private final Map<String, PodRecord> withAntiAffinity = new ConcurrentHashMap<>();
  private final RunningPods running = new RunningPods();
  private final Map<String, NamespaceRecord> namespaces = new ConcurrentHashMap<>();
  private final Map<String, NodeRecord> nodes = new ConcurrentHashMap<>();
  private final Map<String, PdbRecord> pdbs = new ConcurrentHashMap<>();
  private final Map<String, PvcRecord> pvcs = new ConcurrentHashMap<>();
  private final Map<String, Integer> priorityClasses = new ConcurrentHashMap<>();
  private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
  private final Map<String, SharedIndexInformer<?>> byResource = new ConcurrentHashMap<>();
  private final KubernetesClient client;
  private final Metrics metrics;
  /** Not one of the informers above: only LowNodeLoad asks, and its staleness check covers a broken watch. */
  private final NodeUsageSource usage;
  private volatile PodListener listener;

  public ClusterCache(KubernetesClient client, Metrics metrics) {
    this.client = client;
    this.metrics = metrics;
    this.usage = new NodeUsageSource(client, key -> Optional.ofNullable(pods.get(key)).map(PodRecord::nodeName));
  }

  /** Starts the informers; the future completes when all have listed once. */
  public CompletableFuture<Void> start(PodListener podListener) {
    this.listener = podListener;
    // Namespaces and nodes first, so a pod's namespace labels are known when the pod arrives.
    SharedIndexInformer<Namespace> nsInformer = client.namespaces().runnableInformer(0);
    nsInformer.addEventHandler(recordHandler(namespaces, PodRecords::namespace, (old, now) -> {
      if (old != null && !old.equals(now) && listener != null) {
        listener.namespaceChanged(now.name());
      }
    }));
    SharedIndexInformer<Node> nodeInformer = client.nodes().runnableInformer(0);
    nodeInformer.addEventHandler(recordHandler(nodes, PodRecords::node, (old, now) -> {}));
    SharedIndexInformer<Pod> podInformer = client.pods().inAnyNamespace().withLimit(PAGE).runnableInformer(0);
    // Decisions read our slim PodRecords; the informer's own store keeps only the keys and versions it needs to
    // relist, not whole Pods (~30 KB each, managedFields and all): the difference between MiB and GiB at 100k pods.
    podInformer.itemStore(new ReducedStateItemStore<>(ReducedStateItemStore.NAME_KEY_STATE, Pod.class,
        client.getKubernetesSerialization()));
    podInformer.addEventHandler(new PodHandler());
    register("namespaces", nsInformer);
    register("nodes", nodeInformer);
    register("poddisruptionbudgets", pdbInformer());
    SharedIndexInformer<PersistentVolumeClaim> pvcInformer = client.persistentVolumeClaims().inAnyNamespace().runnableInformer(0);
    pvcInformer.addEventHandler(recordHandler(pvcs, PodRecords::pvc, (old, now) -> {}));
    register("persistentvolumeclaims", pvcInformer);
    SharedIndexInformer<PriorityClass> pcInformer = client.scheduling().v1().priorityClasses().runnableInformer(0);
    pcInformer.addEventHandler(recordHandler(priorityClasses, PriorityClass::getValue, (old, now) -> {}));
    register("priorityclasses", pcInformer);
    register("pods", podInformer);
    // Everything a pod's evaluation reads is cached before the first pod arrives.
    List<SharedIndexInformer<?>> first = informers.subList(0, informers.size() - 1);
    return CompletableFuture.allOf(first.stream().map(i -> i.start().toCompletableFuture()).toArray(CompletableFuture[]::new))
        .thenCompose(v -> podInformer.start().toCompletableFuture());
  }

  private void register(String resource, SharedIndexInformer<?> informer) {
    informers.add(informer);
    byResource.put(resource, informer);
  }

  /** True when every informer has listed and is watching: only then is the cache fit to act on. */
  @Override
  public boolean isCurrent() {
    boolean current = !informers.isEmpty();
    for (Map.Entry<String, SharedIndexInformer<?>> e : byResource.entrySet()) {
      boolean watching = e.getValue().hasSynced() && e.getValue().isWatching();
      metrics.informerWatching.labels(e.getKey()).set(watching ? 1 : 0);
      current &= watching;
    }
    metrics.cacheObjects.labels("pods").set(pods.size());
    metrics.cacheObjects.labels("nodes").set(nodes.size());
    metrics.cacheObjects.labels("namespaces").set(namespaces.size());
    return current;
  }

  @Override
  public Optional<PodRecord> pod(String key) {
    return Optional.ofNullable(pods.get(key));
  }

  @Override
  public Collection<PodRecord> pods() {
    return pods.values();
  }

  @Override
  public Collection<PodRecord> podsInNamespace(String namespace) {
    Map<String, PodRecord> inNamespace = podsByNamespace.get(namespace);
    return inNamespace == null ? List.of() : inNamespace.values();
  }

  @Override
  public int runningInNamespace(String namespace) {
    return running.inNamespace(namespace);
  }

  @Override
  public int runningInCluster() {
    return running.inCluster();
  }

  @Override
  public Collection<PodRecord> podsOnNode(String node) {
    Map<String, PodRecord> onNode = podsByNode.get(node);
    return onNode == null ? List.of() : onNode.values();
  }

  @Override
  public Collection<PodRecord> podsWithAntiAffinity() {
    return withAntiAffinity.values();
  }

  private static void unindex(Map<String, Map<String, PodRecord>> index, String group, String key) {
    index.computeIfPresent(group, (g, m) -> {
      m.remove(key);
      return m.isEmpty() ? null : m;
    });
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
    return pdbs.values().stream().filter(p -> p.namespace().equals(namespace)).toList();
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

  /** PDBs as the server serves them: policy/v1 since Kubernetes 1.21, policy/v1beta1 before. */
  private SharedIndexInformer<?> pdbInformer() {
    if (client.supports(io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget.class)) {
      SharedIndexInformer<io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget> informer =
          client.policy().v1().podDisruptionBudget().inAnyNamespace().runnableInformer(0);
      informer.addEventHandler(recordHandler(pdbs, p -> PodRecords.pdb(p.getMetadata().getNamespace(), p.getMetadata().getName(),
          p.getSpec() != null ? p.getSpec().getSelector() : null), (old, now) -> {}));
      return informer;
    }
    SharedIndexInformer<io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudget> informer =
        client.policy().v1beta1().podDisruptionBudget().inAnyNamespace().runnableInformer(0);
    informer.addEventHandler(recordHandler(pdbs, p -> PodRecords.pdb(p.getMetadata().getNamespace(), p.getMetadata().getName(),
        p.getSpec() != null ? p.getSpec().getSelector() : null), (old, now) -> {}));
    return informer;
  }

  @Override
  public Optional<NodeUsage> nodeUsage(String node) {
    return usage.get(node);
  }

  @Override
  public NamespaceRecord namespace(String name) {
    NamespaceRecord ns = namespaces.get(name);
    return ns != null ? ns : NamespaceRecord.unknown(name);
  }

  @Override
  public void close() {
    informers.forEach(SharedIndexInformer::stop);
    usage.close();
  }

  private final class PodHandler implements ResourceEventHandler<Pod> {
    @Override
    public void onAdd(Pod pod) {
      changed(pod);
    }

    @Override
    public void onUpdate(Pod oldPod, Pod newPod) {
      changed(newPod);
    }

    @Override
    public void onDelete(Pod pod, boolean finalStateUnknown) {
      PodRecord removed = pods.remove(key(pod));
      running.changed(removed, null);
      if (removed != null) {
        unindex(podsByNamespace, removed.namespace(), removed.key());
        unindex(podsByNode, removed.nodeName(), removed.key());
        withAntiAffinity.remove(removed.key());
      }
      if (removed != null && listener != null) {
        listener.podDeleted(removed);
      }
    }

    private void changed(Pod pod) {
      PodRecord record;
      try {
        record = PodRecords.pod(pod);
      } catch (RuntimeException e) {
        LOG.warn("ignoring pod {} that cannot be read: {}", key(pod), e.toString());
        return;
      }
      PodRecord previous = pods.put(record.key(), record);
      running.changed(previous, record);
      podsByNamespace.computeIfAbsent(record.namespace(), ns -> new ConcurrentHashMap<>()).put(record.key(), record);
      if (previous != null && !previous.nodeName().equals(record.nodeName())) {
        // Bound since (or, for a pod recreated under the same name, elsewhere): it has left its old node's index.
        unindex(podsByNode, previous.nodeName(), previous.key());
      }
      if (record.scheduled()) {
        podsByNode.computeIfAbsent(record.nodeName(), n -> new ConcurrentHashMap<>()).put(record.key(), record);
      }
      if (record.scheduling().requiredPodAntiAffinity().isEmpty()) {
        withAntiAffinity.remove(record.key());
      } else {
        withAntiAffinity.put(record.key(), record);
      }
      if (listener != null) {
        listener.podChanged(record);
      }
    }
  }

  /** Keeps {@code store} (keyed by namespace/name, or name for cluster-scoped kinds) equal to the informer's view. */
  private static <T extends HasMetadata, R> ResourceEventHandler<T> recordHandler(
      Map<String, R> store, Function<T, R> toRecord, BiConsumer<R, R> changed) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        R record = toRecord.apply(obj);
        changed.accept(store.put(key(obj), record), record);
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        onAdd(newObj);
      }

      @Override
      public void onDelete(T obj, boolean finalStateUnknown) {
        store.remove(key(obj));
      }
    };
  }

  private static String key(HasMetadata obj) {
    String ns = obj.getMetadata().getNamespace();
    return ns == null ? obj.getMetadata().getName() : ns + "/" + obj.getMetadata().getName();
  }
}
