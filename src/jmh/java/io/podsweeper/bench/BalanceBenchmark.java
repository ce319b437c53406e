package io.podsweeper.bench;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.safety.RemovalBudget;
import io.podsweeper.strategy.PassResult;
import io.podsweeper.strategy.PolicyEvaluator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
 * The periodic balance pass (docs/benchmarks.md): one node-aware strategy at a time over the synthetic cluster (about
 * 100 pods per node: 100 nodes for 10k pods, 1,000 for 100k), as
 * {@code Sweeper.fullPass} runs it every {@code fullPassInterval}, within upstream-style per-node and per-namespace
 * caps. {@code all} runs every one in one profile.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = "-Xmx2g")
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class BalanceBenchmark {
  private static final String POLICY = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      limits: {maxPerNode: 10, maxPerNamespace: 50}
      profiles:
        - name: balance
          pluginConfig:
            - {name: DefaultEvictor, args: {nodeFit: %s}}
            - {name: RemovePodsViolatingNodeTaints, args: {}}
            - {name: RemovePodsViolatingInterPodAntiAffinity, args: {}}
            - {name: RemoveDuplicates, args: {}}
            - {name: LowNodeUtilization, args: {thresholds: {cpu: 20, memory: 20}, targetThresholds: {cpu: 50, memory: 50}}}
            - {name: RemovePodsViolatingTopologySpreadConstraint, args: {}}
            - {name: LowNodeLoad, args: {lowThresholds: {cpu: 30, memory: 30}, highThresholds: {cpu: 70, memory: 70},
                anomalyCondition: {consecutiveAbnormalities: 1}}}
          plugins:
            deschedule: {enabled: [%s]}
            balance: {enabled: [%s]}
      """;
  private static final Map<String, Boolean> DESCHEDULE = Map.of("RemovePodsViolatingNodeTaints", true,
      "RemovePodsViolatingInterPodAntiAffinity", true, "RemoveDuplicates", false, "LowNodeUtilization", false,
      "RemovePodsViolatingTopologySpreadConstraint", false, "LowNodeLoad", false);

  @Param({"10000", "100000"})
  int pods;

  /** A strategy's name, or {@code all}. */
  @Param({"RemovePodsViolatingNodeTaints", "RemovePodsViolatingInterPodAntiAffinity", "RemoveDuplicates", "LowNodeUtilization",
      "RemovePodsViolatingTopologySpreadConstraint", "LowNodeLoad", "all"})
  String strategy;

  @Param({"false", "true"})
  boolean nodeFit;

  private ClusterSnapshot snapshot;
  private PolicyEvaluator evaluator;
  private Policy policy;

  @Setup(Level.Trial)
  public void setUp() {
    snapshot = SyntheticCluster.withUsage(SyntheticCluster.of(pods, pods / 100));
    String deschedule = String.join(", ", DESCHEDULE.keySet().stream()
        .filter(s -> DESCHEDULE.get(s) && (strategy.equals("all") || strategy.equals(s))).sorted().toList());
    String balance = String.join(", ", DESCHEDULE.keySet().stream()
        .filter(s -> !DESCHEDULE.get(s) && (strategy.equals("all") || strategy.equals(s))).sorted().toList());
    policy = PolicyLoader.parse(POLICY.formatted(nodeFit, deschedule, balance), "balance");
    evaluator = new PolicyEvaluator(policy);
  }

  @Benchmark
  public PassResult balance() {
    return evaluator.balance(snapshot, SyntheticCluster.NOW, new RemovalBudget(policy.limits()), PolicyEvaluator.StrategyRunner.DIRECT);
  }
}
