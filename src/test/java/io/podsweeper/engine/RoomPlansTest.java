package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.rebuilt;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Taint;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.removal.Result;
import io.podsweeper.removal.Rules;
import io.podsweeper.safety.RemovalBudget;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.PolicyEvaluator;
import io.podsweeper.strategy.RoomPlan;
import io.podsweeper.testing.FakePodSource;
import io.podsweeper.testing.TestClock;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The executor of MakeRoom's plans on the README's fragmentation example (one move: worker-5b8c-p7 leaves node-2 for
 * node-3, then cache-7d9f-c3 fits node-2), with the cluster as a fake pod source, an injected clock, and the removal
 * path, the nominations and the Events as recorders: no threads, no sleeps.
 */
class RoomPlansTest {
  private static final Instant START = Instant.parse("2026-01-01T12:00:00Z");

  /** What the executor wrote: nominations, clears and Events, in order. */
  private static final class Holds implements RoomHolds {
    final List<String> writes = new ArrayList<>();
    boolean refuse;

    @Override
    public boolean nominate(RoomPlan.PodRef pod, String node) {
      writes.add("nominate " + pod.key() + " " + node);
      return !refuse;
    }

    @Override
    public void clear(RoomPlan.PodRef pod, String node) {
      writes.add("clear " + pod.key() + " " + node);
    }

    @Override
    public void event(RoomPlan.PodRef pod, String type, String reason, String message) {
      writes.add(reason);
    }
  }

  /** What the executor wrote on nodes: taints held (with their time) and taken off, and Events, in order. */
  private static final class Nodes implements NodeHolds {
    final List<String> writes = new ArrayList<>();
    boolean refuse;

    @Override
    public boolean hold(String node, Instant until) {
      writes.add("hold " + node + " until " + until);
      return !refuse;
    }

    @Override
    public boolean release(String node) {
      writes.add("release " + node);
      return true;
    }

    @Override
    public void event(String node, String type, String reason, String message) {
      writes.add(reason);
    }
  }

  private final TestClock clock = new TestClock(START);
  private final FakePodSource cluster = new FakePodSource();
  private final Metrics metrics = new Metrics();
  private final Holds holds = new Holds();
  private final Nodes nodes = new Nodes();
  private final List<Decision> handed = new ArrayList<>();
  private final Policy policy = PolicyLoader.load(Path.of("config/examples/anti-affinity-fragmentation-makeroom.yaml"));
  private Rules rules = new Rules(policy, new PolicyEvaluator(policy), 1);
  private boolean leading = true;
  private int looksAsked;
  private RoomPlans rooms;
  private RoomPlan plan;
  private ClusterSnapshot example;

  @BeforeEach
  void example() {
    example = SnapshotReader.read(Path.of("config/examples/anti-affinity-fragmentation-snapshot.yaml"));
    example.pods().forEach(cluster::put);
    cluster.nodes.addAll(example.nodes());
    plan = rules.evaluator().pass(example, START, new RemovalBudget(policy.limits()), false).plans().get(0);
    rooms = new RoomPlans(cluster, clock, metrics, (d, generation) -> handed.add(d), () -> rules, () -> leading, () -> looksAsked++);
    rooms.holdRoomWith(holds);
    rooms.holdNodesWith(nodes);
  }

  private PodRecord cached(String name) {
    return cluster.pods.values().stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow();
  }


  private double abandoned(String reason) {
    return metrics.roomPlansAbandoned.labels(reason).get();
  }

  @Test
  void carriesThePlanOutStepByStepAndClearsTheNomination() {
    rooms.offer(List.of(plan), rules);

    assertThat(holds.writes).containsExactly("nominate shop/cache-7d9f-c3 node-2", "PodSweeperRoomPlanStarted");
    assertThat(metrics.roomPlansStarted.get()).isEqualTo(1);
    assertThat(handed).singleElement().satisfies(d -> {
      assertThat(d.podKey()).isEqualTo("shop/worker-5b8c-p7");
      assertThat(d.strategy()).isEqualTo("MakeRoom");
    });
    // Looked at again, the step is not handed twice while the path has it...
    clock.set(START.plusSeconds(10));
    rooms.look();
    assertThat(handed).hasSize(1);
    // ...but again once it has had it long enough and the pod is still there (the path dropped it silently).
    clock.set(START.plus(RoomPlans.HAND_AGAIN_AFTER).plusSeconds(1));
    rooms.look();
    assertThat(handed).hasSize(2);

    PodRecord worker = cached("worker-5b8c-p7");
    assertThat(rooms.involves(worker)).isTrue();
    assertThat(rooms.involves(cached("api-6c4d-r8"))).isFalse();
    cluster.put(rebuilt(worker).terminating().build());
    rooms.look();
    cluster.pods.remove(worker.key());
    PodRecord replacement = rebuilt(worker).uid("uid-new").on("node-3").build();
    assertThat(rooms.involves(replacement)).as("a sibling of a moved pod").isTrue();
    cluster.put(replacement);
    rooms.look();
    assertThat(handed).hasSize(2);
    assertThat(rooms.inFlight()).containsExactly(plan);

    PodRecord cache = cached("cache-7d9f-c3");
    cluster.put(rebuilt(cache).on("node-2").phase("Pending").build());
    rooms.look();

    assertThat(rooms.inFlight()).isEmpty();
    assertThat(holds.writes).containsExactly("nominate shop/cache-7d9f-c3 node-2", "PodSweeperRoomPlanStarted",
        "clear shop/cache-7d9f-c3 node-2", "PodSweeperRoomPlanCompleted");
    assertThat(metrics.roomPlansCompleted.get()).isEqualTo(1);
    assertThat(rooms.involves(replacement)).isFalse();
  }

  @Test
  void atMostOnePlanPerNode() {
    rooms.offer(List.of(plan), rules);
    RoomPlan other = new RoomPlan(RoomPlan.Kind.MAKE_ROOM, "make-room", Optional.of(new RoomPlan.PodRef("shop", "other", "uid-other")),
        "insufficient cpu", "node-3", List.of(), START);
    rooms.offer(List.of(plan, other), rules);

    assertThat(rooms.inFlight()).containsExactly(plan);
    assertThat(holds.writes).containsOnlyOnce("nominate shop/cache-7d9f-c3 node-2").doesNotContain("nominate shop/other node-3");
    assertThat(metrics.roomPlansStarted.get()).isEqualTo(1);
  }

  @Test
  void aPlanWhosePendingPodGoesIsAbandonedAndEvictsNothingMore() {
    rooms.offer(List.of(plan), rules);
    assertThat(rooms.wants(handed.get(0))).isTrue();
    cluster.pods.remove("shop/cache-7d9f-c3");
    clock.set(START.plus(RoomPlans.HAND_AGAIN_AFTER).plusSeconds(1));
    rooms.look();

    assertThat(handed).hasSize(1);
    assertThat(rooms.wants(handed.get(0))).as("the step still waiting in the path is taken back").isFalse();
    assertThat(rooms.inFlight()).isEmpty();
    assertThat(holds.writes).endsWith("clear shop/cache-7d9f-c3 node-2", "PodSweeperRoomPlanAbandoned");
    assertThat(abandoned("pending-pod-gone")).isEqualTo(1);
  }

  @Test
  void aRefusedStepAbandonsThePlan() {
    rooms.offer(List.of(plan), rules);
    Decision step = handed.get(0);
    rooms.outcome(new Outcome(START, step, Result.DRY_RUN, "", true, "p"));
    assertThat(looksAsked).isZero();
    rooms.outcome(new Outcome(START, step, Result.PDB_REFUSED, "429 Cannot evict pod", false, "p"));
    assertThat(looksAsked).isEqualTo(1);
    rooms.look();

    assertThat(rooms.inFlight()).isEmpty();
    assertThat(abandoned("eviction-refused")).isEqualTo(1);
    assertThat(holds.writes).contains("clear shop/cache-7d9f-c3 node-2");
  }

  /** A hold-back is reported once per pod state: a step the path keeps holding back silently ends the plan too. */
  @Test
  void aStepHeldBackTimeAndAgainAbandonsThePlan() {
    rooms.offer(List.of(plan), rules);
    for (int k = 1; k <= RoomPlans.MAX_HANDS; k++) {
      clock.set(START.plus(RoomPlans.HAND_AGAIN_AFTER.multipliedBy(k)).plusSeconds(k));
      rooms.look();
    }

    assertThat(handed).hasSize(RoomPlans.MAX_HANDS);
    assertThat(rooms.inFlight()).isEmpty();
    assertThat(abandoned("eviction-refused")).isEqualTo(1);
  }

  @Test
  void aPlanNotCompleteWithinItsTimeoutIsAbandoned() {
    rooms.offer(List.of(plan), rules);
    clock.set(START.plus(Duration.ofMinutes(10)).minusSeconds(1));
    rooms.look();
    assertThat(rooms.inFlight()).containsExactly(plan);
    clock.set(START.plus(Duration.ofMinutes(10)));
    rooms.look();

    assertThat(rooms.inFlight()).isEmpty();
    assertThat(abandoned("timed-out")).isEqualTo(1);
  }

  @Test
  void aReloadWithoutMakeRoomAbandonsThePlan() {
    rooms.offer(List.of(plan), rules);
    rooms.policyChanged(new Rules(policy, rules.evaluator(), 2));
    assertThat(rooms.inFlight()).containsExactly(plan);

    Policy without = PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        profiles:
        - name: make-room
          pluginConfig: [{name: RemoveFailedPods, args: {}}]
          plugins: {deschedule: {enabled: [RemoveFailedPods]}}
        """, "p");
    rooms.policyChanged(new Rules(without, new PolicyEvaluator(without), 3));

    assertThat(rooms.inFlight()).isEmpty();
    assertThat(abandoned("policy-changed")).isEqualTo(1);
    assertThat(holds.writes).contains("clear shop/cache-7d9f-c3 node-2");
  }

  @Test
  void inDryRunTheStepsAreRecordedAndNothingIsWritten() {
    rules = new Rules(policy.withDryRun(true), rules.evaluator(), 1);
    rooms.offer(List.of(plan), rules);

    assertThat(holds.writes).isEmpty();
    assertThat(rooms.inFlight()).isEmpty();
    assertThat(metrics.roomPlansStarted.get()).isZero();
    assertThat(handed).extracting(Decision::podKey).containsExactly("shop/worker-5b8c-p7");
  }

  @Test
  void nothingStartsWithoutTheLeaseOrWithoutANomination() {
    leading = false;
    rooms.offer(List.of(plan), rules);
    leading = true;
    holds.refuse = true;
    rooms.offer(List.of(plan), rules);

    assertThat(rooms.inFlight()).isEmpty();
    assertThat(handed).isEmpty();
    assertThat(metrics.roomPlansStarted.get()).isZero();
  }

  /** The example under a profile that makes room for nobody and frees nodes at most 30% used: node-2, then node-3. */
  private RoomPlan freeNodePlan() {
    Policy freeing = PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        profiles:
        - name: make-room
          pluginConfig:
          - {name: MakeRoom, args: {namespaces: {include: [nobody]}, freeNodes: {thresholds: {cpu: 30}, keepEmptyFor: 15m}, planTimeout: 10m}}
          plugins: {balance: {enabled: [MakeRoom]}}
        """, "p");
    rules = new Rules(freeing, new PolicyEvaluator(freeing), 1);
    RoomPlan free = rules.evaluator().pass(example, START, new RemovalBudget(freeing.limits()), false).plans().get(0);
    assertThat(free.kind()).isEqualTo(RoomPlan.Kind.FREE_NODE);
    return free;
  }

  /** Each step's pod leaves, and its replacement is bound where the plan put it. */
  private void moved(RoomPlan.Move m) {
    PodRecord pod = cached(m.name());
    cluster.pods.remove(pod.key());
    cluster.put(rebuilt(pod).uid("uid-new-" + m.name()).on(m.to()).build());
  }

  private void tainted(String node, String value) {
    NodeRecord n = cluster.node(node).orElseThrow();
    cluster.nodes.remove(n);
    cluster.nodes.add(new NodeRecord(n.name(), n.labels(), n.ready(), n.unschedulable(),
        List.of(new Taint(NodeHolds.TAINT_KEY, value, "NoSchedule")), n.allocatable()));
  }

  /**
   * Freeing a node: its taint goes on first (until the plan's timeout plus keepEmptyFor), each pod is evicted in
   * turn once the one before has its replacement bound, and once empty the taint's time moves to keepEmptyFor from then.
   */
  @Test
  void emptiesANodeUnderItsTaintAndKeepsItEmptyForAScaleDown() {
    RoomPlan free = freeNodePlan();
    assertThat(free.moves()).hasSizeGreaterThanOrEqualTo(2);
    rooms.offer(List.of(free), rules);

    assertThat(nodes.writes).containsExactly("hold " + free.target() + " until " + START.plus(Duration.ofMinutes(25)),
        "PodSweeperRoomPlanStarted");
    assertThat(holds.writes).isEmpty();
    for (int k = 0; k < free.moves().size(); k++) {
      RoomPlan.Move m = free.moves().get(k);
      assertThat(handed).hasSize(k + 1).last().satisfies(d -> assertThat(d.podKey()).isEqualTo(m.key()));
      assertThat(handed.get(k).reason()).contains("empties node " + free.target());
      moved(m);
      clock.set(START.plusSeconds(10L * (k + 1)));
      rooms.look();
    }

    assertThat(rooms.inFlight()).isEmpty();
    Instant done = START.plusSeconds(10L * free.moves().size());
    assertThat(nodes.writes).endsWith("hold " + free.target() + " until " + done.plus(Duration.ofMinutes(15)), "PodSweeperRoomPlanCompleted");
    assertThat(nodes.writes).doesNotContain("release " + free.target());
    assertThat(metrics.roomPlansCompleted.get()).isEqualTo(1);
  }

  @Test
  void aNodeWhosePlanIsAbandonedIsUntaintedAtOnce() {
    RoomPlan free = freeNodePlan();
    rooms.offer(List.of(free), rules);
    cluster.nodes.removeIf(n -> n.name().equals(free.target()));
    rooms.look();

    assertThat(rooms.inFlight()).isEmpty();
    assertThat(nodes.writes).endsWith("release " + free.target(), "PodSweeperRoomPlanAbandoned");
    assertThat(abandoned("node-gone")).isEqualTo(1);
  }

  @Test
  void aNodeThatCannotBeTaintedIsNotEmptied() {
    RoomPlan free = freeNodePlan();
    nodes.refuse = true;
    rooms.offer(List.of(free), rules);

    assertThat(rooms.inFlight()).isEmpty();
    assertThat(handed).isEmpty();
    assertThat(metrics.roomPlansStarted.get()).isZero();
  }

  /**
   * A taint of this service whose time is up is taken off by the leader at its next look, whoever wrote it (a process
   * that stopped); one still in its time, one a plan in flight holds, or one whose value is no time of ours stays.
   */
  @Test
  void theLeaderTakesOffTaintsWhoseTimeIsUp() {
    tainted("node-1", NodeHolds.value(START.plusSeconds(60)));
    tainted("node-4", "keep-it");
    rooms.look();
    assertThat(nodes.writes).isEmpty();

    clock.set(START.plusSeconds(60));
    leading = false;
    rooms.look();
    assertThat(nodes.writes).as("a follower writes nothing").isEmpty();
    leading = true;
    rooms.look();
    assertThat(nodes.writes).containsExactly("release node-1");

    RoomPlan free = freeNodePlan();
    rooms.offer(List.of(free), rules);
    tainted(free.target(), NodeHolds.value(START));
    nodes.writes.clear();
    rooms.look();
    assertThat(nodes.writes).doesNotContain("release " + free.target());
  }

  /**
   * A replica that loses the lease abandons its plans at once and lets their holds go: kept, a deposed replica's plan
   * would time out later and clear a nomination the new leader had written since.
   */
  @Test
  void aReplicaThatStepsDownAbandonsItsPlansAndLetsTheirHoldsGo() {
    rooms.offer(List.of(plan), rules);
    assertThat(rooms.inFlight()).hasSize(1);
    rooms.steppedDown();
    assertThat(rooms.inFlight()).isEmpty();
    assertThat(holds.writes).endsWith("clear shop/cache-7d9f-c3 node-2", "PodSweeperRoomPlanAbandoned");
    assertThat(rooms.wants(handed.get(0))).as("the step still waiting in the path is taken back").isFalse();

    RoomPlan free = freeNodePlan();
    rooms.offer(List.of(free), rules);
    assertThat(rooms.inFlight()).hasSize(1);
    rooms.steppedDown();
    assertThat(rooms.inFlight()).isEmpty();
    assertThat(nodes.writes).endsWith("release " + free.target(), "PodSweeperRoomPlanAbandoned");
    assertThat(abandoned("leadership-lost")).isEqualTo(2);
  }
}
