package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.strategy.Passes.evicted;
import static io.podsweeper.strategy.Passes.node;
import static io.podsweeper.strategy.Passes.policy;
import static io.podsweeper.strategy.Passes.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodFixtures.PodBuilder;
import io.podsweeper.cluster.Taint;
import io.podsweeper.policy.PolicyException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeTaintsTest {
  private static final NodeRecord TAINTED = node("n1", Map.of(), List.of(new Taint("dedicated", "gpu", "NoSchedule")));
  private static final NodeRecord SOFT = node("n1", Map.of(), List.of(new Taint("spot", "", "PreferNoSchedule")));
  private static final NodeRecord CLEAN = node("n2");

  @Test
  void evictsPodsNotToleratingANoScheduleTaintWithAReason() {
    PassResult r = run(policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{}"), List.of(TAINTED, CLEAN),
        pod("intolerant").on("n1").build(),
        pod("tolerant").on("n1").tolerates("dedicated", "gpu", "NoSchedule").build(),
        pod("elsewhere").on("n2").build());
    assertThat(evicted(r)).containsExactly("intolerant");
    assertThat(r.decisions().get(0).reason()).isEqualTo("node n1 has taint dedicated=gpu:NoSchedule the pod does not tolerate");
  }

  @Test
  void preferNoScheduleOnlyWhenIncluded() {
    assertThat(evicted(run(policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{}"), List.of(SOFT, CLEAN),
        pod("a").on("n1").build()))).isEmpty();
    assertThat(evicted(run(policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{includePreferNoSchedule: true}"),
        List.of(SOFT, CLEAN), pod("a").on("n1").build()))).containsExactly("a");
  }

  @Test
  void excludedAndIncludedTaintsByKeyOrKeyValue() {
    PodBuilder pod = pod("a").on("n1");
    assertThat(evicted(run(policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{excludedTaints: [dedicated]}"),
        List.of(TAINTED, CLEAN), pod.build()))).isEmpty();
    assertThat(evicted(run(policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{excludedTaints: [dedicated=cpu]}"),
        List.of(TAINTED, CLEAN), pod.build()))).containsExactly("a");
    assertThat(evicted(run(policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{includedTaints: [dedicated=gpu]}"),
        List.of(TAINTED, CLEAN), pod.build()))).containsExactly("a");
    assertThat(evicted(run(policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{includedTaints: [other]}"),
        List.of(TAINTED, CLEAN), pod.build()))).isEmpty();
  }

  @Test
  void includedAndExcludedAreMutuallyExclusive() {
    assertThatThrownBy(() -> policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{includedTaints: [a], excludedTaints: [b]}"))
        .isInstanceOf(PolicyException.class).hasMessageContaining("either includedTaints or excludedTaints");
  }

  @Test
  void nodeFitKeepsPodsThatFitNoOtherNode() {
    NodeRecord alsoTainted = node("n2", Map.of(), List.of(new Taint("dedicated", "gpu", "NoSchedule")));
    assertThat(evicted(run(policy("{nodeFit: true}", "deschedule", "RemovePodsViolatingNodeTaints", "{}"), List.of(TAINTED, alsoTainted),
        pod("a").on("n1").build()))).isEmpty();
    assertThat(evicted(run(policy("{nodeFit: true}", "deschedule", "RemovePodsViolatingNodeTaints", "{}"), List.of(TAINTED, CLEAN),
        pod("a").on("n1").build()))).containsExactly("a");
  }

  @Test
  void skippedWithFewerThanTwoReadyNodes() {
    PassResult r = run(policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{}"), List.of(TAINTED),
        pod("a").on("n1").build());
    assertThat(r.decisions()).isEmpty();
    assertThat(r.skipped()).hasValueSatisfying(s -> assertThat(s).contains("1 Ready node(s)"));
  }

  @Test
  void finishedPodsAndPerNodeLimit() {
    PassResult r = run(policy("maxNoOfPodsToEvictPerNode: 1\n", "{}", "deschedule", "RemovePodsViolatingNodeTaints", "{}"),
        List.of(TAINTED, CLEAN), pod("done").on("n1").phase("Succeeded").build(),
        pod("a").on("n1").build(), pod("b").on("n1").build());
    assertThat(evicted(r)).containsExactly("a");
  }
}
