package io.podsweeper.policy;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.Map;

/**
 * What a rule's {@code match} expression sees (README "CEL conditions"): a documented part of the pod, with the
 * Kubernetes field names, and its namespace's labels. Only what the slim pod record holds: a field that is not here
 * is a compile error, not an empty value. A state a container is not in has an empty reason (and exit code 0).
 *
 * <p>Each string, list and map field says the most it can hold ({@link Max}): what the API server lets a pod carry,
 * which is what {@link PodMatch}'s cost estimate assumes. Names and label keys and values have the API server's own
 * limits. Counts (labels, containers, conditions, owners) and the strings it does not validate (images, reasons,
 * owners' kinds and names) are bounded only by the size of the request that writes the pod, {@link #REQUEST} bytes,
 * each list entry taking at least a few bytes of it: so Kubernetes' own CEL cost estimates bound what a schema does
 * not. Nothing is cut to fit: a pod is seen whole, and the cost limit, not the view, keeps evaluation short.
 */
public final class PodView {
  private PodView() {}

  /** The API server's limit on a request body (3 MiB): no pod is larger. etcd's default limit is lower, 1.5 MiB. */
  static final int REQUEST = 3 * 1024 * 1024;
  /** DNS subdomains: pod, node and priority class names. */
  static final int SUBDOMAIN = 253;
  /** DNS labels: namespace and container names; label values. */
  static final int DNS_LABEL = 63;
  /** Qualified names (a 253-character prefix, '/', 63 characters): label and annotation keys, condition types. */
  static final int QUALIFIED_NAME = 317;
  /** All annotations of an object together, keys and values. */
  static final int ANNOTATIONS = 256 * 1024;
  /** Labels: an entry takes at least 8 bytes ({@code "ab":"",}). */
  static final int LABELS = REQUEST / 8;
  /** Annotations: as labels, within {@link #ANNOTATIONS}. */
  static final int ANNOTATION_ENTRIES = ANNOTATIONS / 8;
  /** Containers, and their statuses (one each): a container takes at least 24 bytes ({@code {"name":"a","image":"b"},}). */
  static final int CONTAINERS = REQUEST / 24;
  /** Conditions: at least 24 bytes each ({@code {"type":"A","status":"True"},}). */
  static final int CONDITIONS = REQUEST / 24;
  /** Owner references: at least 48 bytes each (apiVersion, kind, name and uid are required). */
  static final int OWNERS = REQUEST / 48;

  /**
   * The most a field holds: a string's characters ({@code length}), a list's or map's entries ({@code items}), a map's
   * keys' and values' characters ({@code keyLength}, {@code length}).
   */
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.RECORD_COMPONENT)
  @interface Max {
    int length() default 0;

    int items() default 0;

    int keyLength() default 0;
  }

  /** The variable {@code pod}. */
  public record Pod(Metadata metadata, Spec spec, Status status) {}

  /** The variable {@code namespaceObject}. */
  public record Namespace(@Max(length = DNS_LABEL) String name,
      @Max(items = LABELS, keyLength = QUALIFIED_NAME, length = DNS_LABEL) Map<String, String> labels) {}

  /** {@code annotations}: only those Podsweeper keeps (protection, eviction, per-pod TTL keys). */
  public record Metadata(@Max(length = SUBDOMAIN) String name, @Max(length = DNS_LABEL) String namespace,
      @Max(items = LABELS, keyLength = QUALIFIED_NAME, length = DNS_LABEL) Map<String, String> labels,
      @Max(items = ANNOTATION_ENTRIES, keyLength = QUALIFIED_NAME, length = ANNOTATIONS) Map<String, String> annotations,
      @Max(items = OWNERS) List<OwnerReference> ownerReferences) {}

  public record OwnerReference(@Max(length = REQUEST) String kind, @Max(length = REQUEST) String name, boolean controller) {}

  /** {@code priority} is 0 when the pod has none; {@code nodeName} empty when it was never scheduled. */
  public record Spec(long priority, @Max(length = SUBDOMAIN) String priorityClassName, @Max(length = SUBDOMAIN) String nodeName,
      @Max(items = CONTAINERS) List<Container> containers) {}

  /** A main container of the spec: its image (its name is in {@code status.containerStatuses}; the cache keeps no other). */
  public record Container(@Max(length = REQUEST) String image) {}

  /**
   * {@code containerStatuses} are the long-running containers: the main ones, then native sidecars (init containers with
   * {@code restartPolicy: Always}, which Kubernetes lists under {@code initContainerStatuses}); {@code initContainerStatuses}
   * the ordinary init containers. Each container once.
   */
  public record Status(@Max(length = REQUEST) String phase, @Max(length = REQUEST) String reason,
      @Max(items = CONDITIONS) List<Condition> conditions, @Max(items = CONTAINERS) List<ContainerStatus> containerStatuses,
      @Max(items = CONTAINERS) List<ContainerStatus> initContainerStatuses) {}

  public record Condition(@Max(length = QUALIFIED_NAME) String type, @Max(length = REQUEST) String status,
      @Max(length = REQUEST) String reason) {}

  /** {@code sidecar}: a native sidecar (not a Kubernetes field: its spec's {@code restartPolicy: Always}). */
  public record ContainerStatus(@Max(length = DNS_LABEL) String name, long restartCount, State state, State lastState,
      boolean sidecar) {}

  public record State(Waiting waiting, Terminated terminated) {}

  public record Waiting(@Max(length = REQUEST) String reason) {}

  public record Terminated(@Max(length = REQUEST) String reason, long exitCode) {}

  static final Class<?>[] TYPES = {Pod.class, Namespace.class, Metadata.class, OwnerReference.class, Spec.class, Container.class,
      Status.class, Condition.class, ContainerStatus.class, State.class, Waiting.class, Terminated.class};
}
