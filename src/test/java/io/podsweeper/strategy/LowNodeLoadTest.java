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

  private static PodRecord[] hotPods() {
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
      {"prodHighThresholds: {cpu: 50}", "prodHighThresholds: not supported: Podsweeper does not tell Koordinator's Prod pods apart"},
      {"anomalyCondition: {consecutiveAbnormalities: 3, timeout: 1m}", "anomalyCondition.timeout: not supported"},
      {"anomalyCondition: {consecutiveNormalities: 3}", "anomalyCondition.consecutiveNormalities: not supported"},
      {"resourceWeights: {pods: 2}", "resourceWeights.pods: unknown field"},
      {"evictableNamespaces: {include: [a], exclude: [b]}", "only one of Include/Exclude namespaces can be set"},
      {"nodeMetricExpirationSeconds: 0", "nodeMetricExpirationSeconds: must be between 1"},
      {"anomalyDetectionThresholds: {}", "anomalyDetectionThresholds: unknown field"}}) {
      assertThatThrownBy(() -> nativePolicy("{}", "balance", "LowNodeLoad", "{" + THRESHOLDS + ", " + bad[0] + "}"))
          .as(bad[0]).isInstanceOf(PolicyException.class).hasMessageContaining(bad[1]);
    }
    for (String[] bad : new String[][] {
      {"lowThresholds: {cpu: 90}, highThresholds: {cpu: 80}", "lowThresholds' cpu percentage is greater than highThresholds'"},
      {"lowThresholds: {cpu: 10}, highThresholds: {memory: 80}", "lowThresholds and highThresholds configured different resources"},
      {"lowThresholds: {pods: 10}, highThresholds: {pods: 80}", "lowThresholds.pods: not supported: only cpu and memory are measured"},
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

  @Test
  void koordinatorConfigurationsReadWithTheMigrationControllersNamespaces() {
    var policy = PolicyLoader.parse("""
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerConfiguration
        profiles:
          - name: koord
            plugins:
              balance: {enabled: [{name: LowNodeLoad}]}
            pluginConfig:
              - name: MigrationController
                args: {namespaces: {exclude: [kube-system]}}
              - name: LowNodeLoad
                args:
                  apiVersion: descheduler/v1alpha2
                  kind: LowNodeLoadArgs
                  lowThresholds: {cpu: 30, memory: 30}
                  highThresholds: {cpu: 80, memory: 80}
                  anomalyCondition: {consecutiveAbnormalities: 1}
        """, "koordinator");
    var args = (io.podsweeper.policy.LowNodeLoadArgs) policy.profiles().get(0).balance().get(0);
    assertThat(args.namespaces().exclude()).containsExactly("kube-system");
    assertThat(args.nodeFit()).isTrue();
    assertThat(args.nodeMetricExpiration()).isEqualTo(Duration.ofSeconds(180));
    assertThat(args.resourceWeights()).isEqualTo(Map.of("cpu", 1L, "memory", 1L));
    assertThat(evicted(run(new PolicyEvaluator(policy), usage(Duration.ZERO, HOT_PODS), NODES, hotPods()))).containsExactly("small", "big");
  }
}
