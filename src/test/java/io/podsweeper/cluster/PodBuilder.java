package io.podsweeper.cluster;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/** A compact builder of pod records for unit tests; defaults: Running on node-a, created at {@code created}. */
public final class PodBuilder {
  private String namespace = "default";
  private final String name;
  private String uid;
  private String resourceVersion = "1";
  private Instant created = Instant.parse("2026-01-01T00:00:00Z");
  private Optional<Instant> deletion = Optional.empty();
  private String node = "node-a";
  private String phase = "Running";
  private Optional<String> reason = Optional.empty();
  private final Map<String, String> labels = new HashMap<>();
  private final Map<String, String> annotations = new HashMap<>();
  private final List<OwnerRef> owners = new ArrayList<>(List.of(new OwnerRef("ReplicaSet", "rs", "rs-uid", true)));
  private final List<ContainerStatus> containers = new ArrayList<>();
  private OptionalInt priority = OptionalInt.empty();
  private Scheduling scheduling = Scheduling.NONE;
  private List<String> images = List.of("app:1");

  private PodBuilder(String name) {
    this.name = name;
    this.uid = "uid-" + name;
  }

  public static PodBuilder pod(String name) {
    return new PodBuilder(name);
  }

  public PodBuilder in(String ns) {
    this.namespace = ns;
    return this;
  }

  public PodBuilder uid(String value) {
    this.uid = value;
    return this;
  }

  public PodBuilder rv(String value) {
    this.resourceVersion = value;
    return this;
  }

  public PodBuilder created(Instant at) {
    this.created = at;
    return this;
  }

  public PodBuilder terminating() {
    this.deletion = Optional.of(created.plusSeconds(1));
    return this;
  }

  public PodBuilder node(String value) {
    this.node = value;
    return this;
  }

  public PodBuilder unscheduled() {
    this.node = "";
    this.phase = "Pending";
    return this;
  }

  public PodBuilder phase(String value) {
    this.phase = value;
    return this;
  }

  public PodBuilder reason(String value) {
    this.reason = Optional.of(value);
    return this;
  }

  public PodBuilder label(String key, String value) {
    labels.put(key, value);
    return this;
  }

  public PodBuilder annotation(String key, String value) {
    annotations.put(key, value);
    return this;
  }

  public PodBuilder bare() {
    owners.clear();
    return this;
  }

  public PodBuilder waiting(String why) {
    containers.add(new ContainerStatus("c" + containers.size(), ContainerStatus.Kind.MAIN, Optional.of(why), Optional.empty(),
        OptionalInt.empty(), Optional.empty(), 0));
    return this;
  }

  public PodBuilder terminated(String why, int exitCode, Instant finishedAt) {
    containers.add(new ContainerStatus("c" + containers.size(), ContainerStatus.Kind.MAIN, Optional.empty(), Optional.of(why),
        OptionalInt.of(exitCode), Optional.of(finishedAt), 0));
    return this;
  }

  public PodBuilder owner(String kind, String ownerName) {
    owners.clear();
    owners.add(new OwnerRef(kind, ownerName, kind + "-" + ownerName + "-uid", true));
    return this;
  }

  public PodBuilder priority(int value) {
    this.priority = OptionalInt.of(value);
    return this;
  }

  public PodBuilder scheduling(Scheduling value) {
    this.scheduling = value;
    return this;
  }

  /** Requests in millicores of cpu and bytes of memory; Burstable. */
  public PodBuilder requests(long cpuMillis, long memoryBytes) {
    return scheduling(new Scheduling(scheduling.nodeSelector(), scheduling.requiredNodeAffinity(), scheduling.preferredNodeAffinity(),
        scheduling.tolerations(), scheduling.requiredPodAntiAffinity(), Map.of("cpu", cpuMillis, "memory", memoryBytes), "Burstable",
        scheduling.spreadConstraints()));
  }

  /** Adds a topology spread constraint to what the pod already has. */
  public PodBuilder spread(Scheduling.SpreadConstraint constraint) {
    List<Scheduling.SpreadConstraint> constraints = new ArrayList<>(scheduling.spreadConstraints());
    constraints.add(constraint);
    return scheduling(new Scheduling(scheduling.nodeSelector(), scheduling.requiredNodeAffinity(), scheduling.preferredNodeAffinity(),
        scheduling.tolerations(), scheduling.requiredPodAntiAffinity(), scheduling.requests(), scheduling.qosClass(), constraints));
  }

  /** Required pod anti-affinity terms, replacing any. */
  public PodBuilder antiAffinity(Scheduling.PodAffinityTerm... terms) {
    return scheduling(new Scheduling(scheduling.nodeSelector(), scheduling.requiredNodeAffinity(), scheduling.preferredNodeAffinity(),
        scheduling.tolerations(), List.of(terms), scheduling.requests(), scheduling.qosClass()));
  }

  public PodBuilder images(String... values) {
    this.images = List.of(values);
    return this;
  }

  public PodRecord build() {
    return new PodRecord(namespace, name, uid, resourceVersion, created, deletion, node, phase, reason, labels, annotations, owners,
        containers, priority, Optional.of(created), List.of(), Volumes.NONE, scheduling, images);
  }

  public static NodeRecord readyNode(String name) {
    return new NodeRecord(name, Map.of("kubernetes.io/hostname", name), true, false, List.of(),
        Map.of("cpu", 4000L, "memory", 16L << 30, "pods", 110L));
  }
}
