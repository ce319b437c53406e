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
import static io.podsweeper.strategy.UpstreamFixtures.namespace;
import static io.podsweeper.strategy.UpstreamFixtures.p9;
import static io.podsweeper.strategy.UpstreamFixtures.pods;
import static io.podsweeper.strategy.UpstreamFixtures.priority;
import static io.podsweeper.strategy.UpstreamFixtures.rsPods;
import static io.podsweeper.strategy.UpstreamFixtures.testNode;
import static io.podsweeper.strategy.UpstreamFixtures.testPod;
import static io.podsweeper.strategy.UpstreamFixtures.threeNodes;
import static io.podsweeper.strategy.UpstreamFixtures.unevictable;
import static io.podsweeper.strategy.UpstreamFixtures.westOnly;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.PolicyException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Koordinator v1.8.0's LowNodeLoad table ({@code pkg/descheduler/framework/plugins/loadaware/low_node_load_test.go},
 * TestLowNodeLoad and TestMaxEvictionTotal), case by case, with the same nodes, pods and arguments, and the harness
 * modelled as it is: the DefaultEvictor with empty args (upstream's default protections, no nodeFit of its own, no
 * eviction limits), LowNodeLoad with {@code nodeFit: true} and {@code consecutiveAbnormalities: 1}, and NodeMetrics as
 * its {@code setupNodeMetrics} builds them: each pod's usage its requests, a node's the sum of its pods', so a node
 * without pods is measured idle. The table checks only how many pods go; names are checked where the order is
 * Koordinator's too.
 */
class KoordinatorLowNodeLoadTableTest {
  private static final String CPU_PODS_30_50 = "lowThresholds: {cpu: 30, pods: 30}, highThresholds: {cpu: 50, pods: 50}";

  private static PolicyEvaluator lowNodeLoad(String thresholds) {
    return Passes.nativePolicy("{}", "balance", "LowNodeLoad", "{" + thresholds + ", anomalyCondition: {consecutiveAbnormalities: 1}}");
  }

  /**
   * Koordinator's {@code setupNodeMetrics}: every pod's usage is its requests; a node's usage is the sum of its pods'
   * (a node without pods gets an empty NodeMetric, which Koordinator reads as 0 of everything; here it holds the 0s);
   * each measured now.
   */
  private static List<NodeUsage> nodeMetrics(List<NodeRecord> nodes, List<PodRecord> pods) {
    List<NodeUsage> out = new ArrayList<>();
    for (NodeRecord node : nodes) {
      Map<String, Long> usage = new HashMap<>(Map.of("cpu", 0L, "memory", 0L, EXTENDED, 0L));
      Map<String, Map<String, Long>> podUsage = new HashMap<>();
      for (PodRecord pod : pods) {
        if (pod.nodeName().equals(node.name())) {
          podUsage.put(pod.key(), pod.scheduling().requests());
          pod.scheduling().requests().forEach((r, v) -> usage.merge(r, v, Long::sum));
        }
      }
      out.add(new NodeUsage(node.name(), usage, Passes.NOW, "NodeMetric", podUsage));
    }
    return out;
  }

  private static PassResult run(PolicyEvaluator e, List<NodeRecord> nodes, PodRecord... pods) {
    return Passes.run(e, nodeMetrics(nodes, List.of(pods)), nodes, pods);
  }

  /** p1-p5 on n1 as given, the three unevictable pods (p8 bare), and p9 on n2, all of 400m. */
  private static PodRecord[] withUnevictable(Stream<PodRecord> p1ToP5) {
    return pods(p1ToP5, unevictable(400, 0, false), Stream.of(p9(400)));
  }

  @Test
  @DisplayName("no evictable pods")
  void noEvictablePods() {
    PodRecord[] pods = pods(Stream.of("p1", "p2", "p3", "p4").map(n -> testPod(n, 400, 0, N1, UpstreamFixtures::dsOwner)),
        Stream.of(testPod("p5", 400, 0, N1, UpstreamFixtures::localStorageMirror), testPod("p6", 400, 0, N1, UpstreamFixtures::critical), p9(400)));
    assertThat(run(lowNodeLoad(CPU_PODS_30_50), threeNodes(), pods).decisions()).isEmpty();
  }

  @Test
  @DisplayName("without priorities")
  void withoutPriorities() {
    // n1: 8 of 9 pods, 3200m of 4000m; n2 (1 pod, 400m) takes up to 5 pods and 2000m: 4 go, then n1 is at 4 pods.
    PassResult r = run(lowNodeLoad(CPU_PODS_30_50), threeNodes(), withUnevictable(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5")));
    assertThat(r.decisions()).hasSize(4);
  }

  @Test
  @DisplayName("without priorities, but excluding namespaces")
  void excludingNamespaces() {
    PodRecord[] pods = withUnevictable(Stream.of("p1", "p2", "p3", "p4", "p5").map(n -> testPod(n, 400, 0, N1, namespace("namespace1"))));
    assertThat(run(lowNodeLoad(CPU_PODS_30_50 + ", evictableNamespaces: {exclude: [namespace1]}"), threeNodes(), pods).decisions()).isEmpty();
  }

  @Test
  @DisplayName("without priorities, but include only default namespace")
  void includeOnlyDefaultNamespace() {
    // p3-p5 are bare pods in other namespaces: excluded, and protected anyway.
    PodRecord[] pods = withUnevictable(Stream.of(testPod("p1", 400, 0, N1, UpstreamFixtures::rsOwner), testPod("p2", 400, 0, N1, UpstreamFixtures::rsOwner),
        testPod("p3", 400, 0, N1, namespace("namespace3")), testPod("p4", 400, 0, N1, namespace("namespace4")),
        testPod("p5", 400, 0, N1, namespace("namespace5"))));
    PassResult r = run(lowNodeLoad(CPU_PODS_30_50 + ", evictableNamespaces: {include: [default]}"), threeNodes(), pods);
    assertThat(Passes.evicted(r)).containsExactlyInAnyOrder("p1", "p2");
  }

  @Test
  @DisplayName("without priorities stop when memory capacity is depleted")
  void stopWhenMemoryIsDepleted() {
    // Koordinator always tracks memory, at 100% unless thresholded: n2 (2100 of 3000 bytes) takes 3 pods of 300.
    PodRecord[] pods = pods(rsPods(400, 300, "p1", "p2", "p3", "p4", "p5"), unevictable(400, 300, false),
        Stream.of(testPod("p9", 400, 2100, N2, UpstreamFixtures::rsOwner)));
    assertThat(run(lowNodeLoad(CPU_PODS_30_50), threeNodes(), pods).decisions()).hasSize(3);
  }

  @Test
  @DisplayName("with priorities")
  void withPriorities() {
    PodRecord[] pods = pods(
        Stream.of("p1", "p2", "p3", "p4").map(n -> testPod(n, 400, 0, N1, UpstreamFixtures::rsOwner, priority(HIGH_PRIORITY))),
        Stream.of(testPod("p5", 400, 0, N1, UpstreamFixtures::rsOwner, priority(LOW_PRIORITY)),
            testPod("p6", 400, 0, N1, UpstreamFixtures::dsOwner, priority(HIGH_PRIORITY)),
            testPod("p7", 400, 0, N1, UpstreamFixtures::localStorageMirror, priority(LOW_PRIORITY)),
            testPod("p8", 400, 0, N1, UpstreamFixtures::critical), p9(400)));
    PassResult r = run(lowNodeLoad(CPU_PODS_30_50), threeNodes(), pods);
    assertThat(r.decisions()).hasSize(4);
    assertThat(Passes.evicted(r).get(0)).as("lowest priority first").isEqualTo("p5");
  }

  @Test
  @DisplayName("without priorities evicting best-effort pods only")
  void bestEffortPodsOnly() {
    PodRecord[] pods = withUnevictable(UpstreamFixtures.bestEffortButP3());
    // The table's evictedPods (not checked by its harness): the four BestEffort pods, which go before the Burstable p3.
    assertThat(Passes.evicted(run(lowNodeLoad(CPU_PODS_30_50), threeNodes(), pods))).containsExactlyInAnyOrder("p1", "p2", "p4", "p5");
  }

  @Test
  @DisplayName("with extended resource")
  void withExtendedResource() {
    List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 9, extendedCapacity(8)), testNode(N2, 4000, 3000, 10, extendedCapacity(8)),
        testNode(N3, 4000, 3000, 10, UpstreamFixtures::unschedulable));
    PodRecord[] pods = pods(
        Stream.of("p1", "p2", "p3", "p4", "p5").map(n -> testPod(n, 0, 0, N1, UpstreamFixtures::rsOwner, extended(1))),
        Stream.of(testPod("p6", 0, 0, N1, UpstreamFixtures::normalOwner, extended(1)),
            testPod("p7", 0, 0, N1, UpstreamFixtures::localStorageMirror, extended(1)),
            testPod("p8", 0, 0, N1, extended(1), UpstreamFixtures::critical), testPod("p9", 0, 0, N2, UpstreamFixtures::rsOwner, extended(1))));
    // n2 holds 1 of 8 and may hold 4 (50%): 3 pods go before the extended resource is depleted.
    assertThat(run(lowNodeLoad("lowThresholds: {pods: 30, " + EXTENDED + ": 30}, highThresholds: {pods: 50, " + EXTENDED + ": 50}"), nodes, pods)
        .decisions()).hasSize(3);
  }

  @Test
  @DisplayName("with extended resource in some of nodes")
  void withExtendedResourceInSomeOfNodes() {
    List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 9, extendedCapacity(8)), testNode(N2, 4000, 3000, 10),
        testNode(N3, 4000, 3000, 10, UpstreamFixtures::unschedulable));
    PassResult r = run(lowNodeLoad("lowThresholds: {pods: 30, " + EXTENDED + ": 30}, highThresholds: {pods: 50, " + EXTENDED + ": 50}"), nodes,
        testPod("p1", 0, 0, N1, UpstreamFixtures::rsOwner, extended(1)), testPod("p9", 0, 0, N2, UpstreamFixtures::rsOwner));
    // n2 has none of the extended resource: nothing to move to.
    assertThat(r.decisions()).isEmpty();
  }

  @Test
  @DisplayName("without priorities, but only other node is unschedulable")
  void onlyOtherNodeUnschedulable() {
    List<NodeRecord> nodes = List.of(testNode(N1, 4000, 3000, 9), testNode(N2, 4000, 3000, 10, UpstreamFixtures::unschedulable));
    PodRecord[] pods = pods(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5"), unevictable(400, 0, false));
    assertThat(run(lowNodeLoad(CPU_PODS_30_50), nodes, pods).decisions()).isEmpty();
  }

  @Test
  @DisplayName("without priorities, but only other node doesn't match pod node selector for p4 and p5")
  void otherNodeDoesNotMatchNodeSelector() {
    PodRecord[] pods = pods(rsPods(400, 0, "p1", "p2", "p3"),
        westOnly(false),
        unevictable(400, 0, false));
    assertThat(Passes.evicted(run(lowNodeLoad(CPU_PODS_30_50), eastN2(), pods))).containsExactlyInAnyOrder("p1", "p2", "p3");
    // Koordinator's harness gives n2, which runs no pod, a NodeMetric without any usage, which Koordinator reads as 0 of
    // everything. Podsweeper never guesses a thresholded resource a measurement lacks (docs/migration.md): n2 is skipped.
    List<NodeUsage> literal = nodeMetrics(eastN2(), List.of(pods)).stream()
        .map(u -> u.node().equals(N2) ? new NodeUsage(N2, Map.of(), u.measuredAt(), u.source(), Map.of()) : u).toList();
    PassResult r = Passes.run(lowNodeLoad(CPU_PODS_30_50), literal, eastN2(), pods);
    assertThat(r.decisions()).isEmpty();
    assertThat(r.notes()).contains("p/LowNodeLoad: node n2 skipped: its NodeMetric measurement has no cpu");
  }

  @Test
  @DisplayName("without priorities, but only other node doesn't match pod node affinity for p4 and p5")
  void otherNodeDoesNotMatchNodeAffinity() {
    PodRecord[] pods = pods(rsPods(400, 0, "p1", "p2", "p3"),
        westOnly(true),
        unevictable(400, 0, false), Stream.of(testPod("p9", 0, 0, N2, UpstreamFixtures::rsOwner)));
    assertThat(Passes.evicted(run(lowNodeLoad(CPU_PODS_30_50), eastN2(), pods))).containsExactlyInAnyOrder("p1", "p2", "p3");
  }

  @Test
  @DisplayName("deviation thresholds")
  void deviationThresholds() {
    PassResult r = run(lowNodeLoad("lowThresholds: {cpu: 5, pods: 5}, highThresholds: {cpu: 5, pods: 5}, useDeviationThresholds: true"),
        threeNodes(), withUnevictable(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5")));
    assertThat(r.decisions()).hasSize(2);
  }

  /** p1, p2 (Prod by their QoS) and p3-p5 (labelled koord-batch, or Prod as given) on n1, the unevictable three, p9 on n2. */
  private static PodRecord[] prodAndBatch(String... batch) {
    List<String> batchNames = List.of(batch);
    return withUnevictable(Stream.of("p1", "p2", "p3", "p4", "p5").map(n -> testPod(n, 400, 0, N1, UpstreamFixtures::rsOwner,
        p -> {
          if (batchNames.contains(n)) {
            p.builder.label(LowNodeLoad.PRIORITY_CLASS_LABEL, "koord-batch");
          }
        })));
  }

  @Test
  @DisplayName("node && prod thresholds, node under thresholds, but prod over thresholds")
  void prodOverWhileNodeUnder() {
    PassResult r = run(lowNodeLoad("lowThresholds: {cpu: 30, pods: 30}, highThresholds: {cpu: 90, pods: 90},"
        + " prodLowThresholds: {cpu: 20, pods: 20}, prodHighThresholds: {cpu: 40, pods: 40}"), threeNodes(), prodAndBatch("p3", "p4", "p5"));
    assertThat(r.decisions()).hasSize(2);
  }

  @Test
  @DisplayName("both node and prod usage is higher than thresholds, only node usage will be evicted")
  void nodeAndProdOverOnlyNodeRound() {
    PassResult r = run(lowNodeLoad("lowThresholds: {cpu: 30, pods: 30}, highThresholds: {cpu: 70, pods: 80},"
        + " prodLowThresholds: {cpu: 20, pods: 20}, prodHighThresholds: {cpu: 40, pods: 40}"), threeNodes(), prodAndBatch("p4", "p5"));
    assertThat(r.decisions()).hasSize(1);
  }

  @Test
  @DisplayName("support reschedule prod pod only")
  void prodPodsOnly() {
    PassResult r = run(lowNodeLoad("lowThresholds: {cpu: 0, pods: 0}, highThresholds: {cpu: 100, pods: 100},"
        + " prodLowThresholds: {cpu: 30, pods: 30}, prodHighThresholds: {cpu: 50, pods: 50}"), threeNodes(), prodAndBatch());
    assertThat(r.decisions()).hasSize(4);
  }

  /** Three nodes of 20 pod slots, none unschedulable. */
  private static List<NodeRecord> twentySlots(String... names) {
    return Stream.of(names).map(n -> testNode(n, 4000, 3000, 20)).toList();
  }

  @Test
  @DisplayName("both low resource used by high node, prod pods don`t have enough resource to rebalance")
  void bothLowNodesShared() {
    PodRecord[] pods = pods(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5", "p16", "p17"), unevictable(400, 0, false),
        Stream.of(p9(400)),
        Stream.of("p10", "p11", "p12", "p13", "p14", "p15").map(n -> testPod(n, 400, 0, N3, UpstreamFixtures::rsOwner)));
    PassResult r = run(lowNodeLoad("lowThresholds: {cpu: 30, pods: 50}, highThresholds: {cpu: 60, pods: 80},"
        + " prodLowThresholds: {cpu: 20, pods: 30}, prodHighThresholds: {cpu: 30, pods: 50}"), twentySlots(N1, N2, N3), pods);
    assertThat(r.decisions()).hasSize(5);
  }

  @Test
  @DisplayName("node is always appropriately for node usage, prod pod rebalance successful")
  void prodRebalanceWithDeviation() {
    PodRecord[] pods = pods(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5"), unevictable(400, 0, false),
        Stream.of(p9(400), testPod("p10", 400, 0, N3, UpstreamFixtures::rsOwner),
            testPod("p11", 400, 0, N3, UpstreamFixtures::rsOwner)));
    PassResult r = run(lowNodeLoad("useDeviationThresholds: true, lowThresholds: {cpu: 0, pods: 0}, highThresholds: {cpu: 100, pods: 100},"
        + " prodLowThresholds: {cpu: 10, pods: 10}, prodHighThresholds: {cpu: 10, pods: 10}"), twentySlots(N1, N2, N3), pods);
    assertThat(r.decisions()).hasSize(3);
  }

  @Test
  @DisplayName("stop prod pod eviction when the node recovers to normal.")
  void prodEvictionStopsWhenNormal() {
    PassResult r = run(lowNodeLoad("lowThresholds: {cpu: 0, pods: 0}, highThresholds: {cpu: 100, pods: 100},"
        + " prodLowThresholds: {cpu: 60, pods: 60}, prodHighThresholds: {cpu: 70, pods: 70}"), twentySlots(N1, N2),
        withUnevictable(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5")));
    assertThat(r.decisions()).hasSize(1);
  }

  /** Test_filterNodes' "invalid selector": Koordinator fails the node pool's run; Podsweeper refuses the policy. */
  @Test
  @DisplayName("Test_filterNodes: invalid selector")
  void invalidNodeSelector() {
    assertThatThrownBy(() -> lowNodeLoad(CPU_PODS_30_50 + ", nodeSelector: {matchExpressions: [{key: test, operator: non-exist-operator}]}"))
        .isInstanceOf(PolicyException.class).hasMessageContaining("nodeSelector.matchExpressions[0].operator");
  }

  @Test
  @DisplayName("TestMaxEvictionTotal: maxPodsToEvictTotal")
  void maxEvictionTotal() {
    var limited = Passes.nativePolicy("limits: {maxTotal: 1}\n", "{}", "balance", "LowNodeLoad",
        "{" + CPU_PODS_30_50 + ", anomalyCondition: {consecutiveAbnormalities: 1}}");
    assertThat(run(limited, threeNodes(), withUnevictable(rsPods(400, 0, "p1", "p2", "p3", "p4", "p5"))).decisions()).hasSize(1);
  }
}
