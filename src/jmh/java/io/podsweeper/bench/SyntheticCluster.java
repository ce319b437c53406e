package io.podsweeper.bench;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodCondition;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.cluster.Volumes;
import io.podsweeper.policy.LabelSelector;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;

/**
 * A deterministic synthetic cluster for the benchmarks: 100 nodes (or as many as asked) in 3 zones, 60 namespaces of four teams, and pods
 * in the mix a busy cluster has (mostly Running, some crash-looping, pulling, pending, finished, evicted), aged up to
 * a week. For the node-aware strategies, one app in 20 spreads over zones (maxSkew 1), one in 50 has required
 * anti-affinity on the hostname, and every node has a fresh measured usage.
 */
public final class SyntheticCluster {
  static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");
  private static final String[] TEAMS = {"ci", "data", "web", "platform"};
  private static final int NAMESPACES = 60;
  private static final int NODES = 100;
  private static final String ZONE = "topology.kubernetes.io/zone";

  private SyntheticCluster() {}

  public static ClusterSnapshot of(int pods) {
    return of(pods, NODES);
  }

  /** With {@code nodes} nodes: the balance benchmark keeps about 100 pods per node, as kubelet's default of 110 allows. */
  static ClusterSnapshot of(int pods, int nodeCount) {
    Random random = new Random(42);
    List<NamespaceRecord> namespaces = new ArrayList<>();
    for (int i = 0; i < NAMESPACES; i++) {
      String name = i == 0 ? "kube-system" : TEAMS[i % TEAMS.length] + "-" + i;
      namespaces.add(new NamespaceRecord(name, Map.of("kubernetes.io/metadata.name", name, "team", TEAMS[i % TEAMS.length])));
    }
    List<NodeRecord> nodes = new ArrayList<>();
    for (int i = 0; i < nodeCount; i++) {
      nodes.add(new NodeRecord("node-" + i, Map.of("kubernetes.io/hostname", "node-" + i, "pool", i % 2 == 0 ? "general" : "batch",
          ZONE, "zone-" + i % 3), true, false, List.of(), Map.of("cpu", 16_000L, "memory", 64L << 30, "pods", 1_100L)));
    }
    List<PodRecord> records = new ArrayList<>(pods);
    for (int i = 0; i < pods; i++) {
      records.add(pod(i, namespaces.get(random.nextInt(NAMESPACES)).name(), nodeCount, random));
    }
    return ClusterSnapshot.of(records, namespaces, nodes);
  }

  /** The same cluster with a measured usage per node, taken a minute before {@link #NOW}, from 10 % to 95 % cpu. */
  static ClusterSnapshot withUsage(ClusterSnapshot snapshot) {
    List<NodeUsage> usage = new ArrayList<>();
    for (NodeRecord node : snapshot.nodes()) {
      int n = Integer.parseInt(node.name().substring("node-".length()));
      long cpu = 1_600L + (n * 137L % 85) * 160L;
      usage.add(new NodeUsage(node.name(), Map.of("cpu", cpu, "memory", 16L << 30), NOW.minusSeconds(60), "NodeMetric", Map.of()));
    }
    return snapshot.withNodeUsage(usage);
  }

  private static PodRecord pod(int i, String namespace, int nodeCount, Random random) {
    Instant created = NOW.minus(Duration.ofSeconds(random.nextInt(7 * 24 * 3600)));
    String app = "app-" + (i % 500);
    int kind = random.nextInt(100);
    String phase = "Running";
    Optional<String> reason = Optional.empty();
    String node = "node-" + random.nextInt(nodeCount);
    List<ContainerStatus> containers = new ArrayList<>();
    if (kind < 80) {
      containers.add(container(Optional.empty(), Optional.empty(), Optional.empty(), random.nextInt(3)));
    } else if (kind < 85) {
      containers.add(container(Optional.of("CrashLoopBackOff"), Optional.empty(), Optional.empty(), 5 + random.nextInt(100)));
    } else if (kind < 87) {
      phase = "Pending";
      containers.add(container(Optional.of("ImagePullBackOff"), Optional.empty(), Optional.empty(), 0));
    } else if (kind < 89) {
      phase = "Pending";
      node = "";
    } else if (kind < 94) {
      phase = "Succeeded";
      containers.add(container(Optional.empty(), Optional.of("Completed"), Optional.of(created.plusSeconds(600)), 0));
    } else if (kind < 98) {
      phase = "Failed";
      containers.add(container(Optional.empty(), Optional.of(random.nextBoolean() ? "Error" : "OOMKilled"), Optional.of(created.plusSeconds(300)), 0));
    } else {
      phase = "Failed";
      reason = Optional.of("Evicted");
    }
    OwnerRef owner = kind >= 89 && kind < 98 ? new OwnerRef("Job", app + "-job", "job-" + (i % 500), true)
        : new OwnerRef("ReplicaSet", app + "-5d4c8b9f7", "rs-" + (i % 500), true);
    Map<String, String> labels = i % 50 == 0
        ? Map.of("app", app, "pod-template-hash", "5d4c8b9f7", "podsweeper.io/keep", "true")
        : Map.of("app", app, "pod-template-hash", "5d4c8b9f7");
    List<PodCondition> conditions = List.of(
        new PodCondition("PodScheduled", node.isEmpty() ? "False" : "True", Optional.empty(), Optional.of(created)),
        new PodCondition("Ready", "Running".equals(phase) ? "True" : "False", Optional.empty(), Optional.of(created.plusSeconds(5))));
    return new PodRecord(namespace, "pod-" + i, "uid-" + i, String.valueOf(1000 + i), created, Optional.empty(), node, phase, reason,
        labels, Map.of(), List.of(owner), containers, OptionalInt.of(0), "", Optional.of(created), conditions,
        new Volumes(i % 3 == 0, List.of(), false),
        new Scheduling(Map.of(), List.of(), List.of(), List.of(),
            i % 50 == 0 ? List.of(new Scheduling.PodAffinityTerm(new LabelSelector(Map.of("app", app), List.of()), Set.of(), Optional.empty(),
                "kubernetes.io/hostname")) : List.of(),
            Map.of("cpu", 100L, "memory", 128L << 20), "Burstable",
            i % 20 == 0 ? List.of(new Scheduling.SpreadConstraint(1, ZONE, "DoNotSchedule", new LabelSelector(Map.of("app", app), List.of()),
                List.of(), true, false)) : List.of()),
        List.of("registry.example.com/" + app + ":1.0"), List.of(), false);
  }

  private static ContainerStatus container(Optional<String> waiting, Optional<String> terminated, Optional<Instant> finishedAt, int restarts) {
    return new ContainerStatus("main", ContainerStatus.Kind.MAIN, waiting, terminated,
        terminated.isPresent() ? OptionalInt.of("Completed".equals(terminated.get()) ? 0 : 1) : OptionalInt.empty(), finishedAt, restarts);
  }
}
