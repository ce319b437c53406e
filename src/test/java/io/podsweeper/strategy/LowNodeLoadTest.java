package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.strategy.Passes.NOW;
import static io.podsweeper.strategy.Passes.evicted;
import static io.podsweeper.strategy.Passes.nativePolicy;
import static io.podsweeper.strategy.Passes.node;
import static io.podsweeper.strategy.Passes.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Taint;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Koordinator's LowNodeLoad on snapshots: nodes of 4 cores and 16 GiB, "hot" measured at 90% cpu, "cold" at 10%,
 * "warm" at 60%; every node at 25% memory; thresholds low 30% / high 80% for both.
 */
class LowNodeLoadTest {
  private static final String THRESHOLDS = "lowThresholds: {cpu: 30, memory: 30}, highThresholds: {cpu: 80, memory: 80}";
  private static final List<NodeRecord> NODES = List.of(node("cold"), node("hot"), node("warm"));

  /** LowNodeLoad acting on the first overloaded pass, plus {@code more} args. */
  private static PolicyEvaluator lowNodeLoad(String more) {
    return nativePolicy("{}", "balance", "LowNodeLoad", "{" + THRESHOLDS + ", anomalyCondition: {consecutiveAbnormalities: 1}" + more + "}");
  }

  /** A NodeMetric of {@code age} with the node at {@code cpu} millicores and 4 GiB, and its pods' cpu (1 GiB each). */
  private static NodeUsage measured(String node, long cpu, Duration age, Map<String, Long> podCpu) {
    Map<String, Map<String, Long>> pods = new HashMap<>();
    podCpu.forEach((pod, millis) -> pods.put("default/" + pod, Map.of("cpu", millis, "memory", 1L << 30)));
    return new NodeUsage(node, Map.of("cpu", cpu, "memory", 4L << 30), NOW.minus(age), "NodeMetric", pods);
  }

  private static List<NodeUsage> usage(Duration hotAge, Map<String, Long> hotPods) {
    return List.of(measured("cold", 400, Duration.ofSeconds(30), Map.of()), measured("hot", 3600, hotAge, hotPods),
        measured("warm", 2400, Duration.ofSeconds(30), Map.of()));
  }

  private static final Map<String, Long> HOT_PODS = Map.of("big", 1200L, "mid", 800L, "small", 300L);

  /** Three pods on hot (two of priority 100, one of 0), one on warm; shared with PrometheusUtilizationTest. */
  static PodRecord[] hotPods() {
    return new PodRecord[] {
      pod("big").on("hot").priority(100).build(),
      pod("mid").on("hot").priority(100).build(),
      pod("small").on("hot").priority(0).build(),
      pod("elsewhere").on("warm").priority(0).build()};
  }

  @Test
  void anOverloadedNodeSendsPodsToAnUnderloadedOneUntilBelowItsHighThreshold() {
    PassResult r = run(lowNodeLoad(""), usage(Duration.ofSeconds(30), HOT_PODS), NODES, hotPods());
    // Lowest priority first, then the largest measured usage: small (90% -> 82.5%), big (-> 52.5%, below 80%: done).
    assertThat(evicted(r)).containsExactly("small", "big");
    assertThat(r.decisions().get(0).reason()).isEqualTo("node hot is overloaded (cpu 90% > 80%, memory 25% vs 80%;"
        + " measured by NodeMetric at 2026-01-01T23:59:30Z); moving to underloaded cold");
    assertThat(r.decisions()).allSatisfy(d -> assertThat(d.strategy()).isEqualTo("LowNodeLoad"));
  }

  @Test
  void podsGoneSinceTheMeasurementNoLongerLoadTheNode() {
    // big (1200m) was measured on hot but has left since: hot is at 60%, not overloaded; nothing more moves.
    PodRecord[] withoutBig = {pod("mid").on("hot").build(), pod("small").on("hot").build()};
    PassResult r = run(lowNodeLoad(""), usage(Duration.ZERO, HOT_PODS), NODES, withoutBig);
    assertThat(r.decisions()).isEmpty();
    assertThat(r.notes()).anySatisfy(n -> assertThat(n).contains("no node is above its target"));
  }

  @Test
  void aStaleMeasurementTakesTheNodeOutOfThePass() {
    // 180 s is nodeMetricExpirationSeconds' default: a measurement that old is stale, as Koordinator has it.
    PassResult stale = run(lowNodeLoad(""), usage(Duration.ofSeconds(180), HOT_PODS), NODES, hotPods());
    assertThat(stale.decisions()).isEmpty();
    assertThat(stale.notes()).contains("p/LowNodeLoad: node hot skipped: its NodeMetric measurement of 2026-01-01T23:57:00Z is 180s old,"
        + " not newer than nodeMetricExpirationSeconds 180");
    assertThat(evicted(run(lowNodeLoad(""), usage(Duration.ofSeconds(179), HOT_PODS), NODES, hotPods()))).isNotEmpty();
    assertThat(evicted(run(lowNodeLoad(", nodeMetricExpirationSeconds: 600"), usage(Duration.ofSeconds(180), HOT_PODS), NODES, hotPods())))
        .isNotEmpty();
  }

  @Test
  void aNodeWithoutMeasurementTakesNoPartNeitherAsSourceNorAsDestination() {
    PassResult noHot = run(lowNodeLoad(""), usage(Duration.ofSeconds(30), HOT_PODS).stream().filter(u -> !u.node().equals("hot")).toList(),
        NODES, hotPods());
    assertThat(noHot.decisions()).isEmpty();
    assertThat(noHot.notes()).contains("p/LowNodeLoad: node hot skipped: no measured usage (no NodeMetric or metrics.k8s.io measurement)");
    // Without the cold node's measurement nothing is known to be underloaded: nothing moves.
    PassResult noCold = run(lowNodeLoad(""), usage(Duration.ofSeconds(30), HOT_PODS).stream().filter(u -> !u.node().equals("cold")).toList(),
        NODES, hotPods());
    assertThat(noCold.decisions()).isEmpty();
    assertThat(noCold.notes()).anySatisfy(n -> assertThat(n).contains("no node is underutilized (cpu <= 30%, memory <= 30%)"));
    // A measurement without memory does not say the node is idle in memory.
    NodeUsage cpuOnly = new NodeUsage("cold", Map.of("cpu", 400L), NOW, "metrics.k8s.io", Map.of());
    PassResult partial = run(lowNodeLoad(""), List.of(cpuOnly, measured("hot", 3600, Duration.ZERO, HOT_PODS)), NODES, hotPods());
    assertThat(partial.decisions()).isEmpty();
    assertThat(partial.notes()).contains("p/LowNodeLoad: node cold skipped: its metrics.k8s.io measurement has no memory");
  }

  @Test
  void withoutAnUnderloadedNodeOrEnoughOfThemNothingMoves() {
    List<NodeUsage> noneCold = List.of(measured("cold", 2000, Duration.ZERO, Map.of()), measured("hot", 3600, Duration.ZERO, HOT_PODS));
    PassResult r = run(lowNodeLoad(""), noneCold, NODES, hotPods());
    assertThat(r.decisions()).isEmpty();
    assertThat(r.notes()).anySatisfy(n -> assertThat(n).contains("no node is underutilized"));
    PassResult few = run(lowNodeLoad(", numberOfNodes: 1"), usage(Duration.ZERO, HOT_PODS), NODES, hotPods());
    assertThat(few.decisions()).isEmpty();
    assertThat(few.notes()).contains("p/LowNodeLoad: 1 underutilized node(s), not more than numberOfNodes 1");
  }

  @Test
  void onlyEvictableNamespacesAndSelectedPodsMove() {
    PodRecord[] pods = {
      pod("big").on("hot").ns("shop").label("tier", "batch").build(),
      pod("mid").on("hot").ns("kube-system").label("tier", "batch").build(),
      pod("small").on("hot").ns("shop").label("tier", "web").build()};
    Map<String, Map<String, Long>> podUsage = Map.of("shop/big", Map.of("cpu", 1200L, "memory", 1L << 30),
        "kube-system/mid", Map.of("cpu", 2000L, "memory", 1L << 30), "shop/small", Map.of("cpu", 300L, "memory", 1L << 30));
    List<NodeUsage> usage = List.of(measured("cold", 400, Duration.ZERO, Map.of()),
        new NodeUsage("hot", Map.of("cpu", 3600L, "memory", 4L << 30), NOW, "NodeMetric", podUsage));
    assertThat(evicted(run(lowNodeLoad(""), usage, NODES, pods))).containsExactly("mid");
    assertThat(evicted(run(lowNodeLoad(", evictableNamespaces: {exclude: [kube-system]}"), usage, NODES, pods))).containsExactly("big");
    assertThat(evicted(run(lowNodeLoad(", evictableNamespaces: {include: [shop]}, podSelectors: [{name: web, selector: {matchLabels: {tier: web}}}]"),
        usage, NODES, pods))).containsExactly("small");
  }

  @Test
  void deviationThresholdsAreDistancesFromTheAverage() {
    // Average cpu (10 + 90 + 60) / 3 = 53.3%: underloaded below 33.3%, overloaded above 73.3%.
    var e = nativePolicy("{}", "balance", "LowNodeLoad", "{useDeviationThresholds: true, lowThresholds: {cpu: 20},"
        + " highThresholds: {cpu: 20}, anomalyCondition: {consecutiveAbnormalities: 1}}");
    PassResult r = run(e, usage(Duration.ZERO, HOT_PODS), NODES, hotPods());
    // small (90% -> 82.5%), big (-> 52.5%, below 73.3%: done).
    assertThat(evicted(r)).containsExactly("small", "big");
    assertThat(r.decisions().get(0).reason()).startsWith("node hot is overloaded (cpu 90% > 73%;");
  }

  @Test
  void theEvictorAndNodeFitKeepPodsInPlace() {
    PodRecord protectedPod = pod("small").on("hot").priority(0).annotation("podsweeper.io/protect", "true").build();
    PodRecord bare = pod("big").on("hot").priority(100).bare().build();
    PodRecord unmeasured = pod("unmeasured").on("hot").priority(100).requests("cpu", 500).build();
    PodRecord mid = pod("mid").on("hot").priority(100).build();
    List<NodeUsage> usage = usage(Duration.ZERO, HOT_PODS);
    // The protected and the bare pod stay; nodeFit (the default) keeps the pod whose usage is not measured.
    assertThat(evicted(run(lowNodeLoad(""), usage, NODES, protectedPod, bare, unmeasured, mid))).containsExactly("mid");
    // Without nodeFit it moves, counted by its requests: 90% -> 77.5%, done.
    List<NodeUsage> withoutMid = List.of(usage.get(0), measured("hot", 3600, Duration.ZERO, Map.of("big", 1200L, "small", 300L)));
    assertThat(evicted(run(lowNodeLoad(", nodeFit: false"), withoutMid, NODES, protectedPod, bare, unmeasured))).containsExactly("unmeasured");
    // nodeFit: the only underloaded node has a taint the pods do not tolerate.
    List<NodeRecord> tainted = List.of(node("cold", Map.of(), List.of(new Taint("dedicated", "gpu", "NoSchedule"))), node("hot"), node("warm"));
    assertThat(evicted(run(lowNodeLoad(""), usage, tainted, hotPods()))).isEmpty();
    // nodeFit: a pod that would push the destination over its high threshold (10% + 75% > 80%) stays.
    PodRecord huge = pod("huge").on("hot").build();
    NodeUsage hot = new NodeUsage("hot", Map.of("cpu", 3600L, "memory", 4L << 30), NOW, "NodeMetric",
        Map.of("default/huge", Map.of("cpu", 3000L, "memory", 0L)));
    assertThat(evicted(run(lowNodeLoad(""), List.of(usage.get(0), hot), NODES, huge))).isEmpty();
  }

  @Test
  void aNodeMustStayOverloadedForMoreThanConsecutiveAbnormalitiesPasses() {
    var e = nativePolicy("{}", "balance", "LowNodeLoad", "{" + THRESHOLDS + ", anomalyCondition: {consecutiveAbnormalities: 2}}");
    List<NodeUsage> usage = usage(Duration.ZERO, HOT_PODS);
    PassResult first = run(e, usage, NODES, hotPods());
    assertThat(first.decisions()).isEmpty();
    assertThat(first.notes()).contains("p/LowNodeLoad: node hot is overloaded (cpu 90% > 80%, memory 25% vs 80%) in 1 consecutive pass(es);"
        + " anomalyCondition.consecutiveAbnormalities 2 acts after more than that");
    assertThat(run(e, usage, NODES, hotPods()).decisions()).isEmpty();
    assertThat(evicted(run(e, usage, NODES, hotPods()))).containsExactly("small", "big");
    // Acted on: it counts from zero again; and a pass that measures it below its high thresholds ends the count.
    assertThat(run(e, usage, NODES, hotPods()).decisions()).isEmpty();
    assertThat(run(e, List.of(usage.get(0), measured("hot", 2000, Duration.ZERO, HOT_PODS)), NODES, hotPods()).decisions()).isEmpty();
    assertThat(run(e, usage, NODES, hotPods()).decisions()).isEmpty();
    assertThat(run(e, usage, NODES, hotPods()).decisions()).isEmpty();
    assertThat(run(e, usage, NODES, hotPods()).decisions()).isNotEmpty();
    // Koordinator's default: more than 5 passes.
    var byDefault = nativePolicy("{}", "balance", "LowNodeLoad", "{" + THRESHOLDS + "}");
    for (int pass = 1; pass <= 5; pass++) {
      assertThat(run(byDefault, usage, NODES, hotPods()).decisions()).as("pass " + pass).isEmpty();
    }
    assertThat(run(byDefault, usage, NODES, hotPods()).decisions()).isNotEmpty();
  }

  @Test
  void aCountNotContinuedWithinDetectorCacheTimeoutIsForgotten() {
    var e = nativePolicy("{}", "balance", "LowNodeLoad", "{" + THRESHOLDS + ", anomalyCondition: {consecutiveAbnormalities: 2},"
        + " detectorCacheTimeout: 1m}");
    List<NodeUsage> usage = usage(Duration.ZERO, HOT_PODS);
    Passes.runAt(e, NOW.minusSeconds(120), usage, NODES, hotPods());
    // 90 s later: the count of 1 is forgotten, this pass counts 1, the next 2: still not more than 2.
    assertThat(Passes.runAt(e, NOW.minusSeconds(30), usage, NODES, hotPods()).decisions()).isEmpty();
    PassResult r = run(e, usage, NODES, hotPods());
    assertThat(r.decisions()).isEmpty();
    assertThat(r.notes()).anySatisfy(n -> assertThat(n).contains("in 2 consecutive pass(es)"));
  }

  @Test
  void aPausedLowNodeLoadDoesNothing() {
    PassResult r = run(lowNodeLoad(", paused: true"), usage(Duration.ZERO, HOT_PODS), NODES, hotPods());
    assertThat(r.decisions()).isEmpty();
    assertThat(r.notes()).containsExactly("p/LowNodeLoad: paused");
  }

  @Test
  void onlyNodesMatchingTheNodeSelectorTakePart() {
    List<NodeRecord> labelled = List.of(node("cold", Map.of("pool", "a"), List.of()), node("hot", Map.of("pool", "b"), List.of()));
    assertThat(evicted(run(lowNodeLoad(", nodeSelector: {matchLabels: {pool: b}}"), usage(Duration.ZERO, HOT_PODS), labelled, hotPods())))
        .isEmpty();
    assertThat(evicted(run(lowNodeLoad(", nodeSelector: {matchExpressions: [{key: pool, operator: In, values: [a, b]}]}"),
        usage(Duration.ZERO, HOT_PODS), labelled, hotPods()))).isNotEmpty();
  }

  @Test
  void argumentsPodsweeperDoesNotImplementAreRefusedByName() {
    for (String[] bad : new String[][] {
      {"dryRun: true", "dryRun: not supported per plugin: set dryRun at the top level"},
      {"nodePools: [{name: a}]", "nodePools: not supported: give each node pool a profile of its own"},
      {"prodHighThresholds: {cpu: 50}", "prodLowThresholds config is not valid: no resource threshold is configured"},
      {"prodLowThresholds: {cpu: 20}, prodHighThresholds: {memory: 50}", "prodLowThresholds and prodHighThresholds configured different"},
      {"prodLowThresholds: {cpu: 20}, prodHighThresholds: {cpu: 90}", "prodHighThresholds.cpu: prodHighThresholds' cpu percentage is greater"},
      {"anomalyCondition: {consecutiveAbnormalities: 3, timeout: 1m}", "anomalyCondition.timeout: not supported"},
      {"anomalyCondition: {consecutiveNormalities: 3}", "anomalyCondition.consecutiveNormalities: not supported"},
      {"resourceWeights: {cpus: 2}", "resourceWeights.cpus: unknown resource \"cpus\""},
      {"evictableNamespaces: {include: [a], exclude: [b]}", "only one of Include/Exclude namespaces can be set"},
      {"nodeMetricExpirationSeconds: 0", "nodeMetricExpirationSeconds: must be between 1"},
      {"anomalyDetectionThresholds: {}", "anomalyDetectionThresholds: unknown field"}}) {
      assertThatThrownBy(() -> nativePolicy("{}", "balance", "LowNodeLoad", "{" + THRESHOLDS + ", " + bad[0] + "}"))
          .as(bad[0]).isInstanceOf(PolicyException.class).hasMessageContaining(bad[1]);
    }
    for (String[] bad : new String[][] {
      {"lowThresholds: {cpu: 90}, highThresholds: {cpu: 80}", "lowThresholds' cpu percentage is greater than highThresholds'"},
      {"lowThresholds: {cpu: 10}, highThresholds: {memory: 80}", "lowThresholds and highThresholds configured different resources"},
      {"lowThresholds: {gpu: 10}, highThresholds: {gpu: 80}", "lowThresholds.gpu: unknown resource \"gpu\" (cpu, memory,"},
      {"highThresholds: {cpu: 80}", "lowThresholds config is not valid: no resource threshold is configured"}}) {
      assertThatThrownBy(() -> nativePolicy("{}", "balance", "LowNodeLoad", "{" + bad[0] + "}"))
          .as(bad[0]).isInstanceOf(PolicyException.class).hasMessageContaining(bad[1]);
    }
    assertThatThrownBy(() -> nativePolicy("{}", "deschedule", "LowNodeLoad", "{" + THRESHOLDS + "}"))
        .hasMessageContaining("LowNodeLoad is a balance plugin");
    // Not the descheduler's plugin: a DeschedulerPolicy naming it is refused, as upstream would.
    assertThatThrownBy(() -> Passes.policy("{}", "balance", "LowNodeLoad", "{" + THRESHOLDS + "}"))
        .hasMessageContaining("LowNodeLoad is Koordinator's plugin, not the descheduler's");
  }

  /** A Koordinator configuration running LowNodeLoad with the MigrationController's {@code migrationArgs}. */
  private static io.podsweeper.policy.Policy koordinator(String migrationArgs) {
    return PolicyLoader.parse("""
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerConfiguration
        profiles:
          - name: koord
            plugins:
              balance: {enabled: [{name: LowNodeLoad}]}
            pluginConfig:
              - name: MigrationController
                args: %s
              - name: LowNodeLoad
                args:
                  apiVersion: descheduler/v1alpha2
                  kind: LowNodeLoadArgs
                  lowThresholds: {cpu: 30, memory: 30}
                  highThresholds: {cpu: 80, memory: 80}
                  anomalyCondition: {consecutiveAbnormalities: 1}
        """.formatted(migrationArgs), "koordinator");
  }

  @Test
  void koordinatorConfigurationsReadWithTheMigrationControllersNamespaces() {
    var policy = koordinator("{namespaces: {exclude: [kube-system]}, skipCheckExpectedReplicas: true}");
    var args = (io.podsweeper.policy.LowNodeLoadArgs) policy.profiles().get(0).balance().get(0);
    assertThat(args.namespaces().exclude()).containsExactly("kube-system");
    assertThat(args.nodeFit()).isTrue();
    assertThat(args.nodeMetricExpiration()).isEqualTo(Duration.ofSeconds(180));
    assertThat(args.resourceWeights()).isEqualTo(Map.of("cpu", 1L, "memory", 1L));
    assertThat(evicted(run(new PolicyEvaluator(policy), usage(Duration.ZERO, HOT_PODS), NODES, hotPods()))).containsExactly("small", "big");
  }

  /** Koordinator's FilterPodWithMaxEvictionCost: a pod of eviction cost 2147483647 is never evicted. */
  @Test
  void koordinatorNeverEvictsAPodOfTheMaximumEvictionCost() {
    PodRecord[] pods = hotPods();
    pods[2] = pod("small").on("hot").priority(0).annotation("scheduling.koordinator.sh/eviction-cost", "2147483647").build();
    PassResult r = run(new PolicyEvaluator(koordinator("{skipCheckExpectedReplicas: true}")), usage(Duration.ZERO, HOT_PODS), NODES, pods);
    // small stays: the largest, big (90% -> 60%), is enough.
    assertThat(evicted(r)).containsExactly("big");
    // Only Koordinator's MigrationController has the filter: the upstream DefaultEvictor evicts small first.
    assertThat(evicted(run(lowNodeLoad(""), usage(Duration.ZERO, HOT_PODS), NODES, pods))).containsExactly("small", "big");
  }

  /**
   * Koordinator's expected-replicas check (unless skipCheckExpectedReplicas): the single replica of a workload, or a
   * pod whose owner has no replica count (a Job), is not migrated. Here each hot pod is its ReplicaSet's only one but
   * big, which has a sibling running elsewhere.
   */
  @Test
  void koordinatorDoesNotMigrateTheSingleReplicaOfAWorkload() {
    PodRecord[] pods = {
      pod("big").on("hot").priority(100).ownedBy("ReplicaSet", "web").build(),
      pod("mid").on("hot").priority(100).ownedBy("Job", "batch").build(),
      pod("small").on("hot").priority(0).build(),
      pod("big-sibling").on("warm").priority(0).ownedBy("ReplicaSet", "web").build()};
    assertThat(evicted(run(new PolicyEvaluator(koordinator("{}")), usage(Duration.ZERO, HOT_PODS), NODES, pods))).containsExactly("big");
    assertThat(evicted(run(new PolicyEvaluator(koordinator("{skipCheckExpectedReplicas: true}")), usage(Duration.ZERO, HOT_PODS), NODES,
        pods))).containsExactly("small", "big");
  }

  /** Nodes of 10 pod slots and 10 example.com/foo; cpu and memory as the other nodes. */
  private static NodeRecord slotted(String name) {
    return new NodeRecord(name, Map.of(), true, false, List.of(),
        Map.of("cpu", 4000L, "memory", 16L << 30, "pods", 10L, "example.com/foo", 10L));
  }

  private static final List<NodeRecord> SLOTTED = List.of(slotted("cold"), slotted("hot"));

  /** A measurement of {@code node} with each of {@code pods} using {@code foo} example.com/foo and 100m. */
  private static NodeUsage withFoo(String node, Map<String, Long> foo) {
    Map<String, Map<String, Long>> pods = new HashMap<>();
    foo.forEach((pod, n) -> pods.put("default/" + pod, Map.of("cpu", 100L, "memory", 1L << 20, "example.com/foo", n)));
    long total = foo.values().stream().mapToLong(Long::longValue).sum();
    return new NodeUsage(node, Map.of("cpu", 1000L, "memory", 1L << 30, "example.com/foo", total), NOW, "NodeMetric", pods);
  }

  @Test
  void aPodsThresholdCountsThePodsOnTheNode() {
    Map<String, Long> six = new java.util.LinkedHashMap<>();
    PodRecord[] pods = new PodRecord[6];
    for (int i = 0; i < 6; i++) {
      six.put("p" + i, 0L);
      pods[i] = pod("p" + i).on("hot").build();
    }
    List<NodeUsage> usage = List.of(withFoo("cold", Map.of()), withFoo("hot", six));
    var e = nativePolicy("{}", "balance", "LowNodeLoad",
        "{lowThresholds: {pods: 20}, highThresholds: {pods: 40}, anomalyCondition: {consecutiveAbnormalities: 1}}");
    // 6 of 10 slots is 60% > 40%: two pods go (-> 40%), to cold at 0%, which stays within its 40% with them.
    PassResult r = run(e, usage, SLOTTED, pods);
    assertThat(evicted(r)).containsExactly("p0", "p1");
    assertThat(r.decisions().get(0).reason()).startsWith("node hot is overloaded (pods 60% > 40%;");
  }

  @Test
  void anExtendedResourceThresholdUsesItsMeasurementAndANodeWithoutItIsUnknown() {
    PodRecord[] pods = {pod("a").on("hot").build(), pod("b").on("hot").build(), pod("c").on("hot").build()};
    var e = nativePolicy("{}", "balance", "LowNodeLoad", "{lowThresholds: {example.com/foo: 30}, highThresholds: {example.com/foo: 70},"
        + " anomalyCondition: {consecutiveAbnormalities: 1}}");
    List<NodeUsage> usage = List.of(withFoo("cold", Map.of()), withFoo("hot", Map.of("a", 2L, "b", 4L, "c", 3L)));
    // 9 of 10 is 90% > 70%: the largest user first, b (-> 50%).
    assertThat(evicted(run(e, usage, SLOTTED, pods))).containsExactly("b");
    // cold's measurement lacks the resource: unknown, so no destination; never counted as idle.
    NodeUsage coldWithout = new NodeUsage("cold", Map.of("cpu", 100L, "memory", 1L << 30), NOW, "metrics.k8s.io", Map.of());
    PassResult r = run(e, List.of(coldWithout, usage.get(1)), SLOTTED, pods);
    assertThat(r.decisions()).isEmpty();
    assertThat(r.notes()).contains("p/LowNodeLoad: node cold skipped: its metrics.k8s.io measurement has no example.com/foo");
  }

  /** Koordinator's tier rule (apis/extension: GetPodPriorityClassWithDefault). */
  @Test
  void prodTierIsTheLabelThenThePriorityRangeThenTheQos() {
    String tier = LowNodeLoad.PRIORITY_CLASS_LABEL;
    assertThat(LowNodeLoad.prodTier(pod("a").label(tier, "koord-prod").priority(5500).build())).isTrue();
    assertThat(LowNodeLoad.prodTier(pod("a").label(tier, "koord-batch").priority(9500).requests("cpu", 100).build())).isFalse();
    assertThat(LowNodeLoad.prodTier(pod("a").priority(9000).build())).isTrue();
    assertThat(LowNodeLoad.prodTier(pod("a").priority(9999).build())).isTrue();
    assertThat(LowNodeLoad.prodTier(pod("a").priority(7500).requests("cpu", 100).build())).isFalse();
    assertThat(LowNodeLoad.prodTier(pod("a").priority(3000).requests("cpu", 100).build())).isFalse();
    // Outside every range, or an unknown label (which hides the priority): by QoS, Burstable and Guaranteed are Prod.
    assertThat(LowNodeLoad.prodTier(pod("a").priority(10000).requests("cpu", 100).build())).isTrue();
    assertThat(LowNodeLoad.prodTier(pod("a").label(tier, "gold").priority(5500).requests("cpu", 100).build())).isTrue();
    assertThat(LowNodeLoad.prodTier(pod("a").build())).as("BestEffort").isFalse();
    assertThat(LowNodeLoad.prodTier(pod("a").label(LowNodeLoad.QOS_LABEL, "BE").requests("cpu", 100).build())).isFalse();
    assertThat(LowNodeLoad.prodTier(pod("a").label(LowNodeLoad.QOS_LABEL, "LS").build())).isTrue();
    assertThat(LowNodeLoad.prodTier(pod("a").label(LowNodeLoad.QOS_LABEL, "nope").build())).as("unknown: Kubernetes QoS").isFalse();
  }

  private static final String PROD = "lowThresholds: {cpu: 30}, highThresholds: {cpu: 80}, prodLowThresholds: {cpu: 30},"
      + " prodHighThresholds: {cpu: 50}, anomalyCondition: {consecutiveAbnormalities: 1}";

  /** hot at 70% as a whole (not overloaded), its Prod pods p1 (1200m) and p2 (1200m) at 60%, batch b1 at 400m; cold at 10%. */
  private static List<NodeUsage> prodUsage(Map<String, Long> hotPods) {
    Map<String, Map<String, Long>> pods = new HashMap<>();
    hotPods.forEach((pod, millis) -> pods.put("default/" + pod, Map.of("cpu", millis, "memory", 1L << 30)));
    return List.of(measured("cold", 400, Duration.ZERO, Map.of()),
        new NodeUsage("hot", Map.of("cpu", 2800L, "memory", 4L << 30), NOW, "NodeMetric", pods));
  }

  private static PodRecord[] prodPods() {
    return new PodRecord[] {
      pod("p1").on("hot").label(LowNodeLoad.PRIORITY_CLASS_LABEL, "koord-prod").build(),
      pod("p2").on("hot").priority(9500).build(),
      pod("b1").on("hot").build()};
  }

  @Test
  void prodThresholdsMoveProdPodsOffANodeWhoseProdUsageIsHighAlthoughTheNodeIsNot() {
    Map<String, Long> hot = Map.of("p1", 1200L, "p2", 1200L, "b1", 400L);
    assertThat(run(lowNodeLoad(""), prodUsage(hot), NODES, prodPods()).decisions()).as("70% is not above 80%").isEmpty();
    PassResult r = run(nativePolicy("{}", "balance", "LowNodeLoad", "{" + PROD + "}"), prodUsage(hot), NODES, prodPods());
    // Prod pods only (never b1), lowest priority first: p1 (no priority), 60% -> 30%, within 50%: done.
    assertThat(evicted(r)).containsExactly("p1");
    assertThat(r.decisions().get(0).reason()).isEqualTo("node hot's Prod pods are overloaded (cpu 60% > 50%;"
        + " measured by NodeMetric at 2026-01-02T00:00:00Z); moving to underloaded cold");
  }

  @Test
  void aProdPodWithoutMeasuredUsageMakesTheNodeUnknownToTheProdRound() {
    PassResult r = run(nativePolicy("{}", "balance", "LowNodeLoad", "{" + PROD + "}"), prodUsage(Map.of("p1", 1200L, "b1", 400L)),
        NODES, prodPods());
    assertThat(r.decisions()).isEmpty();
    assertThat(r.notes()).contains("p/LowNodeLoad: node hot skipped: Prod pod default/p2 has no measured usage in its NodeMetric measurement");
  }

  @Test
  void aNodeOverloadedAsAWholeIsTheFirstRoundsAndAProdDestinationKeepsItsWholeHeadroom() {
    // hot at 90% as a whole: the first round moves b1 (no priority: first) and hot is at 65%, within 80%. Its Prod
    // pods are still at 60%, but a node overloaded as a whole is the first round's: the Prod round leaves it alone.
    Map<String, Long> hot = Map.of("p1", 1200L, "p2", 1200L, "b1", 1000L);
    List<NodeUsage> usage = List.of(prodUsage(hot).get(0),
        new NodeUsage("hot", Map.of("cpu", 3600L, "memory", 4L << 30), NOW, "NodeMetric", prodUsage(hot).get(1).pods()));
    PodRecord[] pods = {pod("p1").on("hot").priority(9500).build(), pod("p2").on("hot").priority(9500).build(), pod("b1").on("hot").build()};
    PassResult r = run(nativePolicy("{}", "balance", "LowNodeLoad", "{" + PROD + "}"), usage, NODES, pods);
    assertThat(r.decisions()).extracting(d -> d.name() + ": " + d.reason().substring(0, d.reason().indexOf('(')))
        .containsExactly("b1: node hot is overloaded ");
    // cold at 75% as a whole but without Prod pods: no room under its high 80% for a 1200m Prod pod, so nothing moves.
    List<NodeUsage> busyCold = List.of(measured("cold", 3000, Duration.ZERO, Map.of()), prodUsage(hot).get(1));
    assertThat(run(nativePolicy("{}", "balance", "LowNodeLoad", "{" + PROD.replace("lowThresholds: {cpu: 30}, highThresholds",
        "lowThresholds: {cpu: 80}, highThresholds") + "}"), busyCold, NODES, prodPods()).decisions()).isEmpty();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The descheduler's LowNodeUtilization on the same measurements (metricsUtilization, upstream v0.33+)

  private static PolicyEvaluator measuredLowNodeUtilization(String metricsUtilization) {
    return Passes.policy("{}", "balance", "LowNodeUtilization", "{thresholds: {cpu: 30, memory: 30}, targetThresholds: {cpu: 80, memory: 80},"
        + " metricsUtilization: " + metricsUtilization + "}");
  }

  @Test
  void lowNodeUtilizationWithMetricsUtilizationBalancesMeasuredUsageInsteadOfRequests() {
    // The pods request nothing: by requests every node is idle and nothing moves.
    assertThat(run(Passes.policy("{}", "balance", "LowNodeUtilization", "{thresholds: {cpu: 30, memory: 30},"
        + " targetThresholds: {cpu: 80, memory: 80}}"), usage(Duration.ZERO, HOT_PODS), NODES, hotPods()).decisions()).isEmpty();
    for (String source : List.of("{source: KubernetesMetrics}", "{metricsServer: true}")) {
      PassResult r = run(measuredLowNodeUtilization(source), usage(Duration.ZERO, HOT_PODS), NODES, hotPods());
      assertThat(evicted(r)).as(source).containsExactly("small", "big");
      assertThat(r.decisions().get(0).reason()).isEqualTo("node hot is overutilized (cpu 90% > 80%, memory 25% vs 80%;"
          + " measured by NodeMetric at 2026-01-02T00:00:00Z); moving to underutilized cold");
    }
  }

  @Test
  void lowNodeUtilizationWithMetricsDecidesNothingWhenANodeHasNoSampleAndMovesNoUnmeasuredPod() {
    List<NodeUsage> withoutWarm = usage(Duration.ZERO, HOT_PODS).stream().filter(u -> !u.node().equals("warm")).toList();
    PassResult r = run(measuredLowNodeUtilization("{source: KubernetesMetrics}"), withoutWarm, NODES, hotPods());
    assertThat(r.decisions()).isEmpty();
    assertThat(r.notes()).contains("p/LowNodeUtilization: nothing decided: node warm has no metrics.k8s.io measurement");
    PassResult stale = run(measuredLowNodeUtilization("{source: KubernetesMetrics}"), usage(Duration.ofMinutes(3), HOT_PODS), NODES, hotPods());
    assertThat(stale.notes()).anySatisfy(n -> assertThat(n).contains("node hot has only a NodeMetric measurement", "180s old"));
    // small has no measurement of its own: it stays, and big and mid go instead (90% -> 60%).
    Map<String, Long> withoutSmall = Map.of("big", 1200L, "mid", 800L);
    assertThat(evicted(run(measuredLowNodeUtilization("{source: KubernetesMetrics}"), usage(Duration.ZERO, withoutSmall), NODES, hotPods())))
        .containsExactly("big");
  }

  @Test
  void metricsUtilizationIsValidatedAsUpstream() {
    for (String[] bad : new String[][] {
      {"{source: KubernetesMetrics, metricsServer: true}", "not allowed to set both \"KubernetesMetrics\" source and metricsServer"},
      {"{source: KubernetesMetrics, prometheus: {query: q}}", "prometheus configuration is not allowed to set when source is set to"},
      {"{source: Prometheus}", "prometheus query is required when metrics source is set to \"Prometheus\""},
      {"{source: Prometheus, prometheus: {query: instance:node_cpu:rate:sum}}", "thresholds are expected to specify a single instance of \"MetricResource\""},
      {"{source: Graphite}", "unknown metrics source \"Graphite\""},
      {"{source: KubernetesMetrics, window: 5m}", "metricsUtilization.window: unknown field"}}) {
      assertThatThrownBy(() -> measuredLowNodeUtilization(bad[0])).as(bad[0]).isInstanceOf(PolicyException.class).hasMessageContaining(bad[1]);
    }
    assertThatThrownBy(() -> Passes.policy("{}", "balance", "HighNodeUtilization", "{thresholds: {cpu: 30}, metricsUtilization: {metricsServer: true}}"))
        .as("upstream's HighNodeUtilization has no metricsUtilization").hasMessageContaining("metricsUtilization: unknown field");
  }
}
