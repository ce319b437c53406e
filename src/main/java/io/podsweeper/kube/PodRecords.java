package io.podsweeper.kube;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonIncludeProperties;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerState;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.NodeSelectorTerm;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodCondition;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PvcRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.cluster.Taint;
import io.podsweeper.cluster.Toleration;
import io.podsweeper.cluster.Volumes;
import io.podsweeper.policy.LabelSelector;
import io.podsweeper.policy.TtlSource;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/** The one place where Kubernetes API objects become the decision core's slim records. */
public final class PodRecords {
  /** The annotations decisions read; every other annotation is dropped to keep the cache small. */
  static final Set<String> KEPT_ANNOTATIONS = keptAnnotations();

  /** The protection and eviction annotations, and the per-pod lifetimes of rules with ttlFrom (TtlSource). */
  private static Set<String> keptAnnotations() {
    Set<String> kept = new java.util.HashSet<>(TtlSource.ANNOTATION_KEYS);
    kept.addAll(Set.of(PodRecord.MIRROR_ANNOTATION, PodRecord.CONFIG_SOURCE_ANNOTATION, PodRecord.EVICT_ANNOTATION, PodRecord.PROTECT_ANNOTATION,
        PodRecord.REQUEST_EVICT_ONLY_ANNOTATION, PodRecord.PREFER_NO_EVICTION_ANNOTATION));
    return Set.copyOf(kept);
  }

  private PodRecords() {}

  /**
   * How the informers decode what they list and watch: as fabric8 does, except that the parts of an object no record
   * is made from are skipped unread. An object's managedFields are half the JSON of a typical pod and become nested
   * maps of maps; a container's environment, probes and mounts are most of the rest (docs/benchmarks.md, start-up).
   * A field read in this class must not be listed here: PodRecordsTest compares records from both decodings.
   */
  public static KubernetesSerialization serialization() {
    ObjectMapper mapper = new ObjectMapper();
    mapper.addMixIn(ObjectMeta.class, NotRead.Metadata.class);
    mapper.addMixIn(PodSpec.class, Read.PodSpecFields.class);
    mapper.addMixIn(Volume.class, Read.VolumeFields.class);
    mapper.addMixIn(Container.class, NotRead.ContainerSpec.class);
    mapper.addMixIn(PodStatus.class, Read.PodStatusFields.class);
    mapper.addMixIn(io.fabric8.kubernetes.api.model.ContainerStatus.class, NotRead.ContainerStatusIds.class);
    mapper.addMixIn(NodeStatus.class, Read.NodeStatusFields.class);
    return new KubernetesSerialization(mapper, true);
  }

  /**
   * The only fields {@link #serialization} reads of the objects with many that no record needs, as Jackson mix-ins:
   * the rest is skipped unread, and Jackson never builds decoders for their types (a Volume has some thirty kinds of
   * source, each a type of its own; a node's status lists every image it holds).
   */
  private interface Read {
    @JsonIncludeProperties({"affinity", "containers", "initContainers", "nodeName", "nodeSelector", "priority", "priorityClassName",
        "resourceClaims", "tolerations", "topologySpreadConstraints", "volumes"})
    interface PodSpecFields {}

    @JsonIncludeProperties({"name", "emptyDir", "hostPath", "persistentVolumeClaim"})
    interface VolumeFields {}

    @JsonIncludeProperties({"conditions", "containerStatuses", "ephemeralContainerStatuses", "initContainerStatuses", "phase", "qosClass",
        "reason", "startTime"})
    interface PodStatusFields {}

    @JsonIncludeProperties({"allocatable", "conditions"})
    interface NodeStatusFields {}
  }

  /** The fields {@link #serialization} skips of the objects with few, as Jackson mix-ins. */
  private interface NotRead {
    @JsonIgnoreProperties({"managedFields"})
    interface Metadata {}

    @JsonIgnoreProperties({"args", "command", "env", "envFrom", "lifecycle", "livenessProbe", "ports", "readinessProbe", "securityContext",
        "startupProbe", "terminationMessagePath", "terminationMessagePolicy", "volumeDevices", "volumeMounts", "workingDir"})
    interface ContainerSpec {}

    @JsonIgnoreProperties({"containerID", "imageID"})
    interface ContainerStatusIds {}
  }

  public static PodRecord pod(Pod pod) {
    ObjectMeta meta = pod.getMetadata();
    PodStatus status = pod.getStatus() != null ? pod.getStatus() : new PodStatus();
    Map<String, String> annotations = new HashMap<>();
    if (meta.getAnnotations() != null) {
      meta.getAnnotations().forEach((k, v) -> {
        if (KEPT_ANNOTATIONS.contains(k)) {
          annotations.put(shared(k), shared(v));
        }
      });
    }
    List<OwnerRef> owners = new ArrayList<>();
    if (meta.getOwnerReferences() != null) {
      meta.getOwnerReferences()
          .forEach(o -> owners.add(new OwnerRef(shared(o.getKind()), shared(o.getName()), shared(o.getUid()),
              Boolean.TRUE.equals(o.getController()))));
    }
    List<ContainerStatus> containers = new ArrayList<>();
    addContainers(containers, status.getContainerStatuses(), ContainerStatus.Kind.MAIN);
    addContainers(containers, status.getInitContainerStatuses(), ContainerStatus.Kind.INIT);
    addContainers(containers, status.getEphemeralContainerStatuses(), ContainerStatus.Kind.EPHEMERAL);
    String nodeName = pod.getSpec() != null && pod.getSpec().getNodeName() != null ? shared(pod.getSpec().getNodeName()) : "";
    return new PodRecord(
        shared(meta.getNamespace()),
        meta.getName(),
        nullToEmpty(meta.getUid()),
        nullToEmpty(meta.getResourceVersion()),
        time(meta.getCreationTimestamp()).orElse(Instant.EPOCH),
        time(meta.getDeletionTimestamp()),
        nodeName,
        status.getPhase() != null ? shared(status.getPhase()) : "Pending",
        Optional.ofNullable(shared(status.getReason())),
        shared(meta.getLabels()),
        annotations,
        owners,
        containers,
        pod.getSpec() != null && pod.getSpec().getPriority() != null ? OptionalInt.of(pod.getSpec().getPriority()) : OptionalInt.empty(),
        pod.getSpec() != null ? shared(nullToEmpty(pod.getSpec().getPriorityClassName())) : "",
        time(status.getStartTime()),
        conditions(status),
        volumes(pod.getSpec()),
        scheduling(pod.getSpec(), status),
        pod.getSpec() != null && pod.getSpec().getContainers() != null
            ? pod.getSpec().getContainers().stream().map(c -> shared(nullToEmpty(c.getImage()))).toList() : List.of());
  }

  private static List<PodCondition> conditions(PodStatus status) {
    if (status.getConditions() == null) {
      return List.of();
    }
    return status.getConditions().stream()
        .map(c -> new PodCondition(shared(nullToEmpty(c.getType())), shared(nullToEmpty(c.getStatus())),
            Optional.ofNullable(shared(c.getReason())), time(c.getLastTransitionTime())))
        .toList();
  }

  private static Volumes volumes(PodSpec spec) {
    if (spec == null) {
      return Volumes.NONE;
    }
    boolean local = false;
    List<String> claims = new ArrayList<>();
    if (spec.getVolumes() != null) {
      for (Volume v : spec.getVolumes()) {
        local |= v.getEmptyDir() != null || v.getHostPath() != null;
        if (v.getPersistentVolumeClaim() != null) {
          claims.add(v.getPersistentVolumeClaim().getClaimName());
        }
      }
    }
    boolean resourceClaims = spec.getResourceClaims() != null && !spec.getResourceClaims().isEmpty();
    return new Volumes(local, claims, resourceClaims);
  }

  private static Scheduling scheduling(PodSpec spec, PodStatus status) {
    if (spec == null) {
      return Scheduling.NONE;
    }
    List<NodeSelectorTerm> required = new ArrayList<>();
    List<Scheduling.PreferredTerm> preferred = new ArrayList<>();
    var nodeAffinity = spec.getAffinity() != null ? spec.getAffinity().getNodeAffinity() : null;
    if (nodeAffinity != null && nodeAffinity.getRequiredDuringSchedulingIgnoredDuringExecution() != null
        && nodeAffinity.getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms() != null) {
      nodeAffinity.getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms().forEach(t -> required.add(term(t)));
    }
    if (nodeAffinity != null && nodeAffinity.getPreferredDuringSchedulingIgnoredDuringExecution() != null) {
      nodeAffinity.getPreferredDuringSchedulingIgnoredDuringExecution().forEach(p -> preferred.add(new Scheduling.PreferredTerm(
          p.getWeight() != null ? p.getWeight() : 0, p.getPreference() != null ? term(p.getPreference()) : new NodeSelectorTerm(List.of()))));
    }
    List<Scheduling.PodAffinityTerm> antiAffinity = new ArrayList<>();
    var podAntiAffinity = spec.getAffinity() != null ? spec.getAffinity().getPodAntiAffinity() : null;
    if (podAntiAffinity != null && podAntiAffinity.getRequiredDuringSchedulingIgnoredDuringExecution() != null) {
      for (var t : podAntiAffinity.getRequiredDuringSchedulingIgnoredDuringExecution()) {
        antiAffinity.add(new Scheduling.PodAffinityTerm(labelSelector(t.getLabelSelector()),
            t.getNamespaces() != null ? Set.copyOf(t.getNamespaces()) : Set.of(),
            Optional.ofNullable(t.getNamespaceSelector()).map(PodRecords::labelSelector), nullToEmpty(t.getTopologyKey())));
      }
    }
    List<Toleration> tolerations = new ArrayList<>();
    if (spec.getTolerations() != null) {
      spec.getTolerations().forEach(t -> tolerations.add(new Toleration(shared(nullToEmpty(t.getKey())),
          t.getOperator() != null ? shared(t.getOperator()) : "Equal", shared(nullToEmpty(t.getValue())), shared(nullToEmpty(t.getEffect())))));
    }
    Map<String, Long> requests = new HashMap<>();
    if (spec.getContainers() != null) {
      for (Container c : spec.getContainers()) {
        if (c.getResources() != null && c.getResources().getRequests() != null) {
          c.getResources().getRequests().forEach((name, q) -> requests.merge(shared(name), amount(name, q), Long::sum));
        }
      }
    }
    String qos = status.getQosClass() != null ? status.getQosClass() : qosClass(spec);
    return new Scheduling(spec.getNodeSelector() != null ? spec.getNodeSelector() : Map.of(), required, preferred, tolerations,
        antiAffinity, requests, qos, spreadConstraints(spec));
  }

  /** The pod's topology spread constraints, with the API's defaults for the inclusion policies. */
  private static List<Scheduling.SpreadConstraint> spreadConstraints(PodSpec spec) {
    if (spec.getTopologySpreadConstraints() == null) {
      return List.of();
    }
    return spec.getTopologySpreadConstraints().stream().map(c -> new Scheduling.SpreadConstraint(
        c.getMaxSkew() != null ? c.getMaxSkew() : 1, shared(nullToEmpty(c.getTopologyKey())),
        shared(nullToEmpty(c.getWhenUnsatisfiable())), labelSelector(c.getLabelSelector()),
        c.getMatchLabelKeys() != null ? c.getMatchLabelKeys().stream().map(PodRecords::shared).toList() : List.of(),
        !"Ignore".equals(c.getNodeAffinityPolicy()), "Honor".equals(c.getNodeTaintsPolicy()))).toList();
  }

  private static NodeSelectorTerm term(io.fabric8.kubernetes.api.model.NodeSelectorTerm t) {
    List<NodeSelectorTerm.Requirement> reqs = new ArrayList<>();
    if (t.getMatchExpressions() != null) {
      t.getMatchExpressions().forEach(e -> reqs.add(new NodeSelectorTerm.Requirement(
          e.getKey(), e.getOperator(), e.getValues() != null ? e.getValues() : List.of())));
    }
    return new NodeSelectorTerm(reqs);
  }

  /** The QoS class the API server would give the pod (used when status.qosClass is not set). */
  static String qosClass(PodSpec spec) {
    List<Container> all = new ArrayList<>();
    if (spec.getContainers() != null) {
      all.addAll(spec.getContainers());
    }
    if (spec.getInitContainers() != null) {
      all.addAll(spec.getInitContainers());
    }
    boolean any = false;
    boolean guaranteed = !all.isEmpty();
    for (Container c : all) {
      Map<String, Quantity> req = c.getResources() != null && c.getResources().getRequests() != null ? c.getResources().getRequests() : Map.of();
      Map<String, Quantity> lim = c.getResources() != null && c.getResources().getLimits() != null ? c.getResources().getLimits() : Map.of();
      for (String r : List.of("cpu", "memory")) {
        Quantity l = lim.get(r);
        Quantity q = req.getOrDefault(r, l);
        any |= l != null || q != null;
        guaranteed &= l != null && q != null && amount(r, l) == amount(r, q);
      }
    }
    return !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable";
  }

  /**
   * A quantity as a whole number: millicores for cpu, bytes or units for everything else. Remembered, as a cluster's
   * pods repeat a few dozen requests ("100m", "128Mi") and each reckoning is BigDecimal arithmetic: 7 % of the bytes
   * allocated while 10,000 pods were listed (docs/benchmarks.md, fifth pass).
   */
  static long amount(String resource, Quantity q) {
    return AMOUNTS.get(new Amount(resource, q.getAmount(), q.getFormat()), PodRecords::reckon);
  }

  private static final Cache<Amount, Long> AMOUNTS = Caffeine.newBuilder().maximumSize(4096).build();

  private record Amount(String resource, String amount, String format) {}

  private static long reckon(Amount a) {
    BigDecimal value = Quantity.getAmountInBytes(new Quantity(a.amount(), a.format()));
    String resource = a.resource();
    if ("cpu".equals(resource)) {
      value = value.multiply(BigDecimal.valueOf(1000));
    }
    return value.setScale(0, RoundingMode.CEILING).longValue();
  }

  public static PdbRecord pdb(String namespace, String name, io.fabric8.kubernetes.api.model.LabelSelector selector) {
    return new PdbRecord(namespace, name, labelSelector(selector));
  }

  /** A policy/v1 PDB with its {@code status.disruptionsAllowed}, as read at one moment (snapshots, explain). */
  public static PdbRecord pdb(io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget pdb) {
    return withStatus(pdb(pdb.getMetadata().getNamespace(), pdb.getMetadata().getName(), pdb.getSpec() != null ? pdb.getSpec().getSelector() : null),
        pdb.getStatus() != null ? pdb.getStatus().getDisruptionsAllowed() : null);
  }

  /** A policy/v1beta1 PDB (Kubernetes before 1.21) with its {@code status.disruptionsAllowed}. */
  public static PdbRecord pdb(io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudget pdb) {
    return withStatus(pdb(pdb.getMetadata().getNamespace(), pdb.getMetadata().getName(), pdb.getSpec() != null ? pdb.getSpec().getSelector() : null),
        pdb.getStatus() != null ? pdb.getStatus().getDisruptionsAllowed() : null);
  }

  private static PdbRecord withStatus(PdbRecord pdb, Integer disruptionsAllowed) {
    return new PdbRecord(pdb.namespace(), pdb.name(), pdb.selector(),
        disruptionsAllowed == null ? OptionalInt.empty() : OptionalInt.of(disruptionsAllowed));
  }

  public static PvcRecord pvc(PersistentVolumeClaim pvc) {
    String storageClass = pvc.getSpec() != null && pvc.getSpec().getStorageClassName() != null ? pvc.getSpec().getStorageClassName() : "";
    return new PvcRecord(pvc.getMetadata().getNamespace(), pvc.getMetadata().getName(), storageClass);
  }

  /** An API label selector; a missing one selects nothing (PDBs, affinity terms, spread constraints), so it becomes one no pod can match. */
  static LabelSelector labelSelector(io.fabric8.kubernetes.api.model.LabelSelector selector) {
    if (selector == null) {
      return new LabelSelector(Map.of(), List.of(new LabelSelector.Requirement("podsweeper.io/never", LabelSelector.Operator.Exists, Set.of())));
    }
    List<LabelSelector.Requirement> requirements = new ArrayList<>();
    if (selector.getMatchExpressions() != null) {
      selector.getMatchExpressions().forEach(e -> requirements.add(new LabelSelector.Requirement(e.getKey(),
          LabelSelector.Operator.valueOf(e.getOperator()), new java.util.LinkedHashSet<>(e.getValues() != null ? e.getValues() : List.of()))));
    }
    return new LabelSelector(selector.getMatchLabels() != null ? selector.getMatchLabels() : Map.of(), requirements);
  }

  public static NamespaceRecord namespace(Namespace namespace) {
    Map<String, String> labels = new HashMap<>();
    labels.put("kubernetes.io/metadata.name", namespace.getMetadata().getName());
    if (namespace.getMetadata().getLabels() != null) {
      labels.putAll(namespace.getMetadata().getLabels());
    }
    Map<String, String> annotations = namespace.getMetadata().getAnnotations();
    boolean protect = annotations != null && "true".equals(annotations.get(PodRecord.PROTECT_ANNOTATION));
    Map<String, String> lifetimes = new HashMap<>();
    if (annotations != null) {
      TtlSource.ANNOTATION_KEYS.forEach(k -> Optional.ofNullable(annotations.get(k)).ifPresent(v -> lifetimes.put(k, v)));
    }
    return new NamespaceRecord(namespace.getMetadata().getName(), labels, protect, lifetimes);
  }

  public static NodeRecord node(Node node) {
    boolean ready = false;
    if (node.getStatus() != null && node.getStatus().getConditions() != null) {
      for (NodeCondition c : node.getStatus().getConditions()) {
        if ("Ready".equals(c.getType())) {
          ready = "True".equals(c.getStatus());
        }
      }
    }
    boolean unschedulable = node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable());
    Map<String, String> labels = node.getMetadata().getLabels() != null ? node.getMetadata().getLabels() : Map.of();
    List<Taint> taints = new ArrayList<>();
    if (node.getSpec() != null && node.getSpec().getTaints() != null) {
      node.getSpec().getTaints().forEach(t -> taints.add(new Taint(nullToEmpty(t.getKey()), nullToEmpty(t.getValue()), nullToEmpty(t.getEffect()))));
    }
    Map<String, Long> allocatable = new HashMap<>();
    if (node.getStatus() != null && node.getStatus().getAllocatable() != null) {
      node.getStatus().getAllocatable().forEach((name, q) -> allocatable.put(name, amount(name, q)));
    }
    return new NodeRecord(node.getMetadata().getName(), labels, ready, unschedulable, taints, allocatable);
  }

  private static void addContainers(
      List<ContainerStatus> out, List<io.fabric8.kubernetes.api.model.ContainerStatus> statuses, ContainerStatus.Kind kind) {
    if (statuses == null) {
      return;
    }
    for (io.fabric8.kubernetes.api.model.ContainerStatus s : statuses) {
      ContainerState state = s.getState();
      Optional<String> waiting = Optional.empty();
      Optional<String> terminated = Optional.empty();
      OptionalInt exitCode = OptionalInt.empty();
      Optional<Instant> finishedAt = Optional.empty();
      if (state != null && state.getWaiting() != null) {
        waiting = Optional.ofNullable(shared(state.getWaiting().getReason()));
      }
      if (state != null && state.getTerminated() != null) {
        terminated = Optional.ofNullable(shared(state.getTerminated().getReason()));
        Integer code = state.getTerminated().getExitCode();
        exitCode = code != null ? OptionalInt.of(code) : OptionalInt.empty();
        finishedAt = time(state.getTerminated().getFinishedAt());
      }
      int restarts = s.getRestartCount() != null ? s.getRestartCount() : 0;
      var last = s.getLastState() != null ? s.getLastState().getTerminated() : null;
      out.add(new ContainerStatus(shared(s.getName()), kind, waiting, terminated, exitCode, finishedAt, restarts,
          last != null ? Optional.ofNullable(shared(last.getReason())) : Optional.empty(),
          last != null && last.getExitCode() != null ? OptionalInt.of(last.getExitCode()) : OptionalInt.empty()));
    }
  }

  /**
   * A Kubernetes timestamp. The API server writes them in RFC 3339, in UTC, to the second ("2026-11-25T10:00:00Z"),
   * and that shape is read here digit by digit; any other goes to {@link Instant#parse}. Why: with a map of parsed
   * fields per call, Instant.parse made a quarter of all the bytes allocated while 10,000 pods were listed, a dozen
   * timestamps per pod (docs/benchmarks.md, fifth pass).
   */
  static Optional<Instant> time(String text) {
    if (text == null || text.isEmpty()) {
      return Optional.empty();
    }
    Instant utcSeconds = utcSeconds(text);
    if (utcSeconds != null) {
      return Optional.of(utcSeconds);
    }
    try {
      return Optional.of(Instant.parse(text));
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  /** "yyyy-MM-ddTHH:mm:ssZ" with a valid date and time; null for anything else, which Instant.parse then judges. */
  private static Instant utcSeconds(String text) {
    if (text.length() != 20 || text.charAt(4) != '-' || text.charAt(7) != '-' || text.charAt(10) != 'T' || text.charAt(13) != ':'
        || text.charAt(16) != ':' || text.charAt(19) != 'Z') {
      return null;
    }
    int year = digits(text, 0, 4);
    int month = digits(text, 5, 2);
    int day = digits(text, 8, 2);
    int hour = digits(text, 11, 2);
    int minute = digits(text, 14, 2);
    int second = digits(text, 17, 2);
    if ((year | month | day) < 0 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
      return null;
    }
    try {
      return Instant.ofEpochSecond(LocalDate.of(year, month, day).toEpochDay() * 86_400L + hour * 3_600L + minute * 60L + second);
    } catch (DateTimeException e) {
      return null; // no such day, e.g. February 30
    }
  }

  /** The decimal number in {@code count} characters from {@code from}, or -1 if one of them is not a digit. */
  private static int digits(String text, int from, int count) {
    int value = 0;
    for (int i = from; i < from + count; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      value = value * 10 + (c - '0');
    }
    return value;
  }

  /**
   * One copy of each string that thousands of pods repeat (namespaces, label keys and values, owners, phases,
   * reasons, condition types, priority classes, tolerations, images): at 100k pods they were most of the heap
   * (docs/benchmarks.md). Pod names, UIDs and resourceVersions are unique and stay as they are.
   */
  static String shared(String s) {
    return s == null ? null : s.intern();
  }

  private static Map<String, String> shared(Map<String, String> labels) {
    if (labels == null || labels.isEmpty()) {
      return Map.of();
    }
    Map<String, String> out = new HashMap<>();
    labels.forEach((k, v) -> out.put(shared(k), shared(v)));
    return out;
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
