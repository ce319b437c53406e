package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.strategy.Passes.evicted;
import static io.podsweeper.strategy.Passes.node;
import static io.podsweeper.strategy.Passes.policy;
import static io.podsweeper.strategy.Passes.run;
import static io.podsweeper.strategy.Passes.sized;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeSelectorTerm;
import io.podsweeper.cluster.PodFixtures.PodBuilder;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.policy.PolicyException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** RemovePodsViolatingNodeAffinity, RemoveDuplicates, LowNodeUtilization and HighNodeUtilization on snapshots. */
class BalanceStrategiesTest {
  private static NodeSelectorTerm zone(String z) {
    return new NodeSelectorTerm(List.of(new NodeSelectorTerm.Requirement("zone", "In", List.of(z))));
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
}
