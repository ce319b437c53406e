package io.podsweeper.policy;

import java.util.List;
import java.util.Map;

/**
 * What a rule's {@code match} expression sees (README "CEL conditions"): a documented part of the pod, with the
 * Kubernetes field names, and its namespace's labels. Only what the slim pod record holds: a field that is not here
 * is a compile error, not an empty value. A state a container is not in has an empty reason (and exit code 0).
 */
public final class PodView {
  private PodView() {}

  /** The variable {@code pod}. */
  public record Pod(Metadata metadata, Spec spec, Status status) {}

  /** The variable {@code namespaceObject}. */
  public record Namespace(String name, Map<String, String> labels) {}

  /** {@code annotations}: only those Podsweeper keeps (protection, eviction, per-pod TTL keys). */
  public record Metadata(String name, String namespace, Map<String, String> labels, Map<String, String> annotations,
      List<OwnerReference> ownerReferences) {}

  public record OwnerReference(String kind, String name, boolean controller) {}

  /** {@code priority} is 0 when the pod has none; {@code nodeName} empty when it was never scheduled. */
  public record Spec(long priority, String priorityClassName, String nodeName, List<Container> containers) {}

  /** A main container of the spec: its image (its name is in {@code status.containerStatuses}; the cache keeps no other). */
  public record Container(String image) {}

  /**
   * {@code containerStatuses} are the long-running containers: the main ones, then native sidecars (init containers with
   * {@code restartPolicy: Always}, which Kubernetes lists under {@code initContainerStatuses}); {@code initContainerStatuses}
   * the ordinary init containers. Each container once.
   */
  public record Status(String phase, String reason, List<Condition> conditions, List<ContainerStatus> containerStatuses,
      List<ContainerStatus> initContainerStatuses) {}

  public record Condition(String type, String status, String reason) {}

  /** {@code sidecar}: a native sidecar (not a Kubernetes field: its spec's {@code restartPolicy: Always}). */
  public record ContainerStatus(String name, long restartCount, State state, State lastState, boolean sidecar) {}

  public record State(Waiting waiting, Terminated terminated) {}

  public record Waiting(String reason) {}

  public record Terminated(String reason, long exitCode) {}

  static final Class<?>[] TYPES = {Pod.class, Namespace.class, Metadata.class, OwnerReference.class, Spec.class, Container.class,
      Status.class, Condition.class, ContainerStatus.class, State.class, Waiting.class, Terminated.class};
}
