package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceList;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClass;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClassList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Informable;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodListener;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.QueriedUsage;
import io.podsweeper.policy.PrometheusQuery;
import io.podsweeper.cluster.PvcRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.metrics.Metrics;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The service's view of the cluster: fabric8 informers for pods, nodes, namespaces, PDBs, PVCs and priority
 * classes, each keeping the decision core's slim records as its own item store ({@link RecordStore}), resuming every
 * interrupted watch and caught up again only once it has reached where the server was after the break
 * ({@link ResumingInformers}). So whenever every informer is current, the records hold everything the server held at
 * the latest list or fence, and what has been watched since.
 * Pod changes are passed on to a {@link PodListener} after the cache has them.
 */
public final class ClusterCache implements PodSource, AutoCloseable {

  private final PodIndexes podIndexes = new PodIndexes();
  private final RecordStore<Pod, PodRecord> pods = new RecordStore<>(Pod::new, PodRecords::pod, podIndexes);
  private final RecordStore<Namespace, NamespaceRecord> namespaces = new RecordStore<>(Namespace::new, PodRecords::namespace);
  private final RecordStore<Node, NodeRecord> nodes = new RecordStore<>(Node::new, PodRecords::node);
  private final RecordStore<PersistentVolumeClaim, PvcRecord> pvcs = new RecordStore<>(PersistentVolumeClaim::new, PodRecords::pvc);
  private final RecordStore<PriorityClass, Integer> priorityClasses = new RecordStore<>(PriorityClass::new, PriorityClass::getValue);
  /** Of policy/v1 or policy/v1beta1, whichever the server serves: set by {@link #start}. */
  private volatile RecordStore<?, PdbRecord> pdbs;
  private final Map<String, ResumingInformers.Watched<?>> informers = new ConcurrentHashMap<>();
  /** All of them are in {@link #informers}: until then the cache is not current, whatever the pods' informer is. */
  private volatile boolean allStarted;
  private final KubernetesClient client;
  private final ResumingInformers resuming;
  private final Metrics metrics;
  /** Not one of the informers above: only LowNodeLoad asks, and its staleness check covers a broken watch. */
  private final NodeUsageSource usage;
  /** LowNodeUtilization's usage from Prometheus: asked only when a policy's strategy reads it. */
  private final PrometheusUsage prometheus;
  private volatile PodListener listener;

  public ClusterCache(KubeClients clients, Metrics metrics) {
    this(clients, metrics, Optional.empty());
  }

  /** @param watchTimeout for tests: how long each watch lasts before the server ends it (and it is resumed) */
  ClusterCache(KubeClients clients, Metrics metrics, Optional<Duration> watchTimeout) {
    this.client = clients.main();
    this.resuming = new ResumingInformers(clients.informers(), watchTimeout);
    this.metrics = metrics;
    this.usage = new NodeUsageSource(client, key -> Optional.ofNullable(pods.record(key)).map(PodRecord::nodeName));
    this.prometheus = new PrometheusUsage(client);
  }

  /**
   * Starts the informers; the future completes when all have listed once and are watching (or fails with the first of
   * them that fails).
   *
   * <p>The pods first: theirs is by far the longest list, and the others (and the discovery of the PDBs' version) are
   * listed while the server answers it. Everything a pod's evaluation reads is cached before the first pod is evaluated:
   * the pods' notifications wait, on the pods informer's own thread, until the others have listed and are watching.
   */
  public CompletableFuture<Void> start(PodListener podListener) {
    this.listener = podListener;
    CompletableFuture<Void> othersWatching = new CompletableFuture<>();
    ResumingInformers.Watched<Pod> podInformer = resuming.informer(Pod.class, PodList.class, c -> c.pods().inAnyNamespace(), pods);
    podInformer.informer().addEventHandler(new PodHandler(othersWatching));
    informers.put("pods", podInformer);
    CompletableFuture<Void> podsWatching = podInformer.informer().start().toCompletableFuture();
    try {
      ResumingInformers.Watched<Namespace> namespaceInformer = resuming.informer(Namespace.class, NamespaceList.class, c -> c.namespaces(), namespaces);
      namespaceInformer.informer().addEventHandler(new NamespaceHandler());
      Map<String, ResumingInformers.Watched<?>> others = new LinkedHashMap<>();
      others.put("namespaces", namespaceInformer);
      others.put("nodes", resuming.informer(Node.class, NodeList.class, c -> c.nodes(), nodes));
      others.put("poddisruptionbudgets", pdbInformer());
      others.put("persistentvolumeclaims",
          resuming.informer(PersistentVolumeClaim.class, PersistentVolumeClaimList.class, c -> c.persistentVolumeClaims().inAnyNamespace(), pvcs));
      others.put("priorityclasses",
          resuming.informer(PriorityClass.class, PriorityClassList.class, c -> c.scheduling().v1().priorityClasses(), priorityClasses));
      informers.putAll(others);
      allStarted = true;
      CompletableFuture.allOf(others.values().stream().map(i -> i.informer().start().toCompletableFuture()).toArray(CompletableFuture[]::new))
          .whenComplete((done, failure) -> {
            if (failure != null) {
              othersWatching.completeExceptionally(failure);
            } else {
              othersWatching.complete(null);
            }
          });
    } catch (RuntimeException e) {
      // The PDBs' discovery failed: the pods informer's notifications must not wait for what will never come.
      othersWatching.completeExceptionally(e);
      throw e;
    }
    return CompletableFuture.allOf(othersWatching, podsWatching);
  }

  /** PDBs as the server serves them: policy/v1 since Kubernetes 1.21, policy/v1beta1 before. */
  private ResumingInformers.Watched<?> pdbInformer() {
    if (client.supports(io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget.class)) {
      return pdbInformer(io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget.class,
          io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetList.class,
          io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget::new, c -> c.policy().v1().podDisruptionBudget().inAnyNamespace(),
          p -> p.getSpec() != null ? p.getSpec().getSelector() : null);
    }
    return pdbInformer(io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudget.class,
        io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudgetList.class,
        io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudget::new, c -> c.policy().v1beta1().podDisruptionBudget().inAnyNamespace(),
        p -> p.getSpec() != null ? p.getSpec().getSelector() : null);
  }

  private <T extends HasMetadata, L extends KubernetesResourceList<T>> ResumingInformers.Watched<T> pdbInformer(
      Class<T> type, Class<L> listType, Supplier<T> blank, Function<KubernetesClient, Informable<T>> operation, Function<T, LabelSelector> selector) {
    RecordStore<T, PdbRecord> store =
        new RecordStore<>(blank, p -> PodRecords.pdb(p.getMetadata().getNamespace(), p.getMetadata().getName(), selector.apply(p)));
    pdbs = store;
    return resuming.informer(type, listType, operation, store);
  }

  /**
   * True when every informer is current: it has listed, is watching, and has caught up since its watch last ended
   * (its watch has brought it to where the server said it was after the break, or it has applied a list since): only
   * then is the cache fit to act on.
   */
  @Override
  public boolean isCurrent() {
    boolean current = allStarted;
    for (Map.Entry<String, ResumingInformers.Watched<?>> e : informers.entrySet()) {
      boolean watching = e.getValue().current();
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
    return Optional.ofNullable(pods.record(key));
  }

  @Override
  public Collection<PodRecord> pods() {
    return pods.records();
  }

  @Override
  public Collection<PodRecord> podsInNamespace(String namespace) {
    return podIndexes.inNamespace(namespace);
  }

  @Override
  public int runningInNamespace(String namespace) {
    return podIndexes.running().inNamespace(namespace);
  }

  @Override
  public int runningInCluster() {
    return podIndexes.running().inCluster();
  }

  @Override
  public Collection<PodRecord> podsOnNode(String node) {
    return podIndexes.onNode(node);
  }

  @Override
  public Collection<PodRecord> podsWithAntiAffinity() {
    return podIndexes.withAntiAffinity();
  }

  @Override
  public Optional<NodeRecord> node(String name) {
    return Optional.ofNullable(nodes.record(name));
  }

  /** The node's uid and resourceVersion as cached (kube/NodeTaints tests them when it writes the node's taints). */
  Optional<RecordStore.Version> nodeVersion(String name) {
    return nodes.version(name);
  }

  @Override
  public Collection<NodeRecord> nodes() {
    return nodes.records();
  }

  @Override
  public List<PdbRecord> pdbs(String namespace) {
    return pdbs.records().stream().filter(p -> p.namespace().equals(namespace)).toList();
  }

  @Override
  public Optional<PvcRecord> pvc(String namespace, String name) {
    return Optional.ofNullable(pvcs.record(namespace + "/" + name));
  }

  @Override
  public OptionalInt priorityClassValue(String name) {
    Integer v = priorityClasses.record(name);
    return v == null ? OptionalInt.empty() : OptionalInt.of(v);
  }

  @Override
  public Optional<NodeUsage> nodeUsage(String node) {
    return usage.get(node);
  }

  @Override
  public Optional<QueriedUsage> queriedUsage(PrometheusQuery query) {
    return prometheus.get(query);
  }

  @Override
  public NamespaceRecord namespace(String name) {
    NamespaceRecord ns = namespaces.record(name);
    return ns != null ? ns : NamespaceRecord.unknown(name);
  }

  @Override
  public void close() {
    informers.values().forEach(i -> i.informer().stop());
    resuming.close();
    usage.close();
    prometheus.close();
  }

  /** The cache already has the change when this runs: it only starts the evaluation. */
  private final class PodHandler implements ResourceEventHandler<Pod> {
    /** The other informers have listed and are watching: until then, notifications wait. */
    private final CompletableFuture<Void> othersWatching;

    PodHandler(CompletableFuture<Void> othersWatching) {
      this.othersWatching = othersWatching;
    }

    @Override
    public void onAdd(Pod pod) {
      changed(pod);
    }

    @Override
    public void onUpdate(Pod oldPod, Pod newPod) {
      changed(newPod);
    }

    /** With the pod's last state, or (found gone by a relist) with who it was. */
    @Override
    public void onDelete(Pod pod, boolean finalStateUnknown) {
      if (othersCached()) {
        listener.podDeleted(PodRecords.pod(pod));
      }
    }

    /** The pod as cached now, which may be newer than the notification; a pod since deleted is left to its deletion. */
    private void changed(Pod pod) {
      PodRecord cached = othersCached() ? pods.record(Cache.metaNamespaceKeyFunc(pod)) : null;
      if (cached != null) {
        listener.podChanged(cached);
      }
    }

    /** Waits, on the pods informer's own thread, for the others; false if one of them failed, and so the start. */
    private boolean othersCached() {
      try {
        othersWatching.join();
        return true;
      } catch (CompletionException | CancellationException e) {
        return false;
      }
    }
  }

  /**
   * A namespace changed (its resourceVersion did; fabric8 says nothing when a relist finds it as it was), so its
   * labels or its protection may have: its pods are evaluated again.
   */
  private final class NamespaceHandler implements ResourceEventHandler<Namespace> {
    @Override
    public void onAdd(Namespace namespace) {
      // A new namespace has no cached pods yet; they are evaluated as they arrive.
    }

    @Override
    public void onUpdate(Namespace oldNamespace, Namespace newNamespace) {
      listener.namespaceChanged(newNamespace.getMetadata().getName());
    }

    @Override
    public void onDelete(Namespace namespace, boolean finalStateUnknown) {
      // Its pods go with it, each with its own deletion.
    }
  }
}
