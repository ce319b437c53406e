package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.ContainerState;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodRecord;
import java.time.Instant;
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
  static final Set<String> KEPT_ANNOTATIONS =
      Set.of(PodRecord.MIRROR_ANNOTATION, PodRecord.CONFIG_SOURCE_ANNOTATION);

  private PodRecords() {}

  public static PodRecord pod(Pod pod) {
    ObjectMeta meta = pod.getMetadata();
    PodStatus status = pod.getStatus() != null ? pod.getStatus() : new PodStatus();
    Map<String, String> annotations = new HashMap<>();
    if (meta.getAnnotations() != null) {
      meta.getAnnotations().forEach((k, v) -> {
        if (KEPT_ANNOTATIONS.contains(k)) {
          annotations.put(k, v);
        }
      });
    }
    List<OwnerRef> owners = new ArrayList<>();
    if (meta.getOwnerReferences() != null) {
      meta.getOwnerReferences()
          .forEach(o -> owners.add(new OwnerRef(o.getKind(), o.getName(), o.getUid(), Boolean.TRUE.equals(o.getController()))));
    }
    List<ContainerStatus> containers = new ArrayList<>();
    addContainers(containers, status.getContainerStatuses(), ContainerStatus.Kind.MAIN);
    addContainers(containers, status.getInitContainerStatuses(), ContainerStatus.Kind.INIT);
    addContainers(containers, status.getEphemeralContainerStatuses(), ContainerStatus.Kind.EPHEMERAL);
    String nodeName = pod.getSpec() != null && pod.getSpec().getNodeName() != null ? pod.getSpec().getNodeName() : "";
    return new PodRecord(
        meta.getNamespace(),
        meta.getName(),
        nullToEmpty(meta.getUid()),
        nullToEmpty(meta.getResourceVersion()),
        time(meta.getCreationTimestamp()).orElse(Instant.EPOCH),
        time(meta.getDeletionTimestamp()),
        nodeName,
        status.getPhase() != null ? status.getPhase() : "Pending",
        Optional.ofNullable(status.getReason()),
        meta.getLabels() != null ? meta.getLabels() : Map.of(),
        annotations,
        owners,
        containers);
  }

  public static NamespaceRecord namespace(Namespace namespace) {
    Map<String, String> labels = new HashMap<>();
    labels.put("kubernetes.io/metadata.name", namespace.getMetadata().getName());
    if (namespace.getMetadata().getLabels() != null) {
      labels.putAll(namespace.getMetadata().getLabels());
    }
    return new NamespaceRecord(namespace.getMetadata().getName(), labels);
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
    return new NodeRecord(node.getMetadata().getName(), labels, ready, unschedulable);
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
        waiting = Optional.ofNullable(state.getWaiting().getReason());
      }
      if (state != null && state.getTerminated() != null) {
        terminated = Optional.ofNullable(state.getTerminated().getReason());
        Integer code = state.getTerminated().getExitCode();
        exitCode = code != null ? OptionalInt.of(code) : OptionalInt.empty();
        finishedAt = time(state.getTerminated().getFinishedAt());
      }
      int restarts = s.getRestartCount() != null ? s.getRestartCount() : 0;
      out.add(new ContainerStatus(s.getName(), kind, waiting, terminated, exitCode, finishedAt, restarts));
    }
  }

  static Optional<Instant> time(String text) {
    if (text == null || text.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(Instant.parse(text));
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
