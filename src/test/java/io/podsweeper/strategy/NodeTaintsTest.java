package io.podsweeper.strategy;

import static io.podsweeper.strategy.Passes.evicted;
import static io.podsweeper.strategy.Passes.node;
import static io.podsweeper.strategy.Passes.policy;
import static io.podsweeper.strategy.Passes.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodBuilder;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.cluster.Taint;
import io.podsweeper.cluster.Toleration;
import io.podsweeper.policy.PolicyException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeTaintsTest {
  private static final NodeRecord TAINTED = node("n1", Map.of(), List.of(new Taint("dedicated", "gpu", "NoSchedule")));
  private static final NodeRecord SOFT = node("n1", Map.of(), List.of(new Taint("spot", "", "PreferNoSchedule")));
  private static final NodeRecord CLEAN = node("n2");

  private static PodBuilder tolerating(String name, Toleration... t) {
    return PodBuilder.pod(name).node("n1")
        .scheduling(new Scheduling(Map.of(), List.of(), List.of(), List.of(t), List.of(), Map.of(), "BestEffort"));
  }

  @Test
  void evictsPodsNotToleratingANoScheduleTaintWithAReason() {
    PassResult r = run(policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{}"), List.of(TAINTED, CLEAN),
        PodBuilder.pod("intolerant").node("n1").build(),
        tolerating("tolerant", new Toleration("dedicated", "Equal", "gpu", "NoSchedule")).build(),
        PodBuilder.pod("elsewhere").node("n2").build());
    assertThat(evicted(r)).containsExactly("intolerant");
    assertThat(r.decisions().get(0).reason()).isEqualTo("node n1 has taint dedicated=gpu:NoSchedule the pod does not tolerate");
  }

  @Test
  void preferNoScheduleOnlyWhenIncluded() {
    assertThat(evicted(run(policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{}"), List.of(SOFT, CLEAN),
        PodBuilder.pod("a").node("n1").build()))).isEmpty();
    assertThat(evicted(run(policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{includePreferNoSchedule: true}"),
        List.of(SOFT, CLEAN), PodBuilder.pod("a").node("n1").build()))).containsExactly("a");
  }

  @Test
  void excludedAndIncludedTaintsByKeyOrKeyValue() {
    PodBuilder pod = PodBuilder.pod("a").node("n1");
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
        PodBuilder.pod("a").node("n1").build()))).isEmpty();
    assertThat(evicted(run(policy("{nodeFit: true}", "deschedule", "RemovePodsViolatingNodeTaints", "{}"), List.of(TAINTED, CLEAN),
        PodBuilder.pod("a").node("n1").build()))).containsExactly("a");
  }

  @Test
  void skippedWithFewerThanTwoReadyNodes() {
    PassResult r = run(policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{}"), List.of(TAINTED),
        PodBuilder.pod("a").node("n1").build());
    assertThat(r.decisions()).isEmpty();
    assertThat(r.skipped()).hasValueSatisfying(s -> assertThat(s).contains("1 Ready node(s)"));
  }

  @Test
  void finishedPodsAndPerNodeLimit() {
    PassResult r = run(policy("maxNoOfPodsToEvictPerNode: 1\n", "{}", "deschedule", "RemovePodsViolatingNodeTaints", "{}"),
        List.of(TAINTED, CLEAN), PodBuilder.pod("done").node("n1").phase("Succeeded").build(),
        PodBuilder.pod("a").node("n1").build(), PodBuilder.pod("b").node("n1").build());
    assertThat(evicted(r)).containsExactly("a");
  }
}
