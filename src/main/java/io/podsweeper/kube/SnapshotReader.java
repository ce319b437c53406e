package io.podsweeper.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClass;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PvcRecord;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.YamlDocuments;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Reads a cluster snapshot: what {@code kubectl get pods,nodes,namespaces,pdb,pvc -A -o yaml} prints (a
 * {@code kind: List}), as YAML or JSON, one or many documents; for LowNodeLoad also Koordinator's NodeMetric and
 * metrics.k8s.io's NodeMetrics and PodMetrics objects. Kinds that no strategy reads yet are skipped.
 */
public final class SnapshotReader {
  /**
   * The parsed tree takes several times the text's memory: past this a default heap runs out (OutOfMemoryError)
   * instead of saying so. A larger cluster is planned a namespace or a few at a time.
   */
  static final int MAX_SNAPSHOT_BYTES = 256 << 20;
  /** How items become fabric8's objects, by the kind each says it is. */
  private static final KubernetesSerialization JSON = KubeSerialization.of(new ObjectMapper());
  /** RFC 3339, and so Kubernetes, writes four-digit years; java.time also reads "+999999999-…", whose arithmetic overflows. */
  private static final Pattern EXPANDED_YEAR = Pattern.compile("[+-]\\d{4,}-\\d{2}-\\d{2}T.*");

  private SnapshotReader() {}

  /** A snapshot file, refused (naming the file) when it is too large or holds no pods or nodes: not a snapshot. */
  public static ClusterSnapshot read(Path file) {
    Set<String> kinds = new TreeSet<>();
    ClusterSnapshot snapshot = parse(readBounded(file), file.getFileName().toString(), kinds);
    if (snapshot.pods().isEmpty() && snapshot.nodes().isEmpty()) {
      String held = kinds.isEmpty() ? "holds no objects" : "holds no pods or nodes, only " + String.join(", ", kinds);
      throw new PolicyException(file.toString(), held + ": a snapshot is what `kubectl get pods,nodes,namespaces,pdb,pvc -A -o yaml` prints");
    }
    return snapshot;
  }

  private static String readBounded(Path file) {
    String tooLarge = "larger than " + (MAX_SNAPSHOT_BYTES >> 20) + " MiB, the most a snapshot may be";
    try {
      // The size first, so a huge file is refused before any of it is read; the bounded read for pipes, which have none.
      if (Files.size(file) > MAX_SNAPSHOT_BYTES) {
        throw new PolicyException(file.toString(), tooLarge + " (" + (Files.size(file) >> 20) + " MiB)");
      }
      try (InputStream in = Files.newInputStream(file)) {
        byte[] bytes = in.readNBytes(MAX_SNAPSHOT_BYTES + 1);
        if (bytes.length > MAX_SNAPSHOT_BYTES) {
          throw new PolicyException(file.toString(), tooLarge);
        }
        return new String(bytes, StandardCharsets.UTF_8);
      }
    } catch (IOException e) {
      throw new PolicyException(file.toString(), "cannot read snapshot: " + e.getMessage());
    }
  }

  /**
   * The same snapshot, read from a live cluster (what {@code explain} without --snapshot looks at); measured node
   * usage (NodeMetric or metrics.k8s.io) only when {@code withNodeUsage}.
   */
  public static ClusterSnapshot fromCluster(io.fabric8.kubernetes.client.KubernetesClient client, boolean withNodeUsage) {
    List<PdbRecord> pdbs = new ArrayList<>();
    if (client.supports(io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget.class)) {
      client.policy().v1().podDisruptionBudget().inAnyNamespace().list().getItems().forEach(p -> pdbs.add(PodRecords.pdb(p)));
    } else {
      client.policy().v1beta1().podDisruptionBudget().inAnyNamespace().list().getItems().forEach(p -> pdbs.add(PodRecords.pdb(p)));
    }
    java.util.Map<String, Integer> priorityClasses = new java.util.HashMap<>();
    client.scheduling().v1().priorityClasses().list().getItems().forEach(pc -> priorityClasses.put(pc.getMetadata().getName(), pc.getValue()));
    List<PodRecord> pods = client.pods().inAnyNamespace().list().getItems().stream().map(PodRecords::pod).toList();
    return ClusterSnapshot.of(
        pods,
        client.namespaces().list().getItems().stream().map(PodRecords::namespace).toList(),
        client.nodes().list().getItems().stream().map(PodRecords::node).toList(),
        pdbs,
        client.persistentVolumeClaims().inAnyNamespace().list().getItems().stream().map(PodRecords::pvc).toList(),
        priorityClasses).withNodeUsage(withNodeUsage ? NodeUsageSource.read(client, nodeOf(pods)) : List.of());
  }

  public static ClusterSnapshot parse(String text, String source) {
    return parse(text, source, new TreeSet<>());
  }

  /** @param kinds gets the kind of every object read, so a file that is no snapshot can say what it is */
  private static ClusterSnapshot parse(String text, String source, Set<String> kinds) {
    List<PodRecord> pods = new ArrayList<>();
    List<NamespaceRecord> namespaces = new ArrayList<>();
    List<NodeRecord> nodes = new ArrayList<>();
    Other other = new Other(new ArrayList<>(), new ArrayList<>(), new java.util.HashMap<>(), new ArrayList<>(), new java.util.HashMap<>());
    List<JsonNode> documents = YamlDocuments.read(text, source, MAX_SNAPSHOT_BYTES);
    if (documents.isEmpty()) {
      throw new PolicyException(source, "the snapshot is empty");
    }
    for (int d = 0; d < documents.size(); d++) {
      JsonNode doc = documents.get(d);
      String where = documents.size() > 1 ? source + " document " + (d + 1) : source;
      if (!doc.isObject() || !doc.hasNonNull("kind")) {
        throw new PolicyException(where, "not a Kubernetes object or List (no kind)");
      }
      if (doc.get("kind").asText().endsWith("List")) {
        JsonNode items = doc.get("items");
        if (items != null && !items.isNull() && !items.isArray()) {
          throw new PolicyException(where + " items", "must be a list");
        }
        for (int i = 0; items != null && i < items.size(); i++) {
          kinds.add(items.get(i).path("kind").asText(""));
          add(items.get(i), where + " items[" + i + "]", pods, namespaces, nodes, other);
        }
      } else {
        kinds.add(doc.get("kind").asText());
        add(doc, where, pods, namespaces, nodes, other);
      }
    }
    return ClusterSnapshot.of(pods, namespaces, nodes, other.pdbs(), other.pvcs(), other.priorityClasses())
        .withNodeUsage(NodeUsages.withPods(other.nodeUsage(), other.podMetrics(), nodeOf(pods)));
  }

  /** The kinds only the evictor reads, and measured usage (for LowNodeLoad). */
  private record Other(List<PdbRecord> pdbs, List<PvcRecord> pvcs, java.util.Map<String, Integer> priorityClasses,
      List<NodeUsage> nodeUsage, java.util.Map<String, java.util.Map<String, Long>> podMetrics) {}

  private static void add(
      JsonNode item, String where, List<PodRecord> pods, List<NamespaceRecord> namespaces, List<NodeRecord> nodes, Other other) {
    String kind = item.path("kind").asText("");
    requireFourDigitYears(item, where);
    try {
      switch (kind) {
        case "Pod" -> {
          Pod pod = JSON.convertValue(item, Pod.class);
          requireName(pod.getMetadata() != null ? pod.getMetadata().getName() : null, where);
          if (pod.getMetadata().getNamespace() == null) {
            throw new PolicyException(where, "a Pod without metadata.namespace");
          }
          String created = pod.getMetadata().getCreationTimestamp();
          if (PodRecords.time(created).isEmpty()) {
            // PodRecords would take it for created in 1970, and every maxAge rule would want it gone.
            throw new PolicyException(where, created == null || created.isEmpty()
                ? "a Pod without metadata.creationTimestamp"
                : "metadata.creationTimestamp is not an RFC 3339 time: \"" + created + "\"");
          }
          pods.add(PodRecords.pod(pod));
        }
        case "Namespace" -> {
          Namespace ns = JSON.convertValue(item, Namespace.class);
          requireName(ns.getMetadata() != null ? ns.getMetadata().getName() : null, where);
          namespaces.add(PodRecords.namespace(ns));
        }
        case "Node" -> {
          Node node = JSON.convertValue(item, Node.class);
          requireName(node.getMetadata() != null ? node.getMetadata().getName() : null, where);
          nodes.add(PodRecords.node(node));
        }
        case "PodDisruptionBudget" -> {
          if (item.path("apiVersion").asText().equals("policy/v1beta1")) {
            other.pdbs().add(PodRecords.pdb(
                JSON.convertValue(item, io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudget.class)));
          } else {
            other.pdbs().add(PodRecords.pdb(
                JSON.convertValue(item, io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget.class)));
          }
        }
        case "PersistentVolumeClaim" ->
            other.pvcs().add(PodRecords.pvc(JSON.convertValue(item, PersistentVolumeClaim.class)));
        case "PriorityClass" -> {
          PriorityClass pc = JSON.convertValue(item, PriorityClass.class);
          other.priorityClasses().put(pc.getMetadata().getName(), pc.getValue());
        }
        case NodeUsages.NODE_METRIC -> {
          requireApi(item, NodeUsages.NODE_METRIC_API, where);
          NodeUsages.fromNodeMetric(item).ifPresent(other.nodeUsage()::add);
        }
        case NodeUsages.NODE_METRICS -> {
          requireApi(item, NodeUsages.METRICS_API, where);
          NodeUsages.fromNodeMetrics(item).ifPresent(other.nodeUsage()::add);
        }
        case NodeUsages.POD_METRICS -> {
          requireApi(item, NodeUsages.METRICS_API, where);
          var pod = NodeUsages.fromPodMetrics(item);
          other.podMetrics().put(pod.getKey(), pod.getValue());
        }
        case "" -> throw new PolicyException(where, "an item without kind");
        default -> {
          // Other kinds (Services, Deployments, ...) are not read.
        }
      }
    } catch (IllegalArgumentException e) {
      throw new PolicyException(where, "not a valid " + kind + ": " + firstLine(e.getMessage()));
    }
  }

  /** The node a pod ({@code namespace/name}) is bound to, for pod metrics measured apart from their node. */
  private static java.util.function.Function<String, java.util.Optional<String>> nodeOf(List<PodRecord> pods) {
    java.util.Map<String, String> nodes = new java.util.HashMap<>();
    pods.forEach(p -> nodes.put(p.key(), p.nodeName()));
    return key -> java.util.Optional.ofNullable(nodes.get(key));
  }

  /** Usage objects are read by their fields: the same kind name in another API would be misread. */
  private static void requireApi(JsonNode item, String apiVersion, String where) {
    requireName(item.path("metadata").path("name").asText(null), where);
    String actual = item.path("apiVersion").asText("");
    if (!actual.equals(apiVersion)) {
      throw new PolicyException(where, "a " + item.path("kind").asText() + " must be apiVersion " + apiVersion + ", not \"" + actual + "\"");
    }
  }

  /** Any field, at any depth, that holds a timestamp beyond year 9999 (or before year 0) refuses the object. */
  private static void requireFourDigitYears(JsonNode node, String where) {
    if (node.isTextual()) {
      String text = node.textValue();
      if (!text.isEmpty() && (text.charAt(0) == '+' || text.charAt(0) == '-') && EXPANDED_YEAR.matcher(text).matches()) {
        throw new PolicyException(where, "not an RFC 3339 time (its year must have four digits): \"" + text + "\"");
      }
    } else if (node.isObject()) {
      node.fields().forEachRemaining(f -> requireFourDigitYears(f.getValue(), where + "." + f.getKey()));
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        requireFourDigitYears(node.get(i), where + "[" + i + "]");
      }
    }
  }

  private static void requireName(String name, String where) {
    if (name == null || name.isEmpty()) {
      throw new PolicyException(where, "an object without metadata.name");
    }
  }

  private static String firstLine(String message) {
    int newline = message == null ? -1 : message.indexOf('\n');
    return newline < 0 ? String.valueOf(message) : message.substring(0, newline);
  }
}
