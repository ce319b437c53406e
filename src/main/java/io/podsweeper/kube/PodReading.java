package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.Pod;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NodeSelectorTerm;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodCondition;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.cluster.Toleration;
import io.podsweeper.cluster.Volumes;
import io.podsweeper.policy.EndedBy;
import io.podsweeper.policy.LabelSelector;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Everything read of one pod so far, in whichever format the API server sent it ({@link PodJson}, {@link PodProto}),
 * and the record made of it once the whole pod has been read. One place decides what an absent field means, so both
 * formats make the same record of the same pod.
 */
class PodReading {
  String namespace;
  String name;
  String uid;
  String resourceVersion;
  Optional<Instant> created = Optional.empty();
  Optional<Instant> deleted = Optional.empty();
  Map<String, String> labels = Map.of();
  final Map<String, String> annotations = new HashMap<>();
  final List<OwnerRef> owners = new ArrayList<>();

  boolean hasSpec;
  String nodeName;
  OptionalInt priority = OptionalInt.empty();
  String priorityClassName;
  final List<String> images = new ArrayList<>();
  /** The main containers' requests, summed. */
  final Map<String, Long> requests = new HashMap<>();
  /** The init containers' requests, in order, and whether each is a sidecar ({@code restartPolicy: Always}). */
  final List<InitContainer> initContainers = new ArrayList<>();
  Map<String, String> overhead = Map.of();
  /** Each main and init container's requests and limits, for the QoS class when the status has none. */
  final List<Resources> resources = new ArrayList<>();
  Map<String, String> nodeSelector = Map.of();
  final List<NodeSelectorTerm> requiredNodeAffinity = new ArrayList<>();
  final List<Scheduling.PreferredTerm> preferredNodeAffinity = new ArrayList<>();
  final List<Scheduling.PodAffinityTerm> antiAffinity = new ArrayList<>();
  final List<Scheduling.PodAffinityTerm> affinity = new ArrayList<>();
  final List<Scheduling.HostPort> hostPorts = new ArrayList<>();
  final List<Toleration> tolerations = new ArrayList<>();
  final List<Scheduling.SpreadConstraint> spreadConstraints = new ArrayList<>();
  boolean localStorage;
  final List<String> claims = new ArrayList<>();
  boolean resourceClaims;
  final List<String> schedulingGates = new ArrayList<>();
  /** The init containers whose {@code restartPolicy} is Always: native sidecars, whose statuses are read as such. */
  final Set<String> sidecars = new HashSet<>();

  String phase;
  String reason;
  String message;
  Optional<Instant> startTime = Optional.empty();
  String qosClass;
  final List<PodCondition> conditions = new ArrayList<>();
  final List<ContainerStatus> mainStatuses = new ArrayList<>();
  final List<ContainerStatus> initStatuses = new ArrayList<>();
  final List<ContainerStatus> ephemeralStatuses = new ArrayList<>();

  /**
   * A main container: its image, its requests and host ports count for the pod, its requests and limits for the QoS
   * class.
   */
  void container(Container container) {
    images.add(PodRecords.shared(PodRecords.nullToEmpty(container.image)));
    container.resources.requests.forEach((resource, quantity) -> requests.merge(PodRecords.shared(resource), PodRecords.amount(resource, quantity),
        Long::sum));
    resources.add(container.resources);
    hostPorts.addAll(container.hostPorts);
  }

  /** A container port; only one with a host port counts (for the scheduler's NodePorts), with the API's defaults. */
  static void hostPort(List<Scheduling.HostPort> ports, Integer hostPort, String protocol, String hostIP) {
    if (hostPort != null && hostPort > 0) {
      ports.add(new Scheduling.HostPort(hostIP == null || hostIP.isEmpty() ? Scheduling.HostPort.ANY_ADDRESS : hostIP,
          protocol == null || protocol.isEmpty() ? "TCP" : protocol, hostPort));
    }
  }

  record InitContainer(Map<String, String> requests, boolean sidecar) {}

  /**
   * What the pod takes of a node, as the scheduler's NodeResourcesFit computes it (k8s.io/component-helpers'
   * PodRequests): the main containers and the sidecars summed; each other init container with the sidecars started
   * before it, where that is more; then the overhead.
   */
  private Map<String, Long> effectiveRequests() {
    if (initContainers.isEmpty() && overhead.isEmpty()) {
      return requests;
    }
    Map<String, Long> total = new HashMap<>(requests);
    Map<String, Long> sidecars = new HashMap<>();
    Map<String, Long> initPeak = new HashMap<>();
    for (InitContainer init : initContainers) {
      Map<String, Long> running = new HashMap<>(sidecars);
      init.requests().forEach((resource, quantity) -> running.merge(PodRecords.shared(resource), PodRecords.amount(resource, quantity), Long::sum));
      if (init.sidecar()) {
        init.requests().forEach((resource, quantity) -> {
          long amount = PodRecords.amount(resource, quantity);
          total.merge(PodRecords.shared(resource), amount, Long::sum);
          sidecars.merge(PodRecords.shared(resource), amount, Long::sum);
        });
      }
      running.forEach((resource, amount) -> initPeak.merge(resource, amount, Math::max));
    }
    initPeak.forEach((resource, amount) -> total.merge(resource, amount, Math::max));
    overhead.forEach((resource, quantity) -> total.merge(PodRecords.shared(resource), PodRecords.amount(resource, quantity), Long::sum));
    return total;
  }

  /**
   * An init container: its requests count for the pod as the scheduler counts them, its requests and limits for the QoS
   * class; one that restarts Always is a native sidecar.
   */
  void initContainer(Container container) {
    resources.add(container.resources);
    boolean sidecar = "Always".equals(container.restartPolicy);
    initContainers.add(new InitContainer(container.resources.requests, sidecar));
    if (sidecar) {
      sidecars.add(PodRecords.nullToEmpty(container.name));
    }
  }

  /** A scheduling gate: its name (no omitempty: an empty one is itself, in either format). */
  void schedulingGate(String name) {
    schedulingGates.add(PodRecords.shared(PodRecords.nullToEmpty(name)));
  }

  /** A toleration; absent parts as the API server defaults them. */
  void toleration(String key, String operator, String value, String effect) {
    tolerations.add(new Toleration(shared(key, ""), shared(operator, "Equal"), shared(value, ""), shared(effect, "")));
  }

  void condition(String type, String status, String reason, Optional<Instant> lastTransition) {
    conditions.add(new PodCondition(shared(type, ""), shared(status, ""), Optional.ofNullable(PodRecords.shared(reason)), lastTransition));
  }

  /** What fabric8's informers get for the pod read: its identity, and its record. */
  Decoded decoded() {
    return new Decoded(this, record(), null);
  }

  /** What fabric8's informers get for a pod its record cannot be made of: its identity, and why. */
  Decoded unreadable(RuntimeException why) {
    return new Decoded(this, null, why);
  }

  private PodRecord record() {
    List<ContainerStatus> containers = new ArrayList<>(mainStatuses);
    for (ContainerStatus init : initStatuses) {
      containers.add(sidecars.contains(init.name()) ? init.as(ContainerStatus.Kind.SIDECAR) : init);
    }
    containers.addAll(ephemeralStatuses);
    return new PodRecord(
        PodRecords.shared(namespace),
        name,
        PodRecords.nullToEmpty(uid),
        PodRecords.nullToEmpty(resourceVersion),
        created.orElse(Instant.EPOCH),
        deleted,
        PodRecords.nullToEmpty(nodeName),
        phase != null ? phase : "Pending",
        Optional.ofNullable(reason),
        labels,
        annotations,
        owners,
        containers,
        priority,
        PodRecords.nullToEmpty(priorityClassName),
        startTime,
        conditions,
        hasSpec ? new Volumes(localStorage, claims, resourceClaims) : Volumes.NONE,
        hasSpec ? new Scheduling(nodeSelector, requiredNodeAffinity, preferredNodeAffinity, tolerations, antiAffinity, effectiveRequests(),
            qosClass != null ? qosClass : Resources.qosClass(resources), spreadConstraints, affinity, hostPorts) : Scheduling.NONE,
        images,
        schedulingGates,
        EndedBy.NODE_SHUTDOWN_MESSAGE.equals(message));
  }

  /** What fabric8's informers get for a pod: its identity, and its record (or why there is none). */
  static final class Decoded extends Pod {
    private final transient PodRecord record;
    private final transient RuntimeException unreadable;

    private Decoded(PodReading pod, PodRecord record, RuntimeException unreadable) {
      setMetadata(RecordStore.identity(pod.namespace, pod.name, pod.uid, pod.resourceVersion));
      this.record = record;
      this.unreadable = unreadable;
    }

    /** The pod's record; an IllegalArgumentException if the pod could not be read into one. */
    PodRecord record() {
      if (unreadable != null) {
        throw new IllegalArgumentException("a pod that cannot be read: " + unreadable.getMessage(), unreadable);
      }
      return record;
    }
  }

  private static String shared(String value, String absent) {
    return PodRecords.shared(value != null ? value : absent);
  }

  /** A main or init container as read so far: what the pod's record takes of it. */
  static class Container {
    String name;
    String image;
    String restartPolicy;
    final Resources resources = new Resources();
    final List<Scheduling.HostPort> hostPorts = new ArrayList<>();
  }

  /** A container's requests and limits, as quantities. */
  static final class Resources {
    Map<String, String> requests = Map.of();
    Map<String, String> limits = Map.of();

    /** The QoS class the API server would give a pod of these containers (its main and init containers). */
    static String qosClass(List<Resources> containers) {
      boolean any = false;
      boolean guaranteed = !containers.isEmpty();
      for (Resources c : containers) {
        for (String resource : List.of("cpu", "memory")) {
          String limit = c.limits.get(resource);
          String request = c.requests.getOrDefault(resource, limit);
          any |= limit != null || request != null;
          guaranteed &= limit != null && request != null && PodRecords.amount(resource, limit) == PodRecords.amount(resource, request);
        }
      }
      return !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable";
    }
  }

  /** A topology spread constraint as read so far; absent parts as the API server defaults them. */
  static class Spread {
    int maxSkew = 1;
    String topologyKey;
    String whenUnsatisfiable;
    LabelSelector selector = PodRecords.SELECTS_NOTHING;
    final List<String> matchLabelKeys = new ArrayList<>();
    String nodeAffinityPolicy;
    String nodeTaintsPolicy;

    Scheduling.SpreadConstraint constraint() {
      return new Scheduling.SpreadConstraint(maxSkew, PodRecords.shared(PodRecords.nullToEmpty(topologyKey)),
          PodRecords.shared(PodRecords.nullToEmpty(whenUnsatisfiable)), selector, matchLabelKeys, !"Ignore".equals(nodeAffinityPolicy),
          "Honor".equals(nodeTaintsPolicy));
    }
  }

  /** A container's state as read so far: why it waits, or how it ended. */
  static final class State {
    Optional<String> waiting = Optional.empty();
    Optional<String> terminatedReason = Optional.empty();
    OptionalInt exitCode = OptionalInt.empty();
    Optional<Instant> finishedAt = Optional.empty();
  }

  /** A container's status as read so far. */
  static final class Status {
    String name;
    int restartCount;
    final State now = new State();
    final State last = new State();

    ContainerStatus status(ContainerStatus.Kind kind) {
      return new ContainerStatus(PodRecords.shared(name), kind, now.waiting, now.terminatedReason, now.exitCode, now.finishedAt, restartCount,
          last.terminatedReason, last.exitCode);
    }
  }
}
