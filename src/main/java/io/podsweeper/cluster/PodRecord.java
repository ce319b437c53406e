package io.podsweeper.cluster;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A slim, immutable record of a pod: exactly what the decision core reads, nothing more, so a cache of 100k pods
 * stays small. Built from the API object at the edge ({@code io.podsweeper.kube.PodRecords}).
 *
 * @param nodeName empty when the pod was never scheduled
 * @param reason the pod-level {@code status.reason}, e.g. Evicted, NodeLost, Shutdown
 * @param annotations only the annotations decisions read (see PodRecords), not all of them
 * @param priority {@code spec.priority}; empty when the pod has none (then it is never protected by priority)
 * @param images the images of the pod's (main) containers, in spec order
 */
public record PodRecord(
    String namespace,
    String name,
    String uid,
    String resourceVersion,
    Instant creationTimestamp,
    Optional<Instant> deletionTimestamp,
    String nodeName,
    String phase,
    Optional<String> reason,
    Map<String, String> labels,
    Map<String, String> annotations,
    List<OwnerRef> owners,
    List<ContainerStatus> containers,
    OptionalInt priority,
    Optional<Instant> startTime,
    List<PodCondition> conditions,
    Volumes volumes,
    Scheduling scheduling,
    List<String> images) {

  public static final String MIRROR_ANNOTATION = "kubernetes.io/config.mirror";
  public static final String CONFIG_SOURCE_ANNOTATION = "kubernetes.io/config.source";
  /** Podsweeper: on a pod or its namespace, {@code "true"} protects the pod from every strategy. */
  public static final String PROTECT_ANNOTATION = "podsweeper.io/protect";
  /** Upstream descheduler: the pod is evictable whatever the evictor's protections say. */
  public static final String EVICT_ANNOTATION = "descheduler.alpha.kubernetes.io/evict";
  /** Upstream descheduler: the pod is evicted in background (e.g. KubeVirt live migration); a 429 may mean "accepted". */
  public static final String REQUEST_EVICT_ONLY_ANNOTATION = "descheduler.alpha.kubernetes.io/request-evict-only";
  /** Upstream descheduler: avoid evicting; with noEvictionPolicy Mandatory, never evict. */
  public static final String PREFER_NO_EVICTION_ANNOTATION = "descheduler.alpha.kubernetes.io/prefer-no-eviction";

  public PodRecord {
    labels = Map.copyOf(labels);
    annotations = Map.copyOf(annotations);
    owners = List.copyOf(owners);
    containers = List.copyOf(containers);
    conditions = List.copyOf(conditions);
    images = List.copyOf(images);
  }

  /** The owner that counts for per-workload throttles: the controller reference, else the first owner. */
  public java.util.Optional<OwnerRef> controller() {
    return owners.stream().filter(OwnerRef::controller).findFirst().or(() -> owners.stream().findFirst());
  }

  /** Jobs a CronJob starts are named {@code <cronjob>-<minutes since the epoch>}. */
  private static final java.util.regex.Pattern CRONJOB_JOB = java.util.regex.Pattern.compile("(.+)-\\d{8,}");

  /**
   * The group whose history retention by count keeps: the controller ({@code Kind/name}), the CronJob for the Jobs
   * it starts (so its history spans runs, like its own history limits), or empty for a bare pod.
   */
  public String retentionGroup() {
    return controller().map(o -> {
      java.util.regex.Matcher m = CRONJOB_JOB.matcher(o.name());
      return "Job".equals(o.kind()) && m.matches() ? "CronJob/" + m.group(1) : o.kind() + "/" + o.name();
    }).orElse("");
  }

  /** Running and Ready, and not on its way out. */
  public boolean available() {
    return "Running".equals(phase) && !terminating()
        && conditions.stream().anyMatch(c -> "Ready".equals(c.type()) && "True".equals(c.status()));
  }

  public String key() {
    return namespace + "/" + name;
  }

  /** Succeeded or Failed: the pod has finished and holds no resources any more. */
  public boolean terminated() {
    return "Succeeded".equals(phase) || "Failed".equals(phase);
  }

  public boolean terminating() {
    return deletionTimestamp.isPresent();
  }

  public boolean scheduled() {
    return !nodeName.isEmpty();
  }

  /** Mirror pods (static pods' API shadows) and static pods are owned by a kubelet, never by us. */
  public boolean managedByKubelet() {
    String source = annotations.get(CONFIG_SOURCE_ANNOTATION);
    return annotations.containsKey(MIRROR_ANNOTATION) || (source != null && !"api".equals(source));
  }

  /**
   * When a finished pod finished: the latest container {@code finishedAt}. Pods that finished without any
   * container having run (e.g. rejected at admission) have none; their creation time is used, which can only make
   * them look older than they are by their pending time.
   */
  public Instant finishedAt() {
    return containers.stream()
        .map(ContainerStatus::finishedAt)
        .flatMap(Optional::stream)
        .max(Comparator.naturalOrder())
        .orElse(creationTimestamp);
  }
}
