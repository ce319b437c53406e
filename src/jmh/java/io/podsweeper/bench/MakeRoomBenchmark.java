package io.podsweeper.bench;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodCondition;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.cluster.Volumes;
import io.podsweeper.policy.LabelSelector;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.safety.RemovalBudget;
import io.podsweeper.strategy.PassResult;
import io.podsweeper.strategy.PolicyEvaluator;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * MakeRoom's planning in one balance pass (docs/benchmarks.md "MakeRoom"): a fragmented cluster of {@code nodes} nodes
 * of 16 cores in 3 zones and {@code pods} pods (about 30 a node at 5,000 nodes and 150k pods), in 60 namespaces, by the
 * ReplicaSets of 500 apps of 400–600m each (one app in 20 with a zone spread constraint, maxSkew 1, DoNotSchedule)
 * and of {@code pending} cache apps (2 cores each, one per node by required anti-affinity, 10 replicas each placed on
 * nodes of their own); every node 94–98 % requested; and a pending replica of each cache app, Unschedulable for ten
 * minutes, which fits a node only once two or three pods leave it. Every pending pod is planned for ({@code maxPlans}
 * as many).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = "-Xmx3g")
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 3, time = 5)
public class MakeRoomBenchmark {
  private static final String POLICY = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      profiles:
        - name: make-room
          pluginConfig:
            - {name: MakeRoom, args: {pendingFor: 5m, maxPlans: 100, maxMovesPerPlan: 3}}
          plugins:
            balance: {enabled: [MakeRoom]}
      """;
  private static final String HOST = "kubernetes.io/hostname";
  private static final String ZONE = "topology.kubernetes.io/zone";

  @Param({"5000"})
  int nodes;

  @Param({"150000"})
  int pods;

  @Param({"100"})
  int pending;

  private ClusterSnapshot snapshot;
  private PolicyEvaluator evaluator;
  private Policy policy;

  @Setup(Level.Trial)
  public void setUp() {
    snapshot = fragmented(nodes, pods, pending);
    policy = PolicyLoader.parse(POLICY, "make-room");
    evaluator = new PolicyEvaluator(policy);
    PassResult first = plan();
    System.out.printf("%n%d plan(s), %d note(s); first plan: %s%n", first.plans().size(), first.notes().size(),
        first.plans().isEmpty() ? first.notes() : first.plans().get(0).describe());
  }

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** The CPU time of the passes (the machine is shared: the score is wall time, this is what the pass itself took). */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class CpuTime {
    public long cpuMillis;
    public long passes;
  }

  @Benchmark
  public PassResult plan(CpuTime cpu) {
    long before = THREADS.getCurrentThreadCpuTime();
    PassResult result = plan();
    cpu.cpuMillis += (THREADS.getCurrentThreadCpuTime() - before) / 1_000_000;
    cpu.passes++;
    return result;
  }

  private PassResult plan() {
    return evaluator.balance(snapshot, SyntheticCluster.NOW, new RemovalBudget(policy.limits()), PolicyEvaluator.StrategyRunner.DIRECT);
  }

  static ClusterSnapshot fragmented(int nodeCount, int podCount, int pendingCount) {
    Random random = new Random(42);
    List<NamespaceRecord> namespaces = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      namespaces.add(new NamespaceRecord("ns-" + i, Map.of("kubernetes.io/metadata.name", "ns-" + i)));
    }
    List<NodeRecord> nodes = new ArrayList<>();
    long[] requested = new long[nodeCount];
    for (int i = 0; i < nodeCount; i++) {
      nodes.add(new NodeRecord("node-" + i, Map.of(HOST, "node-" + i, ZONE, "zone-" + i % 3), true, false, List.of(),
          Map.of("cpu", 16_000L, "memory", 64L << 30, "pods", 110L)));
    }
    List<PodRecord> records = new ArrayList<>(podCount + pendingCount);
    // The cache apps' replicas first, each on a node of its own; then the other pods, round the nodes, each where it
    // leaves at least 400m free (a node too full for it is skipped): every node ends 94-98 % requested.
    int replicas = Math.min(pendingCount * 10, nodeCount);
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < nodeCount; i++) {
      order.add(i);
    }
    java.util.Collections.shuffle(order, random);
    for (int r = 0; r < replicas; r++) {
      int k = r % pendingCount;
      requested[order.get(r)] += 2_000;
      records.add(pod("cache-" + k + "-" + r / pendingCount, "ns-" + k % 60, "cache-" + k, "node-" + order.get(r), cache(k), List.of(), r));
    }
    int node = 0;
    for (int i = 0; records.size() < podCount; i++) {
      int app = random.nextInt(500);
      long cpu = 400 + random.nextInt(201);
      int tried = 0;
      while (requested[node] + cpu > 15_600 && tried++ < nodeCount) {
        node = (node + 1) % nodeCount;
      }
      if (tried > nodeCount) {
        break;
      }
      requested[node] += cpu;
      Scheduling scheduling = new Scheduling(Map.of(), List.of(), List.of(), List.of(), List.of(), Map.of("cpu", cpu, "memory", 128L << 20),
          "Burstable", app % 20 == 0 ? List.of(new Scheduling.SpreadConstraint(1, ZONE, "DoNotSchedule",
              new LabelSelector(Map.of("app", "app-" + app), List.of()), List.of(), true, false)) : List.of());
      records.add(pod("pod-" + i, "ns-" + app % 60, "app-" + app, "node-" + node, scheduling, List.of(), i));
      node = (node + 1) % nodeCount;
    }
    for (int k = 0; k < pendingCount; k++) {
      records.add(pod("cache-" + k + "-pending", "ns-" + k % 60, "cache-" + k, "", cache(k),
          List.of(new PodCondition("PodScheduled", "False", Optional.of("Unschedulable"), Optional.of(SyntheticCluster.NOW.minusSeconds(600)))),
          1_000_000 + k));
    }
    return ClusterSnapshot.of(records, namespaces, nodes);
  }

  /** A replica of cache app {@code k}: 2 cores, one per node (required anti-affinity on the hostname). */
  private static Scheduling cache(int k) {
    Scheduling.PodAffinityTerm onePerNode = new Scheduling.PodAffinityTerm(new LabelSelector(Map.of("app", "cache-" + k), List.of()), Set.of(),
        Optional.empty(), HOST);
    return new Scheduling(Map.of(), List.of(), List.of(), List.of(), List.of(onePerNode), Map.of("cpu", 2_000L, "memory", 1L << 30), "Burstable");
  }

  private static PodRecord pod(String name, String namespace, String app, String node, Scheduling scheduling, List<PodCondition> conditions,
      int seed) {
    return new PodRecord(namespace, name, "uid-" + name, String.valueOf(seed), SyntheticCluster.NOW.minusSeconds(86_400), Optional.empty(), node,
        node.isEmpty() ? "Pending" : "Running", Optional.empty(), Map.of("app", app), Map.of(),
        List.of(new OwnerRef("ReplicaSet", app + "-5d4c8b9f7", "rs-" + app, true)), List.of(), OptionalInt.of(0), "",
        Optional.of(SyntheticCluster.NOW.minusSeconds(86_400)), conditions, Volumes.NONE, scheduling, List.of("registry.example.com/" + app), List.of(), false);
  }
}
