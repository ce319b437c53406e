package io.podsweeper.policy;

import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Why a pod ended (or is being ended), as the pod itself shows it: what a rule's {@code endedBy} selects. The first five
 * are the reasons of the pod's {@code DisruptionTarget} condition (status True), which Kubernetes sets as it disrupts a
 * pod (on by default since 1.26, GA in 1.31; {@code PreemptionByScheduler} since 1.27); the last two are the pod's
 * {@code status.reason} (and message), which the kubelet writes on any version.
 */
public enum EndedBy {
  /** DisruptionTarget reason: kube-scheduler preempted the pod for one of higher priority. */
  PreemptionByScheduler(true, "preempted by the scheduler (DisruptionTarget condition)"),
  /** DisruptionTarget reason: the taint manager deleted it for a NoExecute taint it does not tolerate. */
  DeletionByTaintManager(true, "deleted by the taint manager for a NoExecute taint (DisruptionTarget condition)"),
  /** DisruptionTarget reason: an eviction through the Eviction API (kubectl drain, the descheduler, Podsweeper). */
  EvictionByEvictionAPI(true, "evicted through the Eviction API (DisruptionTarget condition)"),
  /** DisruptionTarget reason: PodGC deleted it (its node is gone, or out of service). */
  DeletionByPodGC(true, "deleted by PodGC (DisruptionTarget condition)"),
  /** DisruptionTarget reason: the kubelet ended it (node-pressure eviction, graceful node shutdown, ...). */
  TerminationByKubelet(true, "terminated by the kubelet (DisruptionTarget condition)"),
  /** {@code status.reason: Evicted}: the kubelet evicted it, under node pressure or past a local storage limit. */
  KubeletEviction(false, "evicted by the kubelet (status.reason Evicted)"),
  /**
   * {@code status.reason: Terminated} with the message "Pod was terminated in response to imminent node shutdown.":
   * the kubelet's graceful node shutdown (Kubernetes 1.22 and later).
   */
  NodeShutdown(false, "terminated for a graceful node shutdown (status.reason Terminated, and its message)");

  /** The message the kubelet's graceful node shutdown writes with {@code status.reason: Terminated}. */
  public static final String NODE_SHUTDOWN_MESSAGE = "Pod was terminated in response to imminent node shutdown.";

  private final boolean disruptionReason;
  private final String description;

  EndedBy(boolean disruptionReason, String description) {
    this.disruptionReason = disruptionReason;
    this.description = description;
  }

  /** What it says happened, for reasons and {@code explain}. */
  public String description() {
    return description;
  }

  /** The value a DisruptionTarget condition's reason names, if it is one of the five. */
  public static Optional<EndedBy> ofDisruptionReason(String reason) {
    return Arrays.stream(values()).filter(e -> e.disruptionReason && e.name().equals(reason)).findFirst();
  }

  public static Optional<EndedBy> parse(String name) {
    return Arrays.stream(values()).filter(e -> e.name().equals(name)).findFirst();
  }

  public static String allowedNames() {
    return Arrays.stream(values()).map(Enum::name).collect(Collectors.joining(", "));
  }
}
