package io.podsweeper.strategy;

import io.podsweeper.safety.RemovalBudget;

import io.podsweeper.cluster.ClusterSnapshot;

import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.strategy.Passes.evicted;
import static io.podsweeper.strategy.Passes.node;
import static io.podsweeper.strategy.Passes.policy;
import static io.podsweeper.strategy.Passes.run;
import static io.podsweeper.strategy.Passes.runAt;
import static io.podsweeper.strategy.Passes.sized;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeSelectorTerm;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodFixtures.PodBuilder;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.cluster.Taint;
import io.podsweeper.policy.PolicyException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** RemovePodsViolatingNodeAffinity, RemoveDuplicates, LowNodeUtilization and HighNodeUtilization on snapshots. */
class BalanceStrategiesTest {
  private static NodeSelectorTerm zone(String z) {
    return new NodeSelectorTerm(List.of(new NodeSelectorTerm.Requirement("zone", "In", List.of(z))));
  }

  /** The live service's balance pass runs each node-aware strategy through a runner (it times them per strategy and profile). */
  @Test
  void theBalancePassRunsEachStrategyThroughTheRunnerByNameAndProfile() {
    var e = policy("{}", "balance", "RemoveDuplicates", "{}");
    List<String> ran = new java.util.ArrayList<>();
    PassResult r = e.balance(ClusterSnapshot.of(List.of(), List.of(), List.of(node("n1"), node("n2"))), Passes.NOW,
        new RemovalBudget(e.policy().limits()), (profile, strategy, run) -> {
          ran.add(profile + "/" + strategy);
          run.run();
        });
    assertThat(r.skipped()).isEmpty();
    assertThat(ran).containsExactly("p/RemoveDuplicates");
  }

  @Test
  void requiredNodeAffinityEvictsOnlyWhenAnotherNodeSatisfiesIt() {
    var e = policy("{}", "deschedule", "RemovePodsViolatingNodeAffinity", "{nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]}");
    NodeRecord a = node("n1", Map.of("zone", "a"), List.of());
    NodeRecord b = node("n2", Map.of("zone", "b"), List.of());
    var pod = pod("p").on("n1").requiredNodeAffinity(zone("b")).build();
    PassResult r = run(e, List.of(a, b), pod);
    assertThat(evicted(r)).containsExactly("p");
    assertThat(r.decisions().get(0).reason()).contains("node n1 no longer satisfies", "node n2 does");
    var nowhere = pod("q").on("n1").requiredNodeAffinity(zone("c")).build();
    assertThat(evicted(run(e, List.of(a, b), nowhere))).isEmpty();
    var satisfied = pod("s").on("n2").requiredNodeAffinity(zone("b")).build();
    assertThat(evicted(run(e, List.of(a, b), satisfied))).isEmpty();
  }

  @Test
  void preferredNodeAffinityEvictsWhenABetterWeightedNodeExists() {
    var e = policy("{}", "deschedule", "RemovePodsViolatingNodeAffinity", "{nodeAffinityType: [preferredDuringSchedulingIgnoredDuringExecution]}");
    var pod = pod("p").on("n1").preferredNodeAffinity(new Scheduling.PreferredTerm(50, zone("b"))).build();
    assertThat(evicted(run(e, List.of(node("n1", Map.of("zone", "a"), List.of()), node("n2", Map.of("zone", "b"), List.of())), pod)))
        .containsExactly("p");
    assertThatThrownBy(() -> policy("{}", "deschedule", "RemovePodsViolatingNodeAffinity", "{}"))
        .isInstanceOf(PolicyException.class).hasMessageContaining("nodeAffinityType needs to be set");
  }

  @Test
  void duplicatesSpreadToCeilOfOwnerCountOverFeasibleNodes() {
    var e = policy("{}", "balance", "RemoveDuplicates", "{}");
    var pods = new PodBuilder[] {
      pod("r1").on("n1").ownedBy("ReplicaSet", "web").images("app:1"), pod("r2").on("n1").ownedBy("ReplicaSet", "web").images("app:1"),
      pod("r3").on("n1").ownedBy("ReplicaSet", "web").images("app:1"), pod("r4").on("n1").ownedBy("ReplicaSet", "web").images("app:1"),
      pod("other-image").on("n1").ownedBy("ReplicaSet", "web").images("sidecar:2"),
      pod("bare").on("n1").bare(), pod("bare2").on("n1").bare()};
    // 4 identical pods, 2 feasible nodes: at most 2 per node, so 2 go; a different image set is another workload.
    PassResult r = run(e, List.of(node("n1"), node("n2")), java.util.Arrays.stream(pods).map(PodBuilder::build).toArray(io.podsweeper.cluster.PodRecord[]::new));
    assertThat(evicted(r)).containsExactly("r3", "r4");
    assertThat(r.decisions().get(0).reason()).contains("4 pods of ReplicaSet default/web", "at most 2 per node");
    // Excluded owner kinds are not duplicates.
    assertThat(evicted(run(policy("{}", "balance", "RemoveDuplicates", "{excludeOwnerKinds: [ReplicaSet]}"), List.of(node("n1"), node("n2")),
        pods[0].build(), pods[1].build()))).isEmpty();
  }

  @Test
  void lowNodeUtilizationMovesLowestPriorityPodsOffOverutilizedNodes() {
    var e = policy("{}", "balance", "LowNodeUtilization", "{thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}");
    List<NodeRecord> nodes = List.of(sized("busy", 1000, 110, false), sized("idle", 1000, 110, false));
    PassResult r = run(e, nodes,
        pod("guaranteed").on("busy").requests("cpu", 300).priority(10).build(),
        pod("low").on("busy").requests("cpu", 300).priority(0).build(),
        pod("mid").on("busy").requests("cpu", 300).priority(5).build(),
        pod("small").on("idle").requests("cpu", 100).build());
    // busy is at 90% > 50%: evict until it is at or below 50% (two pods), lowest priority first.
    assertThat(evicted(r)).containsExactly("low", "mid");
    assertThat(r.decisions().get(0).reason()).startsWith("node busy is overutilized (cpu 90% > 50%)");
    // numberOfNodes: one underutilized node is not enough.
    assertThat(evicted(run(policy("{}", "balance", "LowNodeUtilization", "{thresholds: {cpu: 20}, targetThresholds: {cpu: 50}, numberOfNodes: 1}"),
        nodes, pod("x").on("busy").requests("cpu", 900).build()))).isEmpty();
    // evictionLimits.node caps per node.
    assertThat(evicted(run(policy("{}", "balance", "LowNodeUtilization", "{thresholds: {cpu: 20}, targetThresholds: {cpu: 50}, evictionLimits: {node: 1}}"),
        nodes, pod("a").on("busy").requests("cpu", 450).build(), pod("b").on("busy").requests("cpu", 450).build())))
        .hasSize(1);
  }

  @Test
  void lowNodeUtilizationNeedsAnUnderutilizedSchedulableNode() {
    var e = policy("{}", "balance", "LowNodeUtilization", "{thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}");
    PassResult r = run(e, List.of(sized("busy", 1000, 110, false), sized("cordoned", 1000, 110, true)),
        pod("a").on("busy").requests("cpu", 900).build());
    assertThat(r.decisions()).isEmpty();
    assertThat(r.notes()).anySatisfy(n -> assertThat(n).contains("no node is underutilized"));
  }

  /** As upstream: nothing moves while the underutilized nodes have no room in a tracked resource; a note says which. */
  @Test
  void lowNodeUtilizationSaysWhenTheUnderutilizedNodesHaveNoRoomInAResource() {
    var e = policy("{}", "balance", "LowNodeUtilization", "{thresholds: {example.com/foo: 20}, targetThresholds: {example.com/foo: 50}}");
    NodeRecord withFoo = new NodeRecord("busy", Map.of(), true, false, List.of(), Map.of("cpu", 1000L, "memory", 1L << 30, "pods", 10L,
        "example.com/foo", 4L));
    PassResult r = run(e, List.of(withFoo, sized("idle", 1000, 10, false)), pod("a").on("busy").requests("example.com/foo", 4).build());
    assertThat(r.decisions()).isEmpty();
    assertThat(r.notes()).containsExactly("p/LowNodeUtilization: no room left on idle in example.com/foo (below their high thresholds)");
  }

  @Test
  void lowNodeUtilizationValidation() {
    assertThatThrownBy(() -> policy("{}", "balance", "LowNodeUtilization", "{thresholds: {cpu: 60}, targetThresholds: {cpu: 50}}"))
        .hasMessageContaining("greater than targetThresholds");
    assertThatThrownBy(() -> policy("{}", "balance", "LowNodeUtilization", "{thresholds: {cpu: 10}, targetThresholds: {memory: 50}}"))
        .hasMessageContaining("different resources");
    assertThatThrownBy(() -> policy("{}", "balance", "LowNodeUtilization", "{thresholds: {cpu: 101}, targetThresholds: {cpu: 50}}"))
        .hasMessageContaining("not in [0, 100]");
    assertThatThrownBy(() -> policy("{}", "balance", "LowNodeUtilization",
        "{thresholds: {cpu: 10}, targetThresholds: {cpu: 50}, evictableNamespaces: {include: [a]}}"))
        .hasMessageContaining("only Exclude namespaces");
    assertThatThrownBy(() -> policy("{}", "deschedule", "LowNodeUtilization", "{thresholds: {cpu: 10}, targetThresholds: {cpu: 50}}"))
        .hasMessageContaining("is a balance plugin");
  }

  @Test
  void highNodeUtilizationEmptiesTheLeastUsedNodes() {
    var e = policy("{}", "balance", "HighNodeUtilization", "{thresholds: {cpu: 20}}");
    PassResult r = run(e, List.of(sized("a", 1000, 110, false), sized("b", 1000, 110, false), sized("c", 1000, 110, false)),
        pod("lonely").on("a").requests("cpu", 100).build(),
        pod("b1").on("b").requests("cpu", 500).build(),
        pod("c1").on("c").requests("cpu", 600).build());
    assertThat(evicted(r)).containsExactly("lonely");
    assertThat(r.decisions().get(0).reason()).startsWith("node a is underutilized (cpu 10% <= 20%)");
    // OnlyThresholdingResources: a pod requesting no cpu stays.
    assertThat(evicted(run(policy("{}", "balance", "HighNodeUtilization", "{thresholds: {cpu: 20}, evictionModes: [OnlyThresholdingResources]}"),
        List.of(sized("a", 1000, 110, false), sized("b", 1000, 110, false)),
        pod("no-requests").on("a").build(), pod("b1").on("b").requests("cpu", 500).build()))).isEmpty();
  }

  /**
   * Upstream's minPodAge is part of its evictor's Filter, which every strategy consults (defaultevictor.go): a
   * node-aware strategy does not evict a pod that started less than minPodAge ago. (Before, only the pod-by-pod
   * strategies waited for it.)
   */
  @Test
  void minPodAgeKeepsYoungPodsFromNodeStrategies() {
    var e = policy("{minPodAge: 1h}", "deschedule", "RemovePodsViolatingNodeTaints", "{}");
    List<NodeRecord> nodes = List.of(node("n1", Map.of(), List.of(new Taint("dedicated", "db", "NoSchedule"))), node("n2"));
    assertThat(evicted(runAt(e, PodFixtures.NOW, List.of(), nodes,
        pod("young").on("n1").ageSeconds(60).startedAgo(Duration.ofSeconds(60)).build(),
        pod("old").on("n1").ageSeconds(7200).startedAgo(Duration.ofHours(2)).build())))
        .containsExactly("old");
  }

  /** ... and, as upstream counts only the pods its Filter lets through, young duplicates are not counted either. */
  @Test
  void minPodAgeKeepsYoungPodsOutOfTheDuplicatesAndTheirCount() {
    var e = policy("{minPodAge: 1h}", "balance", "RemoveDuplicates", "{}");
    // old-1 and old-2 count: ceil(2 / 2 nodes) = 1 per node, so one old pod goes; the young ones stay.
    assertThat(evicted(runAt(e, PodFixtures.NOW, List.of(), List.of(node("n1"), node("n2")),
        pod("old-1").on("n1").ownedBy("ReplicaSet", "web").images("web:1").startedAgo(Duration.ofHours(2)).build(),
        pod("old-2").on("n1").ownedBy("ReplicaSet", "web").images("web:1").startedAgo(Duration.ofHours(2)).build(),
        pod("young-1").on("n1").ownedBy("ReplicaSet", "web").images("web:1").startedAgo(Duration.ofSeconds(30)).build(),
        pod("young-2").on("n1").ownedBy("ReplicaSet", "web").images("web:1").startedAgo(Duration.ofSeconds(30)).build())))
        .containsExactly("old-2");
  }

  /**
   * Upstream's RemoveDuplicates counts a node as a place for the duplicates only if the pod tolerates its NoSchedule
   * and NoExecute taints (removeduplicates.go): a node with an untolerated NoExecute taint does not lower the number
   * allowed per node. Targets n1 and n2: ceil(3 / 2) = 2 per node, so one of the three goes (with n3: ceil(3 / 3) = 1,
   * two would go).
   */
  @Test
  void duplicatesDoNotCountNodesWithAnUntoleratedNoExecuteTaint() {
    var e = policy("{}", "balance", "RemoveDuplicates", "{}");
    List<NodeRecord> nodes = List.of(node("n1"), node("n2"), node("n3", Map.of(), List.of(new Taint("maintenance", "true", "NoExecute"))));
    assertThat(evicted(run(e, nodes,
        pod("w1").on("n1").ownedBy("ReplicaSet", "web").images("web:1").build(),
        pod("w2").on("n1").ownedBy("ReplicaSet", "web").images("web:1").build(),
        pod("w3").on("n1").ownedBy("ReplicaSet", "web").images("web:1").build())))
        .hasSize(1);
  }

  /**
   * Upstream's RemoveDuplicates counts the pods that pass its evictor's Filter and PreEvictionFilter (nodeFit): a pod
   * that fits no other node is not counted at all. n1 has 5000m free, n2 and n3 are full: the a* pods fit nowhere
   * else, the b* pods fit n1. Only b1 and b2 count: ceil(2 / 3) = 1 per node, so one of them goes.
   */
  @Test
  void duplicatesCountOnlyPodsThatPassNodeFit() {
    var e = policy("{nodeFit: true}", "balance", "RemoveDuplicates", "{}");
    List<NodeRecord> nodes = List.of(sized("n1", 10_000, 110, false), sized("n2", 2000, 110, false), sized("n3", 1000, 110, false));
    List<PodRecord> pods = new java.util.ArrayList<>();
    for (int i = 1; i <= 5; i++) {
      pods.add(pod("a" + i).on("n1").ownedBy("ReplicaSet", "web").images("web:1").requests("cpu", 1000).build());
    }
    pods.add(pod("b1").on("n2").ownedBy("ReplicaSet", "web").images("web:1").requests("cpu", 1000).build());
    pods.add(pod("b2").on("n2").ownedBy("ReplicaSet", "web").images("web:1").requests("cpu", 1000).build());
    pods.add(pod("hog").on("n3").requests("cpu", 1000).build());
    assertThat(evicted(run(e, nodes, pods.toArray(PodRecord[]::new)))).containsExactly("b2");
  }
}
