package io.podsweeper.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The one fluent builder of {@link PodRecord}s and {@link NodeRecord}s for unit tests, with container-status helpers.
 *
 * <p>A {@link #pod pod} defaults to: namespace {@code default}, uid {@code uid-<namespace>-<name>}, resourceVersion
 * {@code 1}, phase Running on node {@code node-a}, one controlling owner ReplicaSet {@code rs-<name>} (uid
 * {@code uid-rs-<name>}), created at {@link #NOW} (age 0) with no start time, one running main container, image
 * {@code busybox:1.36}; no labels, annotations, priority or priority class, conditions, volumes or scheduling
 * constraints (QoS BestEffort, Burstable once it requests some cpu or memory, as Kubernetes classes it).
 *
 * <p>A {@link #node node} defaults to: Ready, schedulable, no labels or taints, allocatable 4 cpu, 8 GiB memory and
 * 110 pods.
 */
public final class PodFixtures {
  /** The fixed "now" every test plans at. */
  public static final Instant NOW = Instant.parse("2026-06-30T12:00:00Z");

  private PodFixtures() {}

  public static PodBuilder pod(String name) {
    return new PodBuilder(name);
  }

  /** A builder of the same pod (name, namespace, uid, labels, owner, requests, anti-affinity), to change. */
  public static PodBuilder rebuilt(PodRecord p) {
    PodBuilder b = pod(p.name()).ns(p.namespace()).uid(p.uid()).on(p.nodeName()).phase(p.phase());
    p.labels().forEach(b::label);
    p.controller().ifPresent(o -> b.ownedBy(o.kind(), o.name()));
    p.scheduling().requests().forEach(b::requests);
    p.scheduling().requiredPodAntiAffinity().forEach(b::antiAffinity);
    return b;
  }

  public static NodeBuilder node(String name) {
    return new NodeBuilder(name);
  }

  public static NamespaceRecord namespace(String name, Map<String, String> labels) {
    Map<String, String> all = new LinkedHashMap<>(labels);
    all.put("kubernetes.io/metadata.name", name);
    return new NamespaceRecord(name, all);
  }

  public static ContainerStatus running(String name) {
    return new ContainerStatus(name, ContainerStatus.Kind.MAIN, Optional.empty(), Optional.empty(), OptionalInt.empty(),
        Optional.empty(), 0);
  }

  public static ContainerStatus waiting(String name, String reason, int restarts) {
    return waiting(name, ContainerStatus.Kind.MAIN, reason, restarts);
  }

  public static ContainerStatus waiting(String name, ContainerStatus.Kind kind, String reason, int restarts) {
    return new ContainerStatus(name, kind, Optional.of(reason), Optional.empty(), OptionalInt.empty(), Optional.empty(), restarts);
  }

  public static ContainerStatus terminated(String name, String reason, int exitCode) {
    return terminated(name, ContainerStatus.Kind.MAIN, reason, exitCode);
  }

  public static ContainerStatus terminated(String name, ContainerStatus.Kind kind, String reason, int exitCode) {
    return new ContainerStatus(name, kind, Optional.empty(), Optional.of(reason), OptionalInt.of(exitCode),
        Optional.of(NOW.minusSeconds(60)), 0);
  }

  /** A main container that terminated at a given time. */
  public static ContainerStatus terminatedAt(String name, String reason, int exitCode, Instant finishedAt) {
    return new ContainerStatus(name, ContainerStatus.Kind.MAIN, Optional.empty(), Optional.of(reason), OptionalInt.of(exitCode),
        Optional.of(finishedAt), 0);
  }

  /**
   * A main container the kubelet lost track of as it evicted the pod: terminated ContainerStatusUnknown, exit 137, and
   * no finishedAt.
   */
  public static ContainerStatus statusUnknown(String name) {
    return new ContainerStatus(name, ContainerStatus.Kind.MAIN, Optional.empty(), Optional.of("ContainerStatusUnknown"),
        OptionalInt.of(137), Optional.empty(), 0);
  }

  public static ContainerStatus restarted(String name, ContainerStatus.Kind kind, int restarts) {
    return new ContainerStatus(name, kind, Optional.empty(), Optional.empty(), OptionalInt.empty(), Optional.empty(), restarts);
  }

  public static final class PodBuilder {
    private String namespace = "default";
    private final String name;
    private String uid;
    private String resourceVersion = "1";
    private Instant created = NOW;
    private Optional<Instant> deletion = Optional.empty();
    private String nodeName = "node-a";
    private String phase = "Running";
    private Optional<String> reason = Optional.empty();
    private final Map<String, String> labels = new LinkedHashMap<>();
    private final Map<String, String> annotations = new LinkedHashMap<>();
    private List<OwnerRef> owners;
    private List<ContainerStatus> containers;
    private OptionalInt priority = OptionalInt.empty();
    private String priorityClassName = "";
    private Optional<Instant> startTime = Optional.empty();
    private final List<PodCondition> conditions = new ArrayList<>();
    private boolean localStorage;
    private boolean resourceClaims;
    private final List<String> pvcs = new ArrayList<>();
    private Map<String, String> nodeSelector = Map.of();
    private List<NodeSelectorTerm> requiredNodeAffinity = List.of();
    private List<Scheduling.PreferredTerm> preferredNodeAffinity = List.of();
    private final List<Toleration> tolerations = new ArrayList<>();
    private List<Scheduling.PodAffinityTerm> antiAffinity = List.of();
    private List<Scheduling.PodAffinityTerm> affinity = List.of();
    private final List<Scheduling.HostPort> hostPorts = new ArrayList<>();
    private final Map<String, Long> requests = new LinkedHashMap<>();
    private final List<Scheduling.SpreadConstraint> spreadConstraints = new ArrayList<>();
    private List<String> images = List.of("busybox:1.36");
    private List<String> schedulingGates = List.of();
    private boolean nodeShutdownMessage;

    private PodBuilder(String name) {
      this.name = name;
      this.owners = List.of(new OwnerRef("ReplicaSet", "rs-" + name, "uid-rs-" + name, true));
    }

    public PodBuilder uid(String value) {
      uid = value;
      return this;
    }

    public PodBuilder rv(String value) {
      resourceVersion = value;
      return this;
    }

    /** Adds one container status (the default is one running "main" container when none is given). */
    public PodBuilder container(ContainerStatus value) {
      containers = containers == null ? new ArrayList<>() : new ArrayList<>(containers);
      containers.add(value);
      return this;
    }

    public PodBuilder ns(String value) {
      namespace = value;
      return this;
    }

    /** Created {@code age} before {@link #NOW}. */
    public PodBuilder age(Duration age) {
      created = NOW.minus(age);
      return this;
    }

    public PodBuilder ageSeconds(long seconds) {
      return age(Duration.ofSeconds(seconds));
    }

    public PodBuilder created(Instant value) {
      created = value;
      return this;
    }

    public PodBuilder terminating() {
      deletion = Optional.of(NOW.minusSeconds(1));
      return this;
    }

    public PodBuilder on(String node) {
      nodeName = node;
      return this;
    }

    public PodBuilder unscheduled() {
      nodeName = "";
      phase = "Pending";
      return this;
    }

    public PodBuilder phase(String value) {
      phase = value;
      return this;
    }

    public PodBuilder reason(String value) {
      reason = Optional.of(value);
      return this;
    }

    public PodBuilder label(String key, String value) {
      labels.put(key, value);
      return this;
    }

    public PodBuilder annotation(String key, String value) {
      annotations.put(key, value);
      return this;
    }

    /** No ownerReferences at all. */
    public PodBuilder bare() {
      owners = List.of();
      return this;
    }

    /** Replaces the owners by one of this kind, named {@code name} with uid {@code uid-<name>}. */
    public PodBuilder ownedBy(String kind, String ownerName) {
      owners = List.of(new OwnerRef(kind, ownerName, "uid-" + ownerName, true));
      return this;
    }

    /** Replaces the owners by these ownerReferences, as given (a controller or not). */
    public PodBuilder owners(List<OwnerRef> value) {
      owners = List.copyOf(value);
      return this;
    }

    public PodBuilder containers(ContainerStatus... values) {
      containers = List.of(values);
      return this;
    }

    public PodBuilder priority(int value) {
      priority = OptionalInt.of(value);
      return this;
    }

    /** {@code spec.priorityClassName} alone: the priority stays as set (none unless {@link #priority} is called). */
    public PodBuilder priorityClassName(String value) {
      priorityClassName = value;
      return this;
    }

    public PodBuilder startedAgo(Duration ago) {
      startTime = Optional.of(NOW.minus(ago));
      return this;
    }

    public PodBuilder started(Instant value) {
      startTime = Optional.of(value);
      return this;
    }

    public PodBuilder condition(String type, String status, String conditionReason, Instant lastTransition) {
      conditions.add(new PodCondition(type, status, Optional.ofNullable(conditionReason), Optional.ofNullable(lastTransition)));
      return this;
    }

    public PodBuilder localStorage() {
      localStorage = true;
      return this;
    }

    public PodBuilder pvc(String claim) {
      pvcs.add(claim);
      return this;
    }

    /** The pod claims a dynamically allocated resource ({@code spec.resourceClaims}, e.g. a GPU by DRA). */
    public PodBuilder resourceClaim() {
      resourceClaims = true;
      return this;
    }

    public PodBuilder nodeSelector(Map<String, String> value) {
      nodeSelector = value;
      return this;
    }

    public PodBuilder tolerates(String key, String value, String effect) {
      tolerations.add(new Toleration(key, "Equal", value, effect));
      return this;
    }

    /** Required node affinity terms (any one satisfies), replacing any. */
    public PodBuilder requiredNodeAffinity(NodeSelectorTerm... terms) {
      requiredNodeAffinity = List.of(terms);
      return this;
    }

    /** Preferred node affinity terms, replacing any. */
    public PodBuilder preferredNodeAffinity(Scheduling.PreferredTerm... terms) {
      preferredNodeAffinity = List.of(terms);
      return this;
    }

    /** Required pod anti-affinity terms, replacing any. */
    public PodBuilder antiAffinity(Scheduling.PodAffinityTerm... terms) {
      antiAffinity = List.of(terms);
      return this;
    }

    /** Required pod affinity terms, replacing any. */
    public PodBuilder affinity(Scheduling.PodAffinityTerm... terms) {
      affinity = List.of(terms);
      return this;
    }

    /** A main container's host port. */
    public PodBuilder hostPort(String hostIP, String protocol, int port) {
      hostPorts.add(new Scheduling.HostPort(hostIP, protocol, port));
      return this;
    }

    /** Adds a toleration as written. */
    public PodBuilder toleration(Toleration toleration) {
      tolerations.add(toleration);
      return this;
    }

    /** Adds a topology spread constraint to what the pod already has. */
    public PodBuilder spread(Scheduling.SpreadConstraint constraint) {
      spreadConstraints.add(constraint);
      return this;
    }

    /** A resource request: cpu in millicores, memory in bytes; a cpu or memory one above 0 makes the pod Burstable. */
    public PodBuilder requests(String resource, long amount) {
      requests.put(resource, amount);
      return this;
    }

    /** The images of the pod's containers, replacing the default. */
    public PodBuilder images(String... values) {
      images = List.of(values);
      return this;
    }

    /** {@code spec.schedulingGates} by name: unscheduled and Pending too, as a gated pod is. */
    public PodBuilder gated(String... gates) {
      schedulingGates = List.of(gates);
      return unscheduled();
    }

    /** {@code status.message} is the kubelet's graceful node shutdown message (with {@code reason("Terminated")}). */
    public PodBuilder nodeShutdownMessage() {
      nodeShutdownMessage = true;
      return this;
    }

    public PodRecord build() {
      List<ContainerStatus> cs = containers != null ? containers : List.of(running("main"));
      return new PodRecord(namespace, name, uid != null ? uid : "uid-" + namespace + "-" + name, resourceVersion, created, deletion, nodeName, phase, reason,
          labels, annotations, owners, cs, priority, priorityClassName, startTime, conditions, new Volumes(localStorage, pvcs, resourceClaims),
          new Scheduling(nodeSelector, requiredNodeAffinity, preferredNodeAffinity, tolerations, antiAffinity, requests,
              qosClass(), spreadConstraints, affinity, hostPorts),
          images, schedulingGates, nodeShutdownMessage);
    }

    /** Kubernetes' QoS class without limits: only cpu and memory requests count, and only above 0. */
    private String qosClass() {
      boolean requested = requests.entrySet().stream().anyMatch(r -> Set.of("cpu", "memory").contains(r.getKey()) && r.getValue() > 0);
      return requested ? "Burstable" : "BestEffort";
    }
  }

  public static final class NodeBuilder {
    private final String name;
    private final Map<String, String> labels = new LinkedHashMap<>();
    private boolean ready = true;
    private boolean unschedulable;
    private final List<Taint> taints = new ArrayList<>();
    private final Map<String, Long> allocatable = new LinkedHashMap<>(Map.of("cpu", 4000L, "memory", 8L << 30, "pods", 110L));

    private NodeBuilder(String name) {
      this.name = name;
    }

    public NodeBuilder notReady() {
      ready = false;
      return this;
    }

    public NodeBuilder unschedulable() {
      unschedulable = true;
      return this;
    }

    public NodeBuilder label(String key, String value) {
      labels.put(key, value);
      return this;
    }

    public NodeBuilder taint(String key, String value, String effect) {
      taints.add(new Taint(key, value, effect));
      return this;
    }

    /** Allocatable cpu in millicores. */
    public NodeBuilder cpu(long millis) {
      allocatable.put("cpu", millis);
      return this;
    }

    /** Allocatable of any resource (memory in bytes); a missing one is none at all to the scheduler. */
    public NodeBuilder allocatable(String resource, long amount) {
      allocatable.put(resource, amount);
      return this;
    }

    public NodeBuilder withoutAllocatable(String resource) {
      allocatable.remove(resource);
      return this;
    }

    public NodeBuilder podSlots(long count) {
      allocatable.put("pods", count);
      return this;
    }

    /** Allocatable {@code amount} of {@code resource} (memory in bytes, an extended resource in units). */
    public NodeRecord build() {
      return new NodeRecord(name, labels, ready, unschedulable, taints, allocatable);
    }
  }
}
