package io.podsweeper.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.podsweeper.policy.CleanupPolicies;
import io.podsweeper.policy.Judgements;
import io.podsweeper.policy.CleanupPolicies.ClusterRails;
import io.podsweeper.policy.CleanupPolicies.Outcome;
import io.podsweeper.policy.CleanupPolicies.Verdict;
import io.podsweeper.policy.Policy;
import io.podsweeper.removal.PoliciesCurrent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the {@code PodCleanupPolicy} and {@code ClusterPodCleanupPolicy} custom resources (manifests/crds/), judges
 * every namespaced policy against the rule language and the guard rails ({@link CleanupPolicies}), applies the file
 * policy composed with the accepted ones, and writes each object's {@code status} (a merge patch of the status
 * subresource, only when it changes). Every change (either kind, or a new file policy) is reconciled on one thread
 * within {@link #DEBOUNCE_MILLIS}, and at most once per {@link #RECONCILE_INTERVAL_MILLIS}: a burst of edits is one
 * reconcile, and the admin's change waits at most that interval whatever the tenants do. If the API server does not
 * serve the CRDs, the file policy runs alone.
 */
public final class NamespacedPolicies implements AutoCloseable, PoliciesCurrent {
  private static final Logger LOG = LoggerFactory.getLogger(NamespacedPolicies.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  static final String GROUP_VERSION = "podsweeper.io/v1alpha1";
  static final long DEBOUNCE_MILLIS = 200;
  /** A tenant patching a policy many times a second costs one reconcile (every policy judged) per interval. */
  static final long RECONCILE_INTERVAL_MILLIS = 1000;
  static final ResourceDefinitionContext NAMESPACED = context("PodCleanupPolicy", "podcleanuppolicies", true);
  static final ResourceDefinitionContext CLUSTER = context("ClusterPodCleanupPolicy", "clusterpodcleanuppolicies", false);

  private final KubernetesClient client;
  /** The informers' client ({@link KubeClients#informers}): their watches end instead of resuming. */
  private final KubernetesClient watching;
  private final Consumer<Policy> apply;
  private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "namespaced-policies");
    t.setDaemon(true);
    return t;
  });
  private final AtomicBoolean pending = new AtomicBoolean();
  /** When the last reconcile started ({@link System#nanoTime}); at first long enough ago not to delay the first. */
  private volatile long lastReconcileNanos = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(RECONCILE_INTERVAL_MILLIS);
  private volatile Policy filePolicy;
  private Policy applied;
  private volatile SharedIndexInformer<GenericKubernetesResource> namespaced;
  private volatile SharedIndexInformer<GenericKubernetesResource> cluster;
  /**
   * The specs the policy in force was composed from (each object's uid and generation), by namespace ({@link #CLUSTER_WIDE}
   * for the ClusterPodCleanupPolicies); empty before the first.
   */
  private volatile Map<String, Set<String>> appliedSpecs = Map.of();
  /** The verdicts of the last reconcile: a policy unchanged since is not judged again. */
  private final Judgements judgements = new Judgements();
  /** The key of the cluster-scoped policies' specs: no namespace is named so. */
  private static final String CLUSTER_WIDE = "";

  /** @param filePolicy the policy the sweeper already runs; {@code apply} gets every combined policy that differs */
  public NamespacedPolicies(KubeClients clients, Policy filePolicy, Consumer<Policy> apply) {
    this.client = clients.main();
    this.watching = clients.informers();
    this.filePolicy = filePolicy;
    this.applied = filePolicy;
    this.apply = apply;
  }

  private static ResourceDefinitionContext context(String kind, String plural, boolean namespaced) {
    return new ResourceDefinitionContext.Builder().withGroup("podsweeper.io").withVersion("v1alpha1").withKind(kind)
        .withPlural(plural).withNamespaced(namespaced).build();
  }

  /**
   * Starts both informers and waits for their first list. Without the CRDs installed (or readable), logs it once and
   * looks again every {@code lookAgain}: CRDs installed later take effect then, without a restart.
   */
  public void start(long syncTimeoutSeconds, Duration lookAgain) {
    if (startInformers(syncTimeoutSeconds, true)) {
      // In force before start returns: the first decisions see the teams' policies, and the service is ready at once.
      try {
        executor.submit(this::reconcile).get(syncTimeoutSeconds, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        LOG.warn("the first reconcile of the namespaced policies did not finish: {}", e.toString());
      }
      return;
    }
    AtomicReference<ScheduledFuture<?>> looking = new AtomicReference<>();
    looking.set(executor.scheduleWithFixedDelay(() -> {
      if (startInformers(syncTimeoutSeconds, false)) {
        reconcile();
        looking.get().cancel(false);
      }
    }, lookAgain.toMillis(), lookAgain.toMillis(), TimeUnit.MILLISECONDS));
  }

  /** True once both informers have listed; {@code tellWhyNot} logs why not (only the first attempt, not every retry). */
  private boolean startInformers(long syncTimeoutSeconds, boolean tellWhyNot) {
    if (!served(client)) {
      if (tellWhyNot) {
        LOG.warn("the API server does not serve {} PodCleanupPolicy/ClusterPodCleanupPolicy (CRDs in manifests/crds/ not installed);"
            + " only the file policy applies until they are", GROUP_VERSION);
      }
      return false;
    }
    ResourceEventHandler<GenericKubernetesResource> changed = new ResourceEventHandler<>() {
      @Override
      public void onAdd(GenericKubernetesResource obj) {
        schedule();
      }

      /**
       * Only a new spec (a new generation) is judged again: a status write (this service's own: verdicts, removals, a
       * team throttled) would otherwise have every policy judged again, each time, whatever it cost.
       */
      @Override
      public void onUpdate(GenericKubernetesResource oldObj, GenericKubernetesResource newObj) {
        if (!Objects.equals(oldObj.getMetadata().getGeneration(), newObj.getMetadata().getGeneration())) {
          schedule();
        }
      }

      @Override
      public void onDelete(GenericKubernetesResource obj, boolean finalStateUnknown) {
        schedule();
      }
    };
    // Never resumed (a resumed watch says "watching" before the server's replay of a change made meanwhile).
    SharedIndexInformer<GenericKubernetesResource> namespacedInformer =
        ResumingInformers.unresumed(GenericKubernetesResource.class, watching.genericKubernetesResources(NAMESPACED).inAnyNamespace());
    SharedIndexInformer<GenericKubernetesResource> clusterInformer =
        ResumingInformers.unresumed(GenericKubernetesResource.class, watching.genericKubernetesResources(CLUSTER));
    namespacedInformer.addEventHandler(changed);
    clusterInformer.addEventHandler(changed);
    try {
      CompletableFuture.allOf(namespacedInformer.start().toCompletableFuture(), clusterInformer.start().toCompletableFuture())
          .get(syncTimeoutSeconds, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      namespacedInformer.stop();
      clusterInformer.stop();
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException | TimeoutException e) {
      // e.g. RBAC without the CRD rules: the file policy keeps running.
      if (tellWhyNot) {
        Throwable why = e.getCause() != null ? e.getCause() : e;
        LOG.error("cannot list {} PodCleanupPolicy/ClusterPodCleanupPolicy; only the file policy applies until it can: {}", GROUP_VERSION,
            why instanceof KubernetesClientException answer ? ApiAnswers.oneLine(answer) : why.toString());
      }
      namespacedInformer.stop();
      clusterInformer.stop();
      return false;
    }
    cluster = clusterInformer;
    namespaced = namespacedInformer;
    LOG.info("namespaced policies apply: {} PodCleanupPolicy and {} ClusterPodCleanupPolicy object(s) listed",
        namespacedInformer.getStore().list().size(), clusterInformer.getStore().list().size());
    return true;
  }

  /**
   * How long removal counts gather before they are written to the policies' status (one patch per policy that removed
   * anything). A write is scheduled by the first removal after the last write, not looked for every 2 s: an idle
   * service wakes for nothing (docs/benchmarks.md, sixth pass).
   */
  static final long REMOVALS_WRITTEN_AFTER_SECONDS = 2;

  /**
   * The PodCleanupPolicies as they are now, judged as the service judges them, read once and written nowhere (what
   * {@code plan} and {@code explain} compose with the file policy on a live cluster); none when the CRDs are not served.
   */
  public static List<Verdict> judgeOnce(KubernetesClient client) {
    if (!served(client)) {
      return List.of();
    }
    ClusterRails rails = rails(
        Optional.ofNullable(client.genericKubernetesResources(CLUSTER).withName(CleanupPolicies.CLUSTER_POLICY_NAME).get()));
    return CleanupPolicies.judgeAll(sources(oldestFirst(client.genericKubernetesResources(NAMESPACED).inAnyNamespace().list().getItems())), rails);
  }

  /** The guard rails ClusterPodCleanupPolicy {@value CleanupPolicies#CLUSTER_POLICY_NAME} sets, if it exists. */
  private static ClusterRails rails(Optional<GenericKubernetesResource> clusterPolicy) {
    return CleanupPolicies.clusterRails(clusterPolicy.map(NamespacedPolicies::spec));
  }

  /** Oldest first: past a namespace's maxPoliciesPerNamespace, the newest are the ones rejected. */
  private static List<GenericKubernetesResource> oldestFirst(List<GenericKubernetesResource> policies) {
    return policies.stream()
        .sorted(Comparator.comparing((GenericKubernetesResource p) -> Instant.parse(p.getMetadata().getCreationTimestamp()))
            .thenComparing(p -> p.getMetadata().getNamespace()).thenComparing(p -> p.getMetadata().getName()))
        .toList();
  }

  /** The policies as the judgement reads them, in the same order. */
  private static List<CleanupPolicies.Source> sources(List<GenericKubernetesResource> oldestFirst) {
    return oldestFirst.stream().map(p -> new CleanupPolicies.Source(p.getMetadata().getNamespace(), p.getMetadata().getName(), spec(p))).toList();
  }

  private static boolean served(KubernetesClient client) {
    try {
      // null: the group version is not served at all (no CRD installed)
      APIResourceList served = client.getApiResources(GROUP_VERSION);
      return served != null && served.getResources().stream().anyMatch(r -> r.getName().equals(NAMESPACED.getPlural()));
    } catch (KubernetesClientException e) {
      return false;
    }
  }

  /** A new file policy (hot reload): composed with the accepted namespaced policies and applied. */
  public void filePolicyChanged(Policy policy) {
    filePolicy = policy;
    schedule();
  }

  private void schedule() {
    if (pending.compareAndSet(false, true)) {
      long sinceLast = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastReconcileNanos);
      executor.schedule(this::reconcile, Math.max(DEBOUNCE_MILLIS, RECONCILE_INTERVAL_MILLIS - sinceLast), TimeUnit.MILLISECONDS);
    }
  }

  /**
   * True while removals in {@code namespace} may rely on the policy in force: the CRDs are not watched at all (the file
   * policy alone), or both informers watch and the policy in force was composed from the specs they hold of the
   * namespace's own PodCleanupPolicies and of the ClusterPodCleanupPolicies. False from the moment a watch ends until it
   * has listed again, and from a change of such a spec (or a policy added or deleted) until the reconcile has applied it;
   * a status write changes no generation, so the service's own writes hold nothing. A team's policies act in its
   * namespace alone, so one whose many policies take a while to judge holds back its own pods, not another namespace's.
   */
  @Override
  public boolean in(String namespace) {
    SharedIndexInformer<GenericKubernetesResource> ns = namespaced;
    SharedIndexInformer<GenericKubernetesResource> cl = cluster;
    if (!isWatching()) {
      return false;
    }
    if (ns == null || cl == null) {
      return true;
    }
    // Asked per due pod, and again last before a send: the namespace's own policies by the informer's namespace
    // index, and the cluster's (a few), not every policy of every team.
    Map<String, Set<String>> applied = appliedSpecs;
    return specVersions(cl.getStore().list()).equals(applied.getOrDefault(CLUSTER_WIDE, Set.of()))
        && specVersions(ns.getIndexer().byIndex(Cache.NAMESPACE_INDEX, namespace)).equals(applied.getOrDefault(namespace, Set.of()));
  }

  /** Each policy's uid and generation. */
  private static Set<String> specVersions(Collection<GenericKubernetesResource> policies) {
    Set<String> specs = new HashSet<>();
    for (GenericKubernetesResource o : policies) {
      specs.add(specVersion(o.getMetadata()));
    }
    return specs;
  }

  /** Which spec of which policy: its uid and generation (a status write changes neither). */
  private static String specVersion(ObjectMeta meta) {
    return meta.getUid() + "/" + meta.getGeneration();
  }

  @Override
  public boolean watched() {
    return isWatching();
  }

  /** True while both informers watch, or the CRDs are not watched at all: whether the API server is in reach. */
  public boolean isWatching() {
    SharedIndexInformer<GenericKubernetesResource> ns = namespaced;
    SharedIndexInformer<GenericKubernetesResource> cl = cluster;
    return ns == null || cl == null || ns.isWatching() && cl.isWatching();
  }

  /** Each policy's uid and generation, by namespace ({@link #CLUSTER_WIDE} for the cluster-scoped ones). */
  private static Map<String, Set<String>> specsHeld(SharedIndexInformer<GenericKubernetesResource> ns,
      SharedIndexInformer<GenericKubernetesResource> cl) {
    Map<String, Set<String>> specs = new HashMap<>();
    for (SharedIndexInformer<GenericKubernetesResource> informer : List.of(ns, cl)) {
      for (GenericKubernetesResource o : informer.getStore().list()) {
        specs.computeIfAbsent(Objects.requireNonNullElse(o.getMetadata().getNamespace(), CLUSTER_WIDE), k -> new HashSet<>())
            .add(specVersion(o.getMetadata()));
      }
    }
    return specs;
  }


  private void reconcile() {
    lastReconcileNanos = System.nanoTime();
    pending.set(false);
    // Read before the stores are: a change that lands meanwhile leaves the policy not current until it is applied too.
    Map<String, Set<String>> specs = namespaced != null ? specsHeld(namespaced, cluster) : Map.of();
    try {
      List<Verdict> verdicts = new ArrayList<>();
      if (namespaced != null) {
        ClusterRails rails = rails(Optional.ofNullable(cluster.getStore().getByKey(CleanupPolicies.CLUSTER_POLICY_NAME)));
        for (GenericKubernetesResource c : cluster.getStore().list()) {
          writeStatus(client.genericKubernetesResources(CLUSTER).withName(c.getMetadata().getName()), c,
              c.getMetadata().getName().equals(CleanupPolicies.CLUSTER_POLICY_NAME) ? rails.outcome()
                  : new Outcome(false, "Ignored", "only ClusterPodCleanupPolicy \"" + CleanupPolicies.CLUSTER_POLICY_NAME + "\" is read"));
        }
        List<GenericKubernetesResource> oldestFirst = oldestFirst(namespaced.getStore().list());
        List<Verdict> judged = judgements.judgeAll(sources(oldestFirst), rails);
        for (int i = 0; i < oldestFirst.size(); i++) {
          GenericKubernetesResource p = oldestFirst.get(i);
          writeStatus(client.genericKubernetesResources(NAMESPACED).inNamespace(p.getMetadata().getNamespace())
              .withName(p.getMetadata().getName()), p, judged.get(i).outcome());
        }
        verdicts.addAll(judged);
      }
      policyByProfile = verdicts.stream().filter(v -> v.profile().isPresent()).collect(java.util.stream.Collectors.toUnmodifiableMap(
          v -> v.profile().get().name(), v -> v.source().namespace() + "/" + v.source().name()));
      Policy combined = CleanupPolicies.compose(filePolicy, verdicts);
      if (!combined.equals(applied)) {
        applied = combined;
        apply.accept(combined);
        LOG.info("policy applied: {} profile(s), {} of {} PodCleanupPolicy object(s) accepted", combined.profiles().size(),
            verdicts.stream().filter(v -> v.outcome().accepted()).count(), verdicts.size());
      }
      appliedSpecs = specs;
    } catch (RuntimeException e) {
      LOG.error("cannot reconcile the namespaced policies; the last applied policy keeps running", e);
    }
  }

  private static JsonNode spec(GenericKubernetesResource object) {
    return JSON.valueToTree(object.getAdditionalProperties().get("spec"));
  }

  /**
   * Writes {@code phase}, {@code observedGeneration} and the conditions, unless they already say so. Besides
   * {@code Accepted}, the kstatus conditions GitOps tools read (Flux, Argo CD, kpt): {@code Ready} ({@code True}: in
   * force as written), and for a rejected policy {@code Stalled} ({@code True}: nothing happens until its spec
   * changes), so a rejected policy is a failed apply there, not one forever in progress.
   */
  private void writeStatus(Resource<GenericKubernetesResource> target, GenericKubernetesResource object, Outcome outcome) {
    JsonNode current = JSON.valueToTree(object.getAdditionalProperties().get("status"));
    long generation = Objects.requireNonNullElse(object.getMetadata().getGeneration(), 0L);
    String status = outcome.accepted() ? "True" : "False";
    List<ObjectNode> conditions = new ArrayList<>(List.of(
        condition("Accepted", status, outcome, generation, current), condition("Ready", status, outcome, generation, current)));
    if (!outcome.accepted()) {
      conditions.add(condition("Stalled", "True", outcome, generation, current));
    }
    if (current.path("observedGeneration").asLong(-1) == generation && sameConditions(current.path("conditions"), conditions)) {
      return;
    }
    ObjectNode patch = JSON.createObjectNode();
    ObjectNode s = patch.putObject("status");
    s.put("phase", outcome.accepted() ? "Accepted" : "Rejected");
    s.put("observedGeneration", generation);
    s.putArray("conditions").addAll(conditions);
    try {
      target.subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), patch.toString());
      if (!outcome.accepted()) {
        LOG.warn("{} {}/{} rejected: {}: {}", object.getKind(), Objects.requireNonNullElse(object.getMetadata().getNamespace(), ""),
            object.getMetadata().getName(), outcome.reason(), outcome.message());
      }
    } catch (KubernetesClientException e) {
      LOG.warn("cannot write the status of {} {}: {}", object.getKind(), object.getMetadata().getName(), e.getMessage());
    }
  }

  /** Condition {@code type}; its lastTransitionTime stays what {@code current} says while its status does not change. */
  private static ObjectNode condition(String type, String status, Outcome outcome, long generation, JsonNode current) {
    JsonNode before = JSON.createObjectNode();
    for (JsonNode c : current.path("conditions")) {
      if (c.path("type").asText().equals(type)) {
        before = c;
      }
    }
    String since = before.path("status").asText().equals(status) ? before.path("lastTransitionTime").asText()
        : Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    return JSON.createObjectNode().put("type", type).put("status", status).put("reason", outcome.reason())
        .put("message", outcome.message()).put("observedGeneration", generation).put("lastTransitionTime", since);
  }

  /** The same conditions in the same order, the times aside (they are kept when nothing else changes). */
  private static boolean sameConditions(JsonNode written, List<ObjectNode> wanted) {
    if (written.size() != wanted.size()) {
      return false;
    }
    for (int i = 0; i < wanted.size(); i++) {
      for (String field : List.of("type", "status", "reason", "message", "observedGeneration")) {
        // as text: the server's number may come back an int where this wrote a long
        if (!written.path(i).path(field).asText().equals(wanted.get(i).path(field).asText())) {
          return false;
        }
      }
    }
    return true;
  }

  /** Removals not yet written to their policy's status, by namespace/name: the count and the latest time. */
  private record Removals(long count, Instant last) {}

  /** A namespace's team rules put off for a while, at {@code last}, and why in figures. */
  private record Throttle(Instant last, String message) {}

  /** Namespaces whose team rules were put off since the last write, each written to its policies' status.throttled. */
  private final java.util.Map<String, Throttle> throttles = new java.util.concurrent.ConcurrentHashMap<>();

  private final java.util.Map<String, Removals> unwritten = new java.util.concurrent.ConcurrentHashMap<>();
  /** True from the removal that scheduled a write until that write starts: removals after that schedule the next one. */
  private final AtomicBoolean writeScheduled = new AtomicBoolean();

  /** The accepted policies, by the name of the profile each runs as: whose status counts a removal. */
  private volatile java.util.Map<String, String> policyByProfile = java.util.Map.of();

  /**
   * A pod was removed by {@code profile}; if that is a PodCleanupPolicy's, the count goes to the policy's status
   * within a few seconds, added to what it already says, so it survives restarts.
   */
  public void removed(String profile, Instant at) {
    String policy = policyByProfile.get(profile);
    if (policy == null) {
      return;
    }
    unwritten.merge(policy, new Removals(1, at),
        (a, b) -> new Removals(a.count() + b.count(), a.last().isAfter(b.last()) ? a.last() : b.last()));
    scheduleWrite();
  }

  /**
   * The team rules of {@code namespace} had used up their share of the evaluation thread and were put off: its
   * PodCleanupPolicies' {@code status.throttled} says when and by how much, within a few seconds (one write per policy
   * per few seconds however often it happens).
   */
  public void throttled(String namespace, String message, Instant at) {
    throttles.put(namespace, new Throttle(at, message));
    scheduleWrite();
  }

  private void scheduleWrite() {
    if (writeScheduled.compareAndSet(false, true)) {
      try {
        executor.schedule(this::writeRemovals, REMOVALS_WRITTEN_AFTER_SECONDS, TimeUnit.SECONDS);
      } catch (RejectedExecutionException e) {
        LOG.debug("closed: status not written to the PodCleanupPolicies");
      }
    }
  }

  private void writeRemovals() {
    // Cleared before reading: a removal merged after this schedules the next write (if this one misses it).
    writeScheduled.set(false);
    for (String ns : List.copyOf(throttles.keySet())) {
      Throttle throttle = throttles.remove(ns);
      for (GenericKubernetesResource object : namespaced.getStore().list()) {
        if (throttle != null && ns.equals(object.getMetadata().getNamespace())) {
          ObjectNode patch = JSON.createObjectNode();
          patch.putObject("status").putObject("throttled").put("last", throttle.last().toString()).put("message", throttle.message());
          patchStatus(object, patch);
        }
      }
    }
    for (String key : List.copyOf(unwritten.keySet())) {
      Removals delta = unwritten.remove(key);
      GenericKubernetesResource object = namespaced.getStore().getByKey(key);
      if (delta == null || object == null) {
        continue;
      }
      long before = JSON.valueToTree(object.getAdditionalProperties().get("status")).path("removals").asLong(0);
      ObjectNode patch = JSON.createObjectNode();
      patch.putObject("status").put("removals", before + delta.count()).put("lastRemoval", delta.last().toString());
      patchStatus(object, patch);
    }
  }

  private void patchStatus(GenericKubernetesResource object, ObjectNode patch) {
    try {
      client.genericKubernetesResources(NAMESPACED).inNamespace(object.getMetadata().getNamespace())
          .withName(object.getMetadata().getName()).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), patch.toString());
    } catch (KubernetesClientException e) {
      LOG.warn("cannot write the status of PodCleanupPolicy {}/{}: {}", object.getMetadata().getNamespace(),
          object.getMetadata().getName(), e.getMessage());
    }
  }

  @Override
  public void close() {
    executor.shutdownNow();
    if (namespaced != null) {
      namespaced.stop();
      cluster.stop();
    }
  }
}
