package io.podsweeper.strategy;

import static io.podsweeper.strategy.UpstreamFixtures.EXTENDED;
import static io.podsweeper.strategy.UpstreamFixtures.HIGH_PRIORITY;
import static io.podsweeper.strategy.UpstreamFixtures.LOW_PRIORITY;
import static io.podsweeper.strategy.UpstreamFixtures.N1;
import static io.podsweeper.strategy.UpstreamFixtures.N2;
import static io.podsweeper.strategy.UpstreamFixtures.N3;
import static io.podsweeper.strategy.UpstreamFixtures.eastN2;
import static io.podsweeper.strategy.UpstreamFixtures.extended;
import static io.podsweeper.strategy.UpstreamFixtures.extendedCapacity;
import static io.podsweeper.strategy.UpstreamFixtures.label;
import static io.podsweeper.strategy.UpstreamFixtures.namespace;
import static io.podsweeper.strategy.UpstreamFixtures.nodeSelector;
import static io.podsweeper.strategy.UpstreamFixtures.p9;
import static io.podsweeper.strategy.UpstreamFixtures.pods;
import static io.podsweeper.strategy.UpstreamFixtures.priority;
import static io.podsweeper.strategy.UpstreamFixtures.rsPods;
import static io.podsweeper.strategy.UpstreamFixtures.taint;
import static io.podsweeper.strategy.UpstreamFixtures.testNode;
import static io.podsweeper.strategy.UpstreamFixtures.testPod;
import static io.podsweeper.strategy.UpstreamFixtures.threeNodes;
import static io.podsweeper.strategy.UpstreamFixtures.tolerates;
import static io.podsweeper.strategy.UpstreamFixtures.unevictable;
import static io.podsweeper.strategy.UpstreamFixtures.westOnly;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.QueriedUsage;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.safety.RemovalBudget;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The descheduler v0.36.0's nodeutilization tables ({@code pkg/framework/plugins/nodeutilization/*_test.go}), case by
 * case, with the same nodes, pods, arguments and harness: the DefaultEvictor with {@code nodeFit: true} (none in
 * TestHighNodeUtilizationWithTaints), the per-node limit TestLow/HighNodeUtilizationWithTaints set to the number of
 * evictions they expect, and each TestLowNodeUtilization case run twice, on requests and on the metrics-server samples
 * of the case ({@code metricsUtilization: {source: KubernetesMetrics}}). Where a case names the pods it lets go
 * ({@code evictedPods}), exactly those go.
 */
class UpstreamNodeUtilizationTableTest {
  private static final String CPU_PODS_30_50 = "thresholds: {cpu: 30, pods: 30}, targetThresholds: {cpu: 50, pods: 50}";

  /** {@code {"n1", 3201, 0, "n2", 401, 0}}: name, millicores, bytes, as BuildNodeMetrics and BuildPodMetrics take them. */
  private static Map<String, Map<String, Long>> samples(Object... triples) {
    Map<String, Map<String, Long>> out = new LinkedHashMap<>();
    for (int i = 0; i < triples.length; i += 3) {
      out.put((String) triples[i], Map.of("cpu", ((Number) triples[i + 1]).longValue(), "memory", ((Number) triples[i + 2]).longValue()));
    }
    return out;
  }

  /** The five PodMetrics most cases have: p1 to p5, 401m each. */
  private static final Map<String, Map<String, Long>> P1_TO_P5 = samples("p1", 401, 0, "p2", 401, 0, "p3", 401, 0, "p4", 401, 0, "p5", 401, 0);

  /** What metrics-server serves for the case: the NodeMetrics, and each pod's PodMetrics with the node it runs on. */
  private static List<NodeUsage> metricsServer(Map<String, Map<String, Long>> nodes, Map<String, Map<String, Long>> pods, PodRecord[] all) {
    List<NodeUsage> out = new ArrayList<>();
    nodes.forEach((node, usage) -> {
      Map<String, Map<String, Long>> onNode = new HashMap<>();
      Stream.of(all).filter(p -> p.nodeName().equals(node) && pods.containsKey(p.name())).forEach(p -> onNode.put(p.key(), pods.get(p.name())));
      out.add(new NodeUsage(node, usage, Passes.NOW, "metrics.k8s.io", onNode));
    });
    return out;
  }

  private static List<String> evictions(PassResult r) {
    return Passes.evicted(r);
  }

  // -------------------------------------------------------------------------------------------------------------
  // TestLowNodeUtilization

  @Nested
  class LowNodeUtilization {
    /**
     * The case on requests, then on the metrics-server samples: {@code expected} and {@code expectedWithMetrics} pods
     * go, exactly {@code evictedPods} when the case names them.
     */
    private void check(String args, List<NodeRecord> nodes, PodRecord[] pods, Map<String, Map<String, Long>> nodeMetrics,
        Map<String, Map<String, Long>> podMetrics, int expected, int expectedWithMetrics, String... evictedPods) {
      String withMetrics = args + ", metricsUtilization: {source: KubernetesMetrics}";
      PassResult onRequests = Passes.run(Passes.policy("{nodeFit: true}", "balance", "LowNodeUtilization", "{" + args + "}"), nodes, pods);
      PassResult onMetrics = Passes.run(Passes.policy("{nodeFit: true}", "balance", "LowNodeUtilization", "{" + withMetrics + "}"),
          metricsServer(nodeMetrics, podMetrics, pods), nodes, pods);
      assertThat(evictions(onRequests)).as("on requests").hasSize(expected);
      assertThat(evictions(onMetrics)).as("with metrics enabled").hasSize(expectedWithMetrics);
      if (evictedPods.length > 0) {
        assertThat(evictions(onRequests)).as("on requests").containsExactlyInAnyOrder(evictedPods);
        assertThat(evictions(onMetrics)).as("with metrics enabled").containsExactlyInAnyOrder(evictedPods);
      }
    }

    private final Map<String, Map<String, Long>> busyN1 = samples(N1, 3201, 0, N2, 401, 0, N3, 11, 0);

    @Test
    @DisplayName("no evictable pods")
    void noEvictablePods() {
      PodRecord[] pods = pods(Stream.of("p1", "p2", "p3", "p4").map(n -> testPod(n, 400, 0, N1, UpstreamFixtures::dsOwner)),
          Stream.of(testPod("p5", 400, 0, N1, UpstreamFixtures::localStorageMirror), testPod("p6", 400, 0, N1, UpstreamFixtures::critical), p9(400)));
      check(CPU_PODS_30_50, threeNodes(), pods, samples(N1, 2401, 1714978816, N2, 401, 1714978816, N3, 10, 1714978816), P1_TO_P5, 0, 0);
    }

    @Test
    @DisplayName("without priorities")
    void withoutPriorities() {
      check(CPU_PODS_30_50, threeNodes(), pods(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5"), unevictable(400, 0, false), Stream.of(p9(400))),
          busyN1, P1_TO_P5, 4, 4);
    }

    @Test
    @DisplayName("without priorities, but excluding namespaces")
    void excludingNamespaces() {
      PodRecord[] pods = pods(Stream.of("p1", "p2", "p3", "p4", "p5").map(n -> testPod(n, 400, 0, N1, UpstreamFixtures::normalOwner,
          namespace("namespace1"))), unevictable(400, 0, false), Stream.of(p9(400)));
      check(CPU_PODS_30_50 + ", evictableNamespaces: {exclude: [namespace1]}", threeNodes(), pods, busyN1, P1_TO_P5, 0, 0);
    }

    /**
     * The case sets {@code evictableNamespaces: {include: [default]}}, which upstream's validation refuses ("only
     * Exclude namespaces can be set") and its plugin ignores (the test builds the plugin without validating): here it
     * is refused as there, and the case runs as the plugin ran, without it. p3-p5 are bare: protected.
     */
    @Test
    @DisplayName("without priorities, but include only default namespace")
    void includeOnlyDefaultNamespace() {
      assertThatThrownBy(() -> Passes.policy("{nodeFit: true}", "balance", "LowNodeUtilization",
          "{" + CPU_PODS_30_50 + ", evictableNamespaces: {include: [default]}}"))
          .isInstanceOf(PolicyException.class).hasMessageContaining("only Exclude namespaces can be set");
      PodRecord[] pods = pods(rsPods(400, 0, "p1", "p2"), Stream.of(testPod("p3", 400, 0, N1, namespace("namespace3")),
          testPod("p4", 400, 0, N1, namespace("namespace4")), testPod("p5", 400, 0, N1, namespace("namespace5"))),
          unevictable(400, 0, true), Stream.of(p9(400)));
      check(CPU_PODS_30_50, threeNodes(), pods, busyN1, P1_TO_P5, 2, 2);
    }

    @Test
    @DisplayName("without priorities stop when cpu capacity is depleted")
    void stopWhenCpuIsDepleted() {
      check(CPU_PODS_30_50, threeNodes(), pods(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5"), unevictable(400, 0, true), Stream.of(p9(400))),
          samples(N1, 3201, 0, N2, 401, 0, N3, 0, 0), P1_TO_P5, 4, 4);
    }

    @Test
    @DisplayName("with priorities")
    void withPriorities() {
      PodRecord[] pods = pods(Stream.of("p1", "p2", "p3", "p4").map(n -> testPod(n, 400, 0, N1, UpstreamFixtures::rsOwner, priority(HIGH_PRIORITY))),
          Stream.of(testPod("p5", 400, 0, N1, UpstreamFixtures::rsOwner, priority(LOW_PRIORITY)),
              testPod("p6", 400, 0, N1, UpstreamFixtures::dsOwner, priority(HIGH_PRIORITY)),
              testPod("p7", 400, 0, N1, UpstreamFixtures::localStorageMirror, priority(LOW_PRIORITY)),
              testPod("p8", 400, 0, N1, UpstreamFixtures::normalOwner, UpstreamFixtures::critical), p9(400)));
      check(CPU_PODS_30_50, threeNodes(), pods, busyN1, P1_TO_P5, 4, 4);
    }

    @Test
    @DisplayName("without priorities evicting best-effort pods only")
    void bestEffortPodsOnly() {
      PodRecord[] pods = pods(UpstreamFixtures.bestEffortButP3(), unevictable(400, 0, true), Stream.of(p9(400)));
      check(CPU_PODS_30_50, threeNodes(), pods, busyN1, P1_TO_P5, 4, 4, "p1", "p2", "p4", "p5");
    }

    private static final String EXTENDED_30_50 = "thresholds: {pods: 30, " + EXTENDED + ": 30}, targetThresholds: {pods: 50, " + EXTENDED + ": 50}";

    @Test
    @DisplayName("with extended resource")
    void withExtendedResource() {
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 9, extendedCapacity(8)), testNode(N2, 4000, 3000, 10, extendedCapacity(8)),
          testNode(N3, 4000, 3000, 10, UpstreamFixtures::unschedulable));
      PodRecord[] pods = pods(Stream.of("p1", "p2", "p3", "p4", "p5").map(n -> testPod(n, 0, 0, N1, UpstreamFixtures::rsOwner, extended(1))),
          Stream.of(testPod("p6", 0, 0, N1, UpstreamFixtures::normalOwner, extended(1)),
              testPod("p7", 0, 0, N1, UpstreamFixtures::localStorageMirror, extended(1)),
              testPod("p8", 0, 0, N1, UpstreamFixtures::normalOwner, extended(1), UpstreamFixtures::critical),
              testPod("p9", 0, 0, N2, UpstreamFixtures::rsOwner, extended(1))));
      // On requests: n2 takes 3 more of its 8 before 50%. metrics-server measures no extended resource: the run
      // decides nothing, as upstream's fails.
      check(EXTENDED_30_50, nodes, pods, busyN1, P1_TO_P5, 3, 0);
    }

    @Test
    @DisplayName("with extended resource in some of nodes")
    void withExtendedResourceInSomeOfNodes() {
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 9, extendedCapacity(8)), testNode(N2, 4000, 3000, 10),
          testNode(N3, 4000, 3000, 10, UpstreamFixtures::unschedulable));
      PodRecord[] pods = {testPod("p1", 0, 0, N1, UpstreamFixtures::rsOwner, extended(1)), testPod("p9", 0, 0, N2, UpstreamFixtures::rsOwner)};
      // n2 has none of the extended resource: it counts as 0% used and has no room for it.
      check(EXTENDED_30_50, nodes, pods, busyN1, P1_TO_P5, 0, 0);
    }

    @Test
    @DisplayName("with extended resource in some of nodes with deviation")
    void withExtendedResourceInSomeOfNodesWithDeviation() {
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 10, extendedCapacity(8)), testNode(N2, 4000, 3000, 10, extendedCapacity(8)),
          testNode(N3, 4000, 3000, 10, UpstreamFixtures::unschedulable));
      PodRecord[] pods = {testPod("p1", 0, 0, N1, UpstreamFixtures::rsOwner, extended(1)), testPod("p2", 0, 0, N2, UpstreamFixtures::rsOwner, extended(7)),
          testPod("p3", 0, 0, N2, UpstreamFixtures::rsOwner), testPod("p8", 0, 0, N3, UpstreamFixtures::rsOwner),
          testPod("p9", 0, 0, N3, UpstreamFixtures::rsOwner)};
      check("thresholds: {pods: 5, " + EXTENDED + ": 10}, targetThresholds: {pods: 5, " + EXTENDED + ": 10}, useDeviationThresholds: true",
          nodes, pods, busyN1, P1_TO_P5, 1, 0);
    }

    @Test
    @DisplayName("without priorities, but only other node is unschedulable")
    void onlyOtherNodeUnschedulable() {
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 9), testNode(N2, 4000, 3000, 10, UpstreamFixtures::unschedulable));
      check(CPU_PODS_30_50, nodes, pods(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5"), unevictable(400, 0, true)),
          samples(N1, 3201, 0, N2, 401, 0), P1_TO_P5, 0, 0);
    }

    private final Map<String, Map<String, Long>> p1ToP3 = samples("p1", 401, 0, "p2", 401, 0, "p3", 401, 0);

    @Test
    @DisplayName("without priorities, but only other node doesn't match pod node selector for p4 and p5")
    void otherNodeDoesNotMatchNodeSelector() {
      PodRecord[] pods = pods(rsPods(400, 0, "p1", "p2", "p3"),
          westOnly(false),
          unevictable(400, 0, true));
      check(CPU_PODS_30_50, eastN2(), pods, samples(N1, 3201, 0, N2, 401, 0), p1ToP3, 3, 3);
    }

    @Test
    @DisplayName("without priorities, but only other node doesn't match pod node affinity for p4 and p5")
    void otherNodeDoesNotMatchNodeAffinity() {
      PodRecord[] pods = pods(rsPods(400, 0, "p1", "p2", "p3"), westOnly(true), unevictable(400, 0, true), Stream.of(p9(0)));
      check(CPU_PODS_30_50, eastN2(), pods, samples(N1, 3201, 0, N2, 401, 0), p1ToP3, 3, 3);
    }

    private static final String DEVIATION_5 = "thresholds: {cpu: 5, pods: 5}, targetThresholds: {cpu: 5, pods: 5}, useDeviationThresholds: true";

    @Test
    @DisplayName("deviation thresholds")
    void deviationThresholds() {
      check(DEVIATION_5, threeNodes(), pods(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5"), unevictable(400, 0, true), Stream.of(p9(400))),
          busyN1, P1_TO_P5, 2, 2);
    }

    @Test
    @DisplayName("deviation thresholds and overevicting memory")
    void deviationThresholdsAndOverevictingMemory() {
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 10), testNode(N2, 4000, 3000, 10),
          testNode(N3, 4000, 3000, 10, UpstreamFixtures::unschedulable));
      PodRecord[] pods = pods(rsPods(400, 375, "p1", "p2", "p3", "p4", "p5"), unevictable(400, 375, true),
          Stream.of(testPod("p9", 400, 3000, N2, UpstreamFixtures::rsOwner)));
      Map<String, Map<String, Long>> podMetrics = samples("p1", 400, 375, "p2", 400, 375, "p3", 400, 375, "p4", 400, 375, "p5", 400, 375,
          "p6", 400, 375, "p7", 400, 375, "p8", 400, 375, "p9", 400, 3000);
      // n2's memory is full: no room for any pod's.
      check(DEVIATION_5, nodes, pods, samples(N1, 4000, 3000, N2, 4000, 3000, N3, 4000, 3000), podMetrics, 0, 0);
    }

    @Test
    @DisplayName("without priorities different evictions for requested and actual resources")
    void differentEvictionsForRequestedAndActual() {
      PodRecord[] pods = pods(rsPods(400, 0, "p1", "p2", "p3"), westOnly(true), unevictable(400, 0, true), Stream.of(p9(0)));
      // Measured at 801m each, two pods bring n1 from 80% to 40%.
      check(CPU_PODS_30_50, eastN2(), pods, samples(N1, 3201, 0, N2, 401, 0), samples("p1", 801, 0, "p2", 801, 0, "p3", 801, 0), 3, 2);
    }

    @Test
    @DisplayName("without priorities with node eviction limit")
    void nodeEvictionLimit() {
      check(CPU_PODS_30_50 + ", evictionLimits: {node: 2}", threeNodes(),
          pods(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5"), unevictable(400, 0, true), Stream.of(p9(400))), busyN1, P1_TO_P5, 2, 2);
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // TestLowNodeUtilizationWithTaints and TestHighNodeUtilizationWithTaints: the harness caps evictions per node at the
  // number the case expects.

  private static final String TAINT_KEY = "key";

  private static NodeRecord taintedN3() {
    return testNode(N3, 1000, 3000, 10, taint(TAINT_KEY, "value", "NoSchedule"));
  }

  private static PodRecord tolerating() {
    return testPod("tolerate_pod", 200, 0, N1, UpstreamFixtures::rsOwner, tolerates(TAINT_KEY, "value"));
  }

  /** {@code pod_<i>_<node>} of 200m, a ReplicaSet's. */
  private static Stream<PodRecord> numbered(int from, int to, String node) {
    return Stream.iterate(from, i -> i <= to, i -> i + 1).map(i -> testPod("pod_" + i + "_" + node, 200, 0, node, UpstreamFixtures::rsOwner));
  }

  private static PassResult withNodeLimit(int limit, String evictor, String plugin, String args, List<NodeRecord> nodes, PodRecord... pods) {
    return Passes.run(Passes.policy("maxNoOfPodsToEvictPerNode: " + limit + "\n", evictor, "balance", plugin, args), nodes, pods);
  }

  @Nested
  class LowNodeUtilizationWithTaints {
    private static final String ARGS = "{thresholds: {pods: 20}, targetThresholds: {pods: 70}}";
    private final NodeRecord n1 = testNode(N1, 2000, 3000, 10);

    @Test
    @DisplayName("No taints")
    void noTaints() {
      List<NodeRecord> nodes = List.of(n1, testNode(N2, 1000, 3000, 10), testNode(N3, 1000, 3000, 10));
      assertThat(withNodeLimit(1, "{nodeFit: true}", "LowNodeUtilization", ARGS, nodes,
          pods(numbered(1, 8, N1), numbered(9, 9, N2))).decisions()).hasSize(1);
    }

    @Test
    @DisplayName("No pod tolerates node taint")
    void noPodTolerates() {
      assertThat(withNodeLimit(0, "{nodeFit: true}", "LowNodeUtilization", ARGS, List.of(n1, taintedN3()),
          pods(numbered(1, 8, N1), numbered(9, 9, N3))).decisions()).isEmpty();
    }

    @Test
    @DisplayName("Pod which tolerates node taint")
    void podTolerates() {
      PassResult r = withNodeLimit(1, "{nodeFit: true}", "LowNodeUtilization", ARGS, List.of(n1, taintedN3()),
          pods(numbered(1, 7, N1), Stream.of(tolerating()), numbered(9, 9, N3)));
      assertThat(evictions(r)).containsExactly("tolerate_pod");
    }

    @Test
    @DisplayName("Pod which tolerates node taint, set maxPodsToEvictTotal(0), should not be expelled")
    void podToleratesButNoEvictionAllowed() {
      // The case's own limits are not passed to the harness; its per-node limit is the 0 evictions it expects.
      assertThat(withNodeLimit(0, "{nodeFit: true}", "LowNodeUtilization", ARGS, List.of(n1, taintedN3()),
          pods(numbered(1, 7, N1), Stream.of(tolerating()), numbered(9, 9, N3))).decisions()).isEmpty();
    }
  }

  @Nested
  class HighNodeUtilizationWithTaints {
    private static final String ARGS = "{thresholds: {cpu: 40}}";
    private final NodeRecord n1 = testNode(N1, 1000, 3000, 10);

    @Test
    @DisplayName("No taints")
    void noTaints() {
      List<NodeRecord> nodes = List.of(n1, testNode(N2, 1000, 3000, 10), testNode(N3, 1000, 3000, 10));
      assertThat(withNodeLimit(1, "{}", "HighNodeUtilization", ARGS, nodes, pods(numbered(1, 3, N1), numbered(4, 4, N2))).decisions())
          .hasSize(1);
    }

    @Test
    @DisplayName("No pod tolerates node taint")
    void noPodTolerates() {
      assertThat(withNodeLimit(0, "{}", "HighNodeUtilization", ARGS, List.of(n1, taintedN3()),
          pods(numbered(1, 1, N1), numbered(2, 2, N3))).decisions()).isEmpty();
    }

    @Test
    @DisplayName("Pod which tolerates node taint")
    void podTolerates() {
      PodRecord[] pods = {testPod("pod_1_n1", 100, 0, N1, UpstreamFixtures::rsOwner), tolerating(),
          testPod("pod_9_n3", 500, 0, N3, UpstreamFixtures::rsOwner)};
      assertThat(evictions(withNodeLimit(1, "{}", "HighNodeUtilization", ARGS, List.of(n1, taintedN3()), pods))).containsExactly("tolerate_pod");
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // TestLowNodeUtilizationWithPrometheusMetrics

  @Nested
  class LowNodeUtilizationWithPrometheusMetrics {
    private static final String QUERY = "instance:node_cpu:rate:sum";
    private static final String PROVIDER = "metricsProviders: [{source: Prometheus, prometheus: {url: \"https://prometheus.monitoring:9090\"}}]\n";

    private PassResult run(String args, Map<String, Double> samples) {
      var e = Passes.policy(PROVIDER, "{nodeFit: true}", "balance", "LowNodeUtilization",
          "{" + args + ", metricsUtilization: {source: Prometheus, prometheus: {query: \"" + QUERY + "\"}}}");
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 9), testNode(N2, 4000, 3000, 10), testNode(N3, 4000, 3000, 10));
      PodRecord[] pods = pods(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5"), unevictable(400, 0, true), Stream.of(p9(400)));
      Map<String, Double> percent = new HashMap<>();
      samples.forEach((node, sample) -> percent.put(node, sample * 100));
      ClusterSnapshot snapshot = ClusterSnapshot.of(List.of(pods), List.of(), nodes).withQueriedUsage(QUERY, new QueriedUsage(percent));
      return e.pass(snapshot, Passes.NOW, new RemovalBudget(e.policy().limits()), true);
    }

    private final Map<String, Double> samples = Map.of(N1, 0.5695757575757561, N2, 0.4245454545454522, N3, 0.20381818181818104);

    @Test
    @DisplayName("with instance:node_cpu:rate:sum query")
    void query() {
      assertThat(run("thresholds: {MetricResource: 30}, targetThresholds: {MetricResource: 50}", samples).decisions()).hasSize(1);
    }

    @Test
    @DisplayName("with instance:node_cpu:rate:sum query with more evictions")
    void queryWithMoreEvictions() {
      assertThat(run("thresholds: {MetricResource: 30}, targetThresholds: {MetricResource: 50}, evictionLimits: {node: 3}", samples)
          .decisions()).hasSize(3);
    }

    @Test
    @DisplayName("with instance:node_cpu:rate:sum query with deviation")
    void queryWithDeviation() {
      assertThat(run("thresholds: {MetricResource: 5}, targetThresholds: {MetricResource: 5}, evictionLimits: {node: 2},"
          + " useDeviationThresholds: true", samples).decisions()).hasSize(2);
    }

    @Test
    @DisplayName("with instance:node_cpu:rate:sum query and deviation thresholds")
    void queryAndDeviationThresholds() {
      assertThat(run("useDeviationThresholds: true, thresholds: {MetricResource: 10}, targetThresholds: {MetricResource: 10}",
          Map.of(N1, 1.0, N2, 0.5, N3, 0.0)).decisions()).hasSize(1);
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // TestHighNodeUtilization

  @Nested
  class HighNodeUtilization {
    private PassResult run(String args, List<NodeRecord> nodes, PodRecord... pods) {
      return Passes.run(Passes.policy("{nodeFit: true}", "balance", "HighNodeUtilization", "{" + args + "}"), nodes, pods);
    }

    private List<NodeRecord> nodes(long cpu, long slotsN1, long slotsN2, boolean n3Unschedulable) {
      return List.of(testNode(N1, cpu, 3000, slotsN1), testNode(N2, cpu, 3000, slotsN2),
          n3Unschedulable ? testNode(N3, cpu, 3000, 10, UpstreamFixtures::unschedulable) : testNode(N3, cpu, 3000, 10));
    }

    private static PodRecord rs(String name, long cpu, String node) {
      return testPod(name, cpu, 0, node, UpstreamFixtures::rsOwner);
    }

    @Test
    @DisplayName("no node below threshold usage")
    void noNodeBelowThreshold() {
      assertThat(run("thresholds: {cpu: 20, pods: 20}", nodes(4000, 10, 10, false), rs("p1", 400, N1), rs("p2", 400, N1), rs("p3", 400, N1),
          rs("p4", 400, N2), rs("p5", 400, N2), rs("p6", 400, N2), rs("p7", 400, N3), rs("p8", 400, N3), rs("p9", 400, N3)).decisions()).isEmpty();
    }

    @Test
    @DisplayName("no evictable pods")
    void noEvictablePods() {
      PodRecord[] pods = {testPod("p1", 400, 0, N1, UpstreamFixtures::localStorageMirror),
          testPod("p2", 400, 0, N1, UpstreamFixtures::normalOwner, UpstreamFixtures::critical), testPod("p3", 400, 0, N2, UpstreamFixtures::dsOwner),
          testPod("p4", 400, 0, N2, UpstreamFixtures::dsOwner), rs("p5", 400, N3), rs("p6", 400, N3), rs("p7", 400, N3), rs("p8", 400, N3)};
      assertThat(run("thresholds: {cpu: 40, pods: 40}", nodes(4000, 9, 10, false), pods).decisions()).isEmpty();
    }

    @Test
    @DisplayName("no node to schedule evicted pods")
    void noNodeToScheduleOn() {
      assertThat(run("thresholds: {cpu: 20, pods: 20}", nodes(4000, 10, 10, true), rs("p1", 400, N1), rs("p2", 400, N2), rs("p3", 400, N3),
          rs("p4", 400, N3), rs("p5", 400, N3)).decisions()).isEmpty();
    }

    @Test
    @DisplayName("without priorities")
    void withoutPriorities() {
      PodRecord[] pods = {rs("p1", 400, N1), testPod("p2", 400, 0, N1, UpstreamFixtures::normalOwner, UpstreamFixtures::critical),
          rs("p3", 400, N2), rs("p4", 400, N2), rs("p5", 400, N2), rs("p6", 400, N2), rs("p7", 400, N3)};
      assertThat(evictions(run("thresholds: {cpu: 30, pods: 30}", nodes(4000, 10, 10, true), pods))).containsExactlyInAnyOrder("p1", "p7");
    }

    @Test
    @DisplayName("without priorities stop when resource capacity is depleted")
    void stopWhenCapacityIsDepleted() {
      assertThat(run("thresholds: {cpu: 30, pods: 30}", nodes(2000, 10, 10, true), rs("p1", 400, N1), rs("p2", 400, N2), rs("p3", 400, N2),
          rs("p4", 400, N2), rs("p5", 400, N2), rs("p6", 400, N3)).decisions()).hasSize(1);
    }

    @Test
    @DisplayName("with priorities")
    void withPriorities() {
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 10), testNode(N2, 2000, 3000, 10),
          testNode(N3, 2000, 3000, 10, UpstreamFixtures::unschedulable));
      PodRecord[] pods = {testPod("p1", 400, 0, N1, UpstreamFixtures::rsOwner, priority(LOW_PRIORITY)),
          testPod("p2", 400, 0, N1, UpstreamFixtures::rsOwner, priority(HIGH_PRIORITY)), rs("p5", 400, N2), rs("p6", 400, N2), rs("p7", 400, N2),
          rs("p8", 400, N2), testPod("p9", 400, 0, N3, UpstreamFixtures::dsOwner)};
      assertThat(evictions(run("thresholds: {cpu: 30}", nodes, pods))).containsExactly("p1");
    }

    @Test
    @DisplayName("without priorities evicting best-effort pods only")
    void bestEffortPodsOnly() {
      List<NodeRecord> nodes = List.of(testNode(N1, 3000, 3000, 10), testNode(N2, 3000, 3000, 5),
          testNode(N3, 3000, 3000, 10, UpstreamFixtures::unschedulable));
      PodRecord[] pods = {testPod("p1", 0, 0, N1, UpstreamFixtures::rsOwner, UpstreamFixtures::bestEffort), rs("p2", 400, N1), rs("p3", 400, N2),
          rs("p4", 400, N2), rs("p5", 400, N2), rs("p6", 400, N2)};
      assertThat(evictions(run("thresholds: {cpu: 30}", nodes, pods))).containsExactly("p1");
    }

    private PodRecord withExtended(String name, long cpu, String node) {
      return testPod(name, cpu, 0, node, UpstreamFixtures::rsOwner, extended(1));
    }

    @Test
    @DisplayName("with extended resource")
    void withExtendedResource() {
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 10, extendedCapacity(8)), testNode(N2, 4000, 3000, 10, extendedCapacity(8)),
          testNode(N3, 4000, 3000, 10, UpstreamFixtures::unschedulable));
      PodRecord[] pods = {withExtended("p1", 100, N1), withExtended("p2", 100, N1), withExtended("p3", 500, N2), withExtended("p4", 500, N2),
          withExtended("p5", 500, N2), withExtended("p6", 500, N2)};
      assertThat(evictions(run("thresholds: {cpu: 20, " + EXTENDED + ": 40}", nodes, pods))).containsExactlyInAnyOrder("p1", "p2");
    }

    @Test
    @DisplayName("with extended resource in some of nodes")
    void withExtendedResourceInSomeOfNodes() {
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 10, extendedCapacity(8)), testNode(N2, 4000, 3000, 10),
          testNode(N3, 4000, 3000, 10, UpstreamFixtures::unschedulable));
      PodRecord[] pods = {withExtended("p1", 100, N1), withExtended("p2", 100, N1), rs("p3", 500, N2), rs("p4", 500, N2), rs("p5", 500, N2),
          rs("p6", 500, N2)};
      // n2 has none of the extended resource: no room for p1 and p2 there.
      assertThat(run("thresholds: {cpu: 40, " + EXTENDED + ": 40}", nodes, pods).decisions()).isEmpty();
    }

    private PodRecord[] p5SelectingWest() {
      return new PodRecord[] {rs("p1", 400, N1), rs("p2", 400, N1), rs("p3", 400, N1), testPod("p4", 400, 0, N1, UpstreamFixtures::dsOwner),
          testPod("p5", 400, 0, N2, UpstreamFixtures::rsOwner, nodeSelector("datacenter", "west"))};
    }

    @Test
    @DisplayName("Other node match pod node selector")
    void otherNodeMatchesNodeSelector() {
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 9, label("datacenter", "west")), testNode(N2, 4000, 3000, 10));
      assertThat(run("thresholds: {cpu: 30, pods: 30}", nodes, p5SelectingWest()).decisions()).hasSize(1);
    }

    @Test
    @DisplayName("Other node does not match pod node selector")
    void otherNodeDoesNotMatchNodeSelector() {
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 9), testNode(N2, 4000, 3000, 10));
      assertThat(run("thresholds: {cpu: 30, pods: 30}", nodes, p5SelectingWest()).decisions()).isEmpty();
    }

    /** The table has this case twice, the same both times. */
    @ParameterizedTest(name = "Other node does not have enough Memory ({0})")
    @CsvSource({"first", "second"})
    void otherNodeDoesNotHaveEnoughMemory(String which) {
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 200, 9), testNode(N2, 4000, 3000, 10));
      PodRecord[] pods = {testPod("p1", 400, 50, N1, UpstreamFixtures::rsOwner), testPod("p2", 400, 50, N1, UpstreamFixtures::rsOwner),
          testPod("p3", 400, 50, N1, UpstreamFixtures::rsOwner), testPod("p4", 400, 50, N1, UpstreamFixtures::dsOwner),
          testPod("p5", 400, 100, N2, UpstreamFixtures::rsOwner)};
      assertThat(run("thresholds: {cpu: 30, pods: 30}", nodes, pods).decisions()).isEmpty();
    }

    @Test
    @DisplayName("with extended resource threshold and no extended resource pods")
    void extendedThresholdWithoutExtendedPods() {
      List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 10, extendedCapacity(10)), testNode(N2, 4000, 3000, 10, extendedCapacity(10)),
          testNode(N3, 4000, 3000, 10, extendedCapacity(10)));
      PodRecord[] pods = {testPod("p1", 100, 0, N1, UpstreamFixtures::rsOwner, extended(3)), testPod("p2", 100, 0, N1, UpstreamFixtures::rsOwner,
          extended(3)), rs("p3", 500, N2), rs("p4", 500, N2), rs("p5", 500, N2), rs("p6", 500, N2)};
      assertThat(run("thresholds: {" + EXTENDED + ": 40}, evictionModes: [OnlyThresholdingResources]", nodes, pods).decisions()).isEmpty();
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // TestValidateLowNodeUtilizationPluginConfig and TestValidateHighNodeUtilizationPluginConfig: each valid one also
  // plans, on the three nodes with the extended resource on one of them only.

  private static final List<NodeRecord> SOME_EXTENDED = List.of(testNode(N1, 4000, 3000, 9, extendedCapacity(8)), testNode(N2, 4000, 3000, 10),
      testNode(N3, 4000, 3000, 10));
  private static final PodRecord[] SOME_PODS = {testPod("p1", 400, 0, N1, UpstreamFixtures::rsOwner, extended(4)),
      testPod("p2", 400, 100, N1, UpstreamFixtures::rsOwner), testPod("p3", 0, 0, N2, UpstreamFixtures::rsOwner)};

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
    "passing invalid thresholds | thresholds: {cpu: 20, memory: 120}, targetThresholds: {cpu: 80, memory: 80} | memory threshold not in [0, 100] range",
    "thresholds and targetThresholds configured different num of resources | thresholds: {cpu: 20, memory: 20},"
        + " targetThresholds: {cpu: 80, memory: 80, pods: 80} | thresholds and targetThresholds configured different resources",
    "thresholds and targetThresholds configured different resources | thresholds: {cpu: 20, memory: 20}, targetThresholds: {cpu: 80, pods: 80}"
        + " | thresholds and targetThresholds configured different resources",
    "thresholds' CPU config value is greater than targetThresholds' | thresholds: {cpu: 90, memory: 20}, targetThresholds: {cpu: 80, memory: 80}"
        + " | thresholds' cpu percentage is greater than targetThresholds'",
    "only thresholds configured extended resource | thresholds: {cpu: 20, memory: 20, example.com/foo: 20}, targetThresholds: {cpu: 80, memory: 80}"
        + " | thresholds and targetThresholds configured different resources",
    "only targetThresholds configured extended resource | thresholds: {cpu: 20, memory: 20}, targetThresholds: {cpu: 80, memory: 80,"
        + " example.com/foo: 80} | thresholds and targetThresholds configured different resources",
    "thresholds and targetThresholds configured different extended resources | thresholds: {cpu: 20, memory: 20, example.com/foo: 20},"
        + " targetThresholds: {cpu: 80, memory: 80, example.com/bar: 80} | thresholds and targetThresholds configured different resources",
    "thresholds' extended resource config value is greater than targetThresholds' | thresholds: {cpu: 20, memory: 20, example.com/foo: 90},"
        + " targetThresholds: {cpu: 80, memory: 80, example.com/foo: 20} | thresholds' example.com/foo percentage is greater than targetThresholds'",
    "passing valid plugin config | thresholds: {cpu: 20, memory: 20}, targetThresholds: {cpu: 80, memory: 80} |",
    "passing valid plugin config with extended resource | thresholds: {cpu: 20, memory: 20, example.com/foo: 20},"
        + " targetThresholds: {cpu: 80, memory: 80, example.com/foo: 80} |",
    "setting both kubernetes metrics source and metricsserver | thresholds: {cpu: 20, memory: 20, example.com/foo: 20}, targetThresholds: {cpu: 80,"
        + " memory: 80, example.com/foo: 80}, metricsUtilization: {metricsServer: true, source: KubernetesMetrics}"
        + " | it is not allowed to set both \"KubernetesMetrics\" source and metricsServer",
    "missing prometheus query | thresholds: {cpu: 20, memory: 20, example.com/foo: 20}, targetThresholds: {cpu: 80, memory: 80, example.com/foo: 80},"
        + " metricsUtilization: {source: Prometheus} | prometheus query is required when metrics source is set to \"Prometheus\"",
    "prometheus set when source set to kubernetes metrics | thresholds: {cpu: 20, memory: 20, example.com/foo: 20}, targetThresholds: {cpu: 80,"
        + " memory: 80, example.com/foo: 80}, metricsUtilization: {source: KubernetesMetrics, prometheus: {}}"
        + " | prometheus configuration is not allowed to set when source is set to \"KubernetesMetrics\"",
  })
  void validatesLowNodeUtilizationArgs(String name, String args, String error) {
    check("LowNodeUtilization", args, error);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
    "valid configuration with CPU and memory | thresholds: {cpu: 80, memory: 90}, evictionModes: [OnlyThresholdingResources] |",
    "valid configuration with extended resource | thresholds: {cpu: 85, example.com/foo: 95}, evictionModes: [OnlyThresholdingResources] |",
    "empty thresholds | thresholds: {} | no resource threshold is configured",
    "threshold below minimum (0%) | thresholds: {cpu: -1} | cpu threshold not in [0, 100] range",
    "threshold above maximum (100%) | thresholds: {memory: 101} | memory threshold not in [0, 100] range",
    "multiple thresholds with one out of range | thresholds: {cpu: 50, memory: 150} | memory threshold not in [0, 100] range",
    "evictableNamespaces with Exclude (allowed) | thresholds: {cpu: 80}, evictableNamespaces: {exclude: [ns1, ns2]} |",
    // Upstream's message: invalid eviction mode InvalidMode; here the value is quoted and the valid one named.
    "invalid eviction mode | thresholds: {cpu: 80}, evictionModes: [InvalidMode] | invalid eviction mode \"InvalidMode\"",
    "missing eviction modes (nil) - should be allowed (treated as empty) | thresholds: {cpu: 80}, evictionModes: null |",
    "empty eviction modes slice - should be allowed | thresholds: {cpu: 80}, evictionModes: [] |",
  })
  void validatesHighNodeUtilizationArgs(String name, String args, String error) {
    check("HighNodeUtilization", args, error);
  }

  /** Refused with {@code error}, or (none given) accepted and planned without failing. */
  private static void check(String plugin, String args, String error) {
    if (error != null) {
      assertThatThrownBy(() -> Passes.policy("{}", "balance", plugin, "{" + args + "}")).isInstanceOf(PolicyException.class)
          .hasMessageContaining(error);
      return;
    }
    PassResult r = Passes.run(Passes.policy("{}", "balance", plugin, "{" + args + "}"), SOME_EXTENDED, SOME_PODS);
    assertThat(r.skipped()).isEmpty();
  }
}
