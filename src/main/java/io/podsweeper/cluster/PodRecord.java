package io.podsweeper.cluster;

import io.podsweeper.policy.EndedBy;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * A slim, immutable record of a pod: exactly what the decision core reads, nothing more, so a cache of 100k pods
 * stays small. Built from the API object at the edge ({@code io.podsweeper.kube.PodRecords}).
 *
 * @param nodeName empty when the pod was never scheduled
 * @param reason the pod-level {@code status.reason}, e.g. Evicted, NodeLost, Shutdown
 * @param annotations only the annotations decisions read (see PodRecords), not all of them
 * @param priority {@code spec.priority}; empty when the pod has none (then it is never protected by priority)
 * @param priorityClassName {@code spec.priorityClassName}, empty when none: Podsweeper's own rules protect the
 *     system-critical classes by name too, for pods whose priority was never resolved from it
 * @param images the images of the pod's (main) containers, in spec order
 * @param schedulingGates the names of {@code spec.schedulingGates} (Kubernetes 1.27 and later): while any is there, the
 *     scheduler leaves the pod alone, held back on purpose (Kueue, other admission controllers)
 * @param nodeShutdownMessage {@code status.message} is the one the kubelet's graceful node shutdown writes
 *     ({@link EndedBy#NODE_SHUTDOWN_MESSAGE}): the message itself is not kept, only this
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
    String priorityClassName,
    Optional<Instant> startTime,
    List<PodCondition> conditions,
    Volumes volumes,
    Scheduling scheduling,
    List<String> images,
    List<String> schedulingGates,
    boolean nodeShutdownMessage) {

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
  /** Koordinator's eviction cost: at 2147483647 its MigrationController never evicts the pod. */
  public static final String EVICTION_COST_ANNOTATION = "scheduling.koordinator.sh/eviction-cost";

  public PodRecord {
    labels = Map.copyOf(labels);
    annotations = Map.copyOf(annotations);
    owners = List.copyOf(owners);
    containers = List.copyOf(containers);
    conditions = List.copyOf(conditions);
    images = List.copyOf(images);
    schedulingGates = List.copyOf(schedulingGates);
  }

  /** Held by scheduling gates: the scheduler does not try to place it until every gate is removed. */
  public boolean gated() {
    return !schedulingGates.isEmpty();
  }

  /**
   * Why the pod ended, or is being ended, as it shows it: its DisruptionTarget condition's reason (status True), and
   * what the kubelet wrote in its {@code status.reason}; empty for most pods. In {@link EndedBy}'s order.
   */
  public Set<EndedBy> endedBy() {
    Set<EndedBy> ended = EnumSet.noneOf(EndedBy.class);
    for (PodCondition c : conditions) {
      if ("DisruptionTarget".equals(c.type()) && "True".equals(c.status())) {
        c.reason().flatMap(EndedBy::ofDisruptionReason).ifPresent(ended::add);
      }
    }
    if (reason.filter("Evicted"::equals).isPresent()) {
      ended.add(EndedBy.KubeletEviction);
    }
    if (nodeShutdownMessage && reason.filter("Terminated"::equals).isPresent()) {
      ended.add(EndedBy.NodeShutdown);
    }
    return ended;
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

  /** Bound to a node, not finished and not on its way out: what the guard's shares count as running. */
  public boolean runningOnNode() {
    return scheduled() && !terminated() && !terminating();
  }

  /** Mirror pods (static pods' API shadows) and static pods are owned by a kubelet, never by us. */
  public boolean managedByKubelet() {
    String source = annotations.get(CONFIG_SOURCE_ANNOTATION);
    return annotations.containsKey(MIRROR_ANNOTATION) || (source != null && !"api".equals(source));
  }

  /** When a finished pod finished: {@link #finish()}'s instant. */
  public Instant finishedAt() {
    return finish().at();
  }

  /**
   * When the pod finished, and which timestamp says so.
   *
   * @param source the timestamp used, for reasons; empty in the ordinary case, every main container's finishedAt
   */
  public record Finish(Instant at, Optional<String> source) {}

  /**
   * When a finished pod finished. Ordinarily every main container records when it terminated: the latest container
   * {@code finishedAt} is the answer. A pod the kubelet evicted, or whose node was lost, has containers that ended
   * as ContainerStatusUnknown without one; then the latest evidence counts: the DisruptionTarget condition (set as
   * the pod is disrupted), the Ready=False transition, any container finishedAt there is. Without any evidence, the
   * newest timestamp the pod has (its start time, a condition transition), its creation only when nothing is newer:
   * never a guess older than the pod shows, as an older one would remove a pod evicted minutes ago after a week of
   * running as if it had finished a week ago.
   */
  public Finish finish() {
    boolean mainContainers = false;
    boolean everyMainContainerFinished = true;
    Optional<Instant> latestContainer = Optional.empty();
    for (ContainerStatus c : containers) {
      if (c.kind() == ContainerStatus.Kind.MAIN) {
        mainContainers = true;
        everyMainContainerFinished &= c.finishedAt().isPresent();
      }
      if (c.finishedAt().isPresent() && (latestContainer.isEmpty() || c.finishedAt().get().isAfter(latestContainer.get()))) {
        latestContainer = c.finishedAt();
      }
    }
    if (mainContainers && everyMainContainerFinished) {
      return new Finish(latestContainer.get(), Optional.empty());
    }
    // On a tie the earlier evidence names the source: the more telling one.
    Finish evidence = later(null, latestContainer, "container finishedAt");
    evidence = later(evidence, transition("DisruptionTarget", "True"), "DisruptionTarget condition");
    evidence = later(evidence, transition("Ready", "False"), "Ready=False condition");
    if (evidence != null) {
      return evidence;
    }
    Finish newest = new Finish(creationTimestamp, Optional.of("no finish recorded: creation"));
    newest = later(newest, startTime, "no finish recorded: start time");
    for (PodCondition c : conditions) {
      newest = later(newest, c.lastTransitionTime(), "no finish recorded: " + c.type() + " condition");
    }
    return newest;
  }

  /** {@code candidate} from {@code source} if it is later than {@code best} (or there is no best yet), else best. */
  private static Finish later(Finish best, Optional<Instant> candidate, String source) {
    return candidate.isPresent() && (best == null || candidate.get().isAfter(best.at()))
        ? new Finish(candidate.get(), Optional.of(source)) : best;
  }

  /** When the condition of this type last changed to this status, if the pod has it so. */
  private Optional<Instant> transition(String type, String status) {
    for (PodCondition c : conditions) {
      if (type.equals(c.type()) && status.equals(c.status())) {
        return c.lastTransitionTime();
      }
    }
    return Optional.empty();
  }
}
