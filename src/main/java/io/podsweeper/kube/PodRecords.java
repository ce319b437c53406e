package io.podsweeper.kube;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonIncludeProperties;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PvcRecord;
import io.podsweeper.cluster.Taint;
import io.podsweeper.policy.LabelSelector;
import io.podsweeper.policy.TtlSource;
import java.io.IOException;
import java.io.UncheckedIOException;
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
        PodRecord.REQUEST_EVICT_ONLY_ANNOTATION, PodRecord.PREFER_NO_EVICTION_ANNOTATION, PodRecord.EVICTION_COST_ANNOTATION));
    return Set.copyOf(kept);
  }

  private PodRecords() {}

  /**
   * How the informers decode what they list and watch: pods straight into their records ({@link PodJson}), other
   * kinds as fabric8 does, except that the parts no record is made from are skipped unread (an object's
   * managedFields, a node's list of the images it holds).
   */
  public static KubernetesSerialization serialization() {
    ObjectMapper mapper = new ObjectMapper();
    mapper.registerModule(new SimpleModule("pod-records").addDeserializer(Pod.class, new PodJson.Deserializer()));
    mapper.addMixIn(ObjectMeta.class, NotRead.Metadata.class);
    mapper.addMixIn(NodeStatus.class, Read.NodeStatusFields.class);
    return KubeSerialization.of(mapper);
  }

  /** The only fields {@link #serialization} reads of a node's status, as a Jackson mix-in: the rest is skipped unread. */
  private interface Read {
    @JsonIncludeProperties({"allocatable", "conditions"})
    interface NodeStatusFields {}
  }

  /** The fields {@link #serialization} skips, as Jackson mix-ins. */
  private interface NotRead {
    @JsonIgnoreProperties({"managedFields"})
    interface Metadata {}
  }

  /**
   * A pod's record: the one the informers' decoding made, or, for a pod from elsewhere (a snapshot file, the CLI's
   * list), read from its JSON as the informers read it.
   */
  public static PodRecord pod(Pod pod) {
    if (pod instanceof PodReading.Decoded decoded) {
      return decoded.record();
    }
    try (JsonParser parser = JSON.createParser(WHOLE.asJson(pod))) {
      parser.nextToken();
      return PodJson.read(parser);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static final KubernetesSerialization WHOLE = KubeSerialization.of(new ObjectMapper());
  private static final JsonFactory JSON = new JsonFactory();

  /** A label selector no pod can match: what a missing one is (PDBs, affinity terms, spread constraints). */
  static final LabelSelector SELECTS_NOTHING =
      new LabelSelector(Map.of(), List.of(new LabelSelector.Requirement("podsweeper.io/never", LabelSelector.Operator.Exists, Set.of())));

  /**
   * A quantity as a whole number: millicores for cpu, bytes or units for everything else. Remembered, as a cluster's
   * pods repeat a few dozen requests ("100m", "128Mi") and each reckoning is BigDecimal arithmetic: 7 % of the bytes
   * allocated while 10,000 pods were listed (docs/benchmarks.md, fifth pass).
   */
  static long amount(String resource, String quantity) {
    return AMOUNTS.get(new Amount(resource, quantity), PodRecords::reckon);
  }

  private static final Cache<Amount, Long> AMOUNTS = Caffeine.newBuilder().maximumSize(4096).build();

  private record Amount(String resource, String quantity) {}

  private static long reckon(Amount a) {
    BigDecimal value = Quantity.getAmountInBytes(new Quantity(a.quantity()));
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
      return SELECTS_NOTHING;
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
      node.getStatus().getAllocatable().forEach((name, q) -> allocatable.put(name, amount(name, q.toString())));
    }
    return new NodeRecord(node.getMetadata().getName(), labels, ready, unschedulable, taints, allocatable);
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
    // Go writes a year after 9999 as its digits, unsigned ("10000-01-01T00:00:00Z"), where ISO 8601 signs it.
    boolean unsignedYearAfter9999 = Character.isDigit(text.charAt(0)) && text.indexOf('-') > 4;
    try {
      return Optional.of(Instant.parse(unsignedYearAfter9999 ? "+" + text : text));
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

  /** A map of strings thousands of pods repeat (labels), each key and value shared; {@code Map.of()} if empty. */
  static Map<String, String> shared(Map<String, String> labels) {
    if (labels == null || labels.isEmpty()) {
      return Map.of();
    }
    Map<String, String> out = new HashMap<>();
    labels.forEach((k, v) -> out.put(shared(k), shared(v)));
    return out;
  }

  static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
