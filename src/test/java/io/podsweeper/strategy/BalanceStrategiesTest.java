package io.podsweeper.strategy;

import static io.podsweeper.strategy.Passes.evicted;
import static io.podsweeper.strategy.Passes.node;
import static io.podsweeper.strategy.Passes.policy;
import static io.podsweeper.strategy.Passes.run;
import static io.podsweeper.strategy.Passes.sized;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeSelectorTerm;
import io.podsweeper.cluster.PodBuilder;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.policy.PolicyException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** RemovePodsViolatingNodeAffinity, RemoveDuplicates, LowNodeUtilization and HighNodeUtilization on snapshots. */
class BalanceStrategiesTest {
  private static Scheduling affinity(List<NodeSelectorTerm> required, List<Scheduling.PreferredTerm> preferred) {
    return new Scheduling(Map.of(), required, preferred, List.of(), List.of(), Map.of(), "BestEffort");
  }

  private static NodeSelectorTerm zone(String z) {
    return new NodeSelectorTerm(List.of(new NodeSelectorTerm.Requirement("zone", "In", List.of(z))));
  }

  @Test
  void requiredNodeAffinityEvictsOnlyWhenAnotherNodeSatisfiesIt() {
    var e = policy("{}", "deschedule", "RemovePodsViolatingNodeAffinity", "{nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]}");
    NodeRecord a = node("n1", Map.of("zone", "a"), List.of());
    NodeRecord b = node("n2", Map.of("zone", "b"), List.of());
    var pod = PodBuilder.pod("p").node("n1").scheduling(affinity(List.of(zone("b")), List.of())).build();
    PassResult r = run(e, List.of(a, b), pod);
    assertThat(evicted(r)).containsExactly("p");
    assertThat(r.decisions().get(0).reason()).contains("node n1 no longer satisfies", "node n2 does");
    var nowhere = PodBuilder.pod("q").node("n1").scheduling(affinity(List.of(zone("c")), List.of())).build();
    assertThat(evicted(run(e, List.of(a, b), nowhere))).isEmpty();
    var satisfied = PodBuilder.pod("s").node("n2").scheduling(affinity(List.of(zone("b")), List.of())).build();
    assertThat(evicted(run(e, List.of(a, b), satisfied))).isEmpty();
  }

  @Test
  void preferredNodeAffinityEvictsWhenABetterWeightedNodeExists() {
    var e = policy("{}", "deschedule", "RemovePodsViolatingNodeAffinity", "{nodeAffinityType: [preferredDuringSchedulingIgnoredDuringExecution]}");
    var pod = PodBuilder.pod("p").node("n1").scheduling(affinity(List.of(), List.of(new Scheduling.PreferredTerm(50, zone("b"))))).build();
    assertThat(evicted(run(e, List.of(node("n1", Map.of("zone", "a"), List.of()), node("n2", Map.of("zone", "b"), List.of())), pod)))
        .containsExactly("p");
    assertThatThrownBy(() -> policy("{}", "deschedule", "RemovePodsViolatingNodeAffinity", "{}"))
        .isInstanceOf(PolicyException.class).hasMessageContaining("nodeAffinityType needs to be set");
  }

  @Test
  void duplicatesSpreadToCeilOfOwnerCountOverFeasibleNodes() {
    var e = policy("{}", "balance", "RemoveDuplicates", "{}");
    var pods = new PodBuilder[] {
      PodBuilder.pod("r1").node("n1").owner("ReplicaSet", "web"), PodBuilder.pod("r2").node("n1").owner("ReplicaSet", "web"),
      PodBuilder.pod("r3").node("n1").owner("ReplicaSet", "web"), PodBuilder.pod("r4").node("n1").owner("ReplicaSet", "web"),
      PodBuilder.pod("other-image").node("n1").owner("ReplicaSet", "web").images("sidecar:2"),
      PodBuilder.pod("bare").node("n1").bare(), PodBuilder.pod("bare2").node("n1").bare()};
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
        PodBuilder.pod("guaranteed").node("busy").requests(300, 0).priority(10).build(),
        PodBuilder.pod("low").node("busy").requests(300, 0).priority(0).build(),
        PodBuilder.pod("mid").node("busy").requests(300, 0).priority(5).build(),
        PodBuilder.pod("small").node("idle").requests(100, 0).build());
    // busy is at 90% > 50%: evict until it is at or below 50% (two pods), lowest priority first.
    assertThat(evicted(r)).containsExactly("low", "mid");
    assertThat(r.decisions().get(0).reason()).startsWith("node busy is overutilized (cpu 90% > 50%)");
    // numberOfNodes: one underutilized node is not enough.
    assertThat(evicted(run(policy("{}", "balance", "LowNodeUtilization", "{thresholds: {cpu: 20}, targetThresholds: {cpu: 50}, numberOfNodes: 1}"),
        nodes, PodBuilder.pod("x").node("busy").requests(900, 0).build()))).isEmpty();
    // evictionLimits.node caps per node.
    assertThat(evicted(run(policy("{}", "balance", "LowNodeUtilization", "{thresholds: {cpu: 20}, targetThresholds: {cpu: 50}, evictionLimits: {node: 1}}"),
        nodes, PodBuilder.pod("a").node("busy").requests(450, 0).build(), PodBuilder.pod("b").node("busy").requests(450, 0).build())))
        .hasSize(1);
  }

  @Test
  void lowNodeUtilizationNeedsAnUnderutilizedSchedulableNode() {
    var e = policy("{}", "balance", "LowNodeUtilization", "{thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}");
    PassResult r = run(e, List.of(sized("busy", 1000, 110, false), sized("cordoned", 1000, 110, true)),
        PodBuilder.pod("a").node("busy").requests(900, 0).build());
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
        PodBuilder.pod("lonely").node("a").requests(100, 0).build(),
        PodBuilder.pod("b1").node("b").requests(500, 0).build(),
        PodBuilder.pod("c1").node("c").requests(600, 0).build());
    assertThat(evicted(r)).containsExactly("lonely");
    assertThat(r.decisions().get(0).reason()).startsWith("node a is underutilized (cpu 10% <= 20%)");
    // OnlyThresholdingResources: a pod requesting no cpu stays.
    assertThat(evicted(run(policy("{}", "balance", "HighNodeUtilization", "{thresholds: {cpu: 20}, evictionModes: [OnlyThresholdingResources]}"),
        List.of(sized("a", 1000, 110, false), sized("b", 1000, 110, false)),
        PodBuilder.pod("no-requests").node("a").build(), PodBuilder.pod("b1").node("b").requests(500, 0).build()))).isEmpty();
  }
}
