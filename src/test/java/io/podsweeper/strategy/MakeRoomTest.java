package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.NOW;
import static io.podsweeper.cluster.PodFixtures.node;
import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.cluster.PodFixtures.rebuilt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.policy.LabelSelector;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.safety.RemovalBudget;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * MakeRoom's plans, scenario by scenario: the fragmentation example, a chain of two moves, a PodDisruptionBudget that
 * forbids the obvious move, a higher-priority pod in the way, a topology spread constraint that steers a replacement,
 * a pod that fits nowhere, freeing a node; and what {@link RoomPlan#progress} says as the cluster moves.
 */
class MakeRoomTest {
  private static final String HOST = "kubernetes.io/hostname";
  private static final Instant EXAMPLE_NOW = Instant.parse("2026-01-01T12:00:00Z");

  private static PolicyEvaluator policy(String limits, String args) {
    return new PolicyEvaluator(PolicyLoader.parse("apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n" + limits
        + "profiles:\n- name: p\n  pluginConfig:\n  - name: MakeRoom\n    args: " + args + "\n"
        + "  plugins:\n    balance:\n      enabled: [MakeRoom]\n", "test"));
  }

  private static PolicyEvaluator policy(String args) {
    return policy("", args);
  }

  private static PassResult pass(PolicyEvaluator e, ClusterSnapshot snapshot, Instant at) {
    return e.pass(snapshot, at, new RemovalBudget(e.policy().limits()), true);
  }

  private static ClusterSnapshot snapshot(List<NodeRecord> nodes, List<PdbRecord> pdbs, PodRecord... pods) {
    return ClusterSnapshot.of(List.of(pods), List.of(), nodes, pdbs, List.of(), Map.of());
  }

  private static NodeRecord host(String name, long cpu) {
    return node(name).label(HOST, name).cpu(cpu).build();
  }

  /** A pod the scheduler has found no node for these ten minutes. */
  private static PodFixtures.PodBuilder pending(String name, long cpu) {
    return pod(name).unscheduled().requests("cpu", cpu).condition("PodScheduled", "False", "Unschedulable", NOW.minusSeconds(600));
  }

  private static Scheduling.PodAffinityTerm notWith(String app) {
    return new Scheduling.PodAffinityTerm(new LabelSelector(Map.of("app", app), List.of()), Set.of(), Optional.empty(), HOST);
  }

  private static ClusterSnapshot example() {
    return SnapshotReader.read(Path.of("config/examples/anti-affinity-fragmentation-snapshot.yaml"));
  }

  private static PolicyEvaluator examplePolicy() {
    return new PolicyEvaluator(PolicyLoader.load(Path.of("config/examples/anti-affinity-fragmentation-makeroom.yaml")));
  }

  /** The README's example: one small pod leaves node-2 for the node with the most room, and the cache replica fits node-2. */
  @Test
  void makesRoomInTheFragmentationExample() {
    PassResult result = pass(examplePolicy(), example(), EXAMPLE_NOW);

    assertThat(result.decisions()).isEmpty();
    assertThat(result.plans()).singleElement().satisfies(plan -> {
      assertThat(plan.describe()).isEqualTo("shop/cache-7d9f-c3 (Pending: insufficient cpu) fits node-2 after moving"
          + " worker-5b8c-p7 node-2→node-3 (1400m cpu free there)");
      assertThat(plan.kind()).isEqualTo(RoomPlan.Kind.MAKE_ROOM);
      assertThat(plan.moves()).singleElement().satisfies(m -> {
        assertThat(m.uid()).isEqualTo("uid-worker-5b8c-p7");
        assertThat(m.resourceVersion()).isEqualTo("1");
        assertThat(m.owner()).isEqualTo("ReplicaSet/worker-5b8c");
        assertThat(m.ownerPlaced()).isEqualTo(5);
      });
      assertThat(plan.progress(example()).step()).isEqualTo(RoomPlan.Step.EVICT);
    });
  }

  /**
   * The pod waits for the scheduler pendingFor first: an Unschedulable condition younger than that, a pod the scheduler
   * has not tried (no condition), one held by scheduling gates or on its way out are not made room for.
   */
  @Test
  void onlyPodsUnschedulableForPendingForAreMadeRoomFor() {
    ClusterSnapshot example = example();
    Instant tooSoon = Instant.parse("2026-01-01T08:04:00Z");
    assertThat(pass(examplePolicy(), example, tooSoon).plans()).isEmpty();
    assertThat(pass(examplePolicy(), example, Instant.parse("2026-01-01T08:06:00Z")).plans()).hasSize(1);

    NodeRecord n1 = host("n1", 1000);
    NodeRecord n2 = host("n2", 1000);
    PodRecord filler = pod("filler").requests("cpu", 600).on("n1").build();
    PodRecord untried = pod("untried").unscheduled().requests("cpu", 600).build();
    PodRecord gated = pod("gated").unscheduled().requests("cpu", 600).condition("PodScheduled", "False", "SchedulingGated", NOW.minusSeconds(600)).build();
    PodRecord leaving = pending("leaving", 600).terminating().build();
    PodRecord other = pod("other").requests("cpu", 600).on("n2").build();
    assertThat(pass(policy("{}"), snapshot(List.of(n1, n2), List.of(), filler, other, untried, gated, leaving), NOW).plans()).isEmpty();
    assertThat(MakeRoom.gated(gated)).isTrue();
    assertThat(MakeRoom.unschedulableSince(pending("p", 1).build())).hasValue(NOW.minusSeconds(600));
  }

  /**
   * A chain: the pod only fits n3 once w leaves it, and w fits no node as the cluster is; y, a small pod, leaves n2
   * for n4 first, and w takes its place. Two moves, in that order.
   */
  @Test
  void chainsTwoMoves() {
    List<NodeRecord> nodes = List.of(host("n1", 2000), host("n2", 2000), host("n3", 2000), host("n4", 2000));
    PodRecord[] pods = {
      pod("cache-a").label("app", "cache").annotation(PodRecord.PROTECT_ANNOTATION, "true").requests("cpu", 1200).on("n1").build(),
      pod("x").requests("cpu", 700).on("n1").build(),
      pod("cache-b").label("app", "cache").annotation(PodRecord.PROTECT_ANNOTATION, "true").requests("cpu", 1000).on("n2").build(),
      pod("y").requests("cpu", 500).on("n2").build(),
      pod("w").requests("cpu", 900).on("n3").build(),
      pod("z").requests("cpu", 1500).on("n4").build(),
      pending("cache-c", 1200).label("app", "cache").antiAffinity(notWith("cache")).build()};

    PassResult result = pass(policy("{}"), snapshot(nodes, List.of(), pods), NOW);

    assertThat(result.plans()).singleElement().satisfies(plan -> assertThat(plan.describe()).isEqualTo("default/cache-c (Pending:"
        + " insufficient cpu) fits n3 after moving y n2→n4 (500m cpu free there) and w n3→n2 (once y leaves, 1000m cpu free there)"));
    // One move only: the chain is not allowed, and there is no other way.
    PassResult oneMove = pass(policy("{maxMovesPerPlan: 1}"), snapshot(nodes, List.of(), pods), NOW);
    assertThat(oneMove.plans()).isEmpty();
    assertThat(oneMove.notes()).singleElement().asString().startsWith("p/MakeRoom: default/cache-c (Pending): no plan: insufficient cpu; ")
        .contains("n3: default/w would fit no other node (no move left within maxMovesPerPlan 1 to make room there)");
    // The limits hold the whole plan: one eviction per window is not enough for it.
    PassResult limited = pass(policy("limits: {maxTotal: 1}\n", "{}"), snapshot(nodes, List.of(), pods), NOW);
    assertThat(limited.plans()).isEmpty();
    assertThat(limited.notes()).singleElement().asString().contains("limits.maxTotal 1 reached by this pass's moves");
  }

  /** A PodDisruptionBudget that allows no disruption forbids moving the workers: an api pod leaves node-3 instead. */
  @Test
  void aDisruptionBudgetForbidsTheObviousMove() {
    ClusterSnapshot example = example();
    PdbRecord workers = new PdbRecord("shop", "worker", new LabelSelector(Map.of("app", "worker"), List.of()), OptionalInt.of(0));
    ClusterSnapshot guarded = ClusterSnapshot.of(example.pods(), List.of(), example.nodes(), List.of(workers), List.of(), Map.of());

    assertThat(pass(examplePolicy(), guarded, EXAMPLE_NOW).plans()).singleElement().extracting(RoomPlan::describe)
        .isEqualTo("shop/cache-7d9f-c3 (Pending: insufficient cpu) fits node-3 after moving api-6c4d-r8 node-3→node-2 (1400m cpu free there)");
    // A budget that allows a disruption, or one whose status is unread (the live cache's), lets the workers move; but a
    // move no budget covers is less disruptive, so the api pod goes.
    for (OptionalInt allowed : List.of(OptionalInt.of(1), OptionalInt.empty())) {
      PdbRecord budget = new PdbRecord("shop", "worker", workers.selector(), allowed);
      assertThat(pass(examplePolicy(), ClusterSnapshot.of(example.pods(), List.of(), example.nodes(), List.of(budget), List.of(), Map.of()),
          EXAMPLE_NOW).plans()).singleElement().extracting(RoomPlan::target).isEqualTo("node-3");
    }
    // Both covered alike, one disruption each: the first node by name, as without budgets.
    PdbRecord apis = new PdbRecord("shop", "api", new LabelSelector(Map.of("app", "api"), List.of()), OptionalInt.of(1));
    PdbRecord one = new PdbRecord("shop", "worker", workers.selector(), OptionalInt.of(1));
    assertThat(pass(examplePolicy(), ClusterSnapshot.of(example.pods(), List.of(), example.nodes(), List.of(one, apis), List.of(), Map.of()),
        EXAMPLE_NOW).plans()).singleElement().extracting(RoomPlan::target).isEqualTo("node-2");
  }

  private static ClusterSnapshot withPriority(ClusterSnapshot example, String app, int priority) {
    List<PodRecord> pods = example.pods().stream().map(p -> !app.equals(p.labels().get("app")) ? p : new PodRecord(p.namespace(), p.name(),
        p.uid(), p.resourceVersion(), p.creationTimestamp(), p.deletionTimestamp(), p.nodeName(), p.phase(), p.reason(), p.labels(),
        p.annotations(), p.owners(), p.containers(), OptionalInt.of(priority), p.priorityClassName(), p.startTime(), p.conditions(),
        p.volumes(), p.scheduling(), p.images(), p.schedulingGates(), p.nodeShutdownMessage())).toList();
    return ClusterSnapshot.of(pods, List.of(), example.nodes());
  }

  /** Never a pod of higher priority than the pending one: the workers stay, an api pod moves; both higher, no plan. */
  @Test
  void aHigherPriorityPodIsNeverMoved() {
    ClusterSnapshot workersHigh = withPriority(example(), "worker", 1000);
    assertThat(pass(examplePolicy(), workersHigh, EXAMPLE_NOW).plans()).singleElement().extracting(RoomPlan::target).isEqualTo("node-3");

    PassResult bothHigh = pass(examplePolicy(), withPriority(workersHigh, "api", 1000), EXAMPLE_NOW);
    assertThat(bothHigh.plans()).isEmpty();
    assertThat(bothHigh.notes()).singleElement().asString()
        .isEqualTo("make-room/MakeRoom: shop/cache-7d9f-c3 (Pending): no plan: insufficient cpu;"
            + " node-2: the pods that may move there free too little room within maxMovesPerPlan 3;"
            + " node-3: the pods that may move there free too little room within maxMovesPerPlan 3;"
            + " node-1: shop/cache-7d9f-a1 would fit no other node, even after moving another pod");
  }

  /**
   * The moved pod's own topology spread constraint (zone, maxSkew 1) forbids the node with the most room (zone b, where
   * its sibling runs): its replacement goes to the other node of its zone.
   */
  @Test
  void aTopologySpreadConstraintSteersTheReplacement() {
    NodeRecord n1 = node("n1").label(HOST, "n1").label("zone", "a").cpu(2000).build();
    NodeRecord n2 = node("n2").label(HOST, "n2").label("zone", "a").cpu(2000).build();
    NodeRecord n3 = node("n3").label(HOST, "n3").label("zone", "b").cpu(4000).build();
    Scheduling.SpreadConstraint byZone = new Scheduling.SpreadConstraint(1, "zone", "DoNotSchedule",
        new LabelSelector(Map.of("app", "web"), List.of()), List.of(), true, false);
    PodRecord[] pods = {
      pod("web-1").label("app", "web").spread(byZone).requests("cpu", 300).on("n1").build(),
      pod("big").requests("cpu", 1400).on("n1").build(),
      pod("web-2").label("app", "web").spread(byZone).requests("cpu", 300).on("n3").build(),
      pod("fill").requests("cpu", 1500).on("n2").build(),
      pod("fill-b").requests("cpu", 2700).on("n3").build(),
      pending("p", 600).nodeSelector(Map.of("zone", "a")).build()};

    PassResult result = pass(policy("{}"), snapshot(List.of(n1, n2, n3), List.of(), pods), NOW);

    assertThat(result.plans()).singleElement().extracting(RoomPlan::describe)
        .isEqualTo("default/p (Pending: insufficient cpu, node affinity) fits n1 after moving web-1 n1→n2 (500m cpu free there)");
    // Without the constraint, the replacement would go where there is the most room.
    pods[0] = pod("web-1").label("app", "web").requests("cpu", 300).on("n1").build();
    assertThat(pass(policy("{}"), snapshot(List.of(n1, n2, n3), List.of(), pods), NOW).plans()).singleElement()
        .extracting(RoomPlan::describe).asString().contains("web-1 n1→n3");
  }

  /** A pod bigger than any node, or that no node may take: no plan, and the note says why in the scheduler's words. */
  @Test
  void aPodThatFitsNowhereGetsNoPlanSaidPlainly() {
    List<NodeRecord> nodes = List.of(host("n1", 2000), host("n2", 2000));
    PassResult tooBig = pass(policy("{}"), snapshot(nodes, List.of(), pod("a").requests("cpu", 500).on("n1").build(),
        pending("huge", 3000).build()), NOW);
    assertThat(tooBig.plans()).isEmpty();
    assertThat(tooBig.notes()).containsExactly("p/MakeRoom: default/huge (Pending): no plan: insufficient cpu; no node it may go to frees"
        + " enough room with 3 move(s) or fewer (maxMovesPerPlan), even moving every pod there");
    PassResult nowhere = pass(policy("{}"), snapshot(nodes, List.of(), pending("picky", 100).nodeSelector(Map.of("disk", "ssd")).build()), NOW);
    assertThat(nowhere.notes()).containsExactly("p/MakeRoom: default/picky (Pending): no plan: node affinity on every node;"
        + " no move changes that (node affinity, taints, cordons)");
    PassResult fits = pass(policy("{}"), snapshot(nodes, List.of(), pending("small", 100).build()), NOW);
    assertThat(fits.notes()).containsExactly("p/MakeRoom: default/small (Pending): no plan: fits node n1 as the cluster is now:"
        + " the scheduler will place it, nothing to move");
  }

  /**
   * Freeing a node: the least used node under the thresholds whose every pod (but DaemonSet pods) fits elsewhere. A
   * bare pod there keeps it.
   */
  @Test
  void freesAnUnderUsedNode() {
    List<NodeRecord> nodes = List.of(host("n1", 4000), host("n2", 4000), host("n3", 4000));
    PodRecord[] pods = {
      pod("busy-1").requests("cpu", 2500).on("n1").build(),
      pod("busy-2").requests("cpu", 2000).on("n2").build(),
      pod("a").requests("cpu", 600).on("n3").build(),
      pod("b").requests("cpu", 400).on("n3").build(),
      pod("agent").ownedBy("DaemonSet", "agent").requests("cpu", 100).on("n3").build()};
    String args = "{freeNodes: {thresholds: {cpu: 30}}}";

    PassResult result = pass(policy(args), snapshot(nodes, List.of(), pods), NOW);

    assertThat(result.plans()).singleElement().satisfies(plan -> {
      assertThat(plan.describe()).isEqualTo("node n3 can be emptied by moving default/a n3→n2 (2000m cpu free there) and default/b n3→n2"
          + " (1400m cpu free there)");
      assertThat(plan.kind()).isEqualTo(RoomPlan.Kind.FREE_NODE);
      assertThat(plan.progress(snapshot(nodes, List.of(), pods)).step()).isEqualTo(RoomPlan.Step.EVICT);
      // Its executor cordons the node to keep the replacements off it: the plan still holds.
      List<NodeRecord> cordoned = List.of(nodes.get(0), nodes.get(1), node("n3").label(HOST, "n3").cpu(4000).unschedulable().build());
      assertThat(plan.progress(snapshot(cordoned, List.of(), pods)).step()).isEqualTo(RoomPlan.Step.EVICT);
    });
    List<PodRecord> withBare = new ArrayList<>(List.of(pods));
    withBare.add(pod("bare").bare().requests("cpu", 100).on("n3").build());
    PassResult kept = pass(policy(args), snapshot(nodes, List.of(), withBare.toArray(PodRecord[]::new)), NOW);
    assertThat(kept.plans()).isEmpty();
    assertThat(kept.notes()).containsExactly("p/MakeRoom: freeNodes: no under-used node can be emptied: n3: default/bare may not move"
        + " (a bare pod: nothing would recreate it)");
  }

  /** What {@link RoomPlan#progress} says as the world moves, from the first eviction to the pod bound. */
  @Test
  void progressFollowsTheCluster() {
    ClusterSnapshot example = example();
    RoomPlan plan = pass(examplePolicy(), example, EXAMPLE_NOW).plans().get(0);
    PodRecord worker = find(example, "worker-5b8c-p7");
    PodRecord cache = find(example, "cache-7d9f-c3");

    assertThat(plan.progress(example)).satisfies(p -> {
      assertThat(p.step()).isEqualTo(RoomPlan.Step.EVICT);
      assertThat(p.index()).isZero();
    });
    Decision evict = plan.decision(0, worker, EXAMPLE_NOW);
    assertThat(evict.uid()).isEqualTo(worker.uid());
    assertThat(evict.strategy()).isEqualTo("MakeRoom");
    assertThat(evict.profile()).isEqualTo("make-room");
    assertThat(evict.reason()).isEqualTo("makes room for shop/cache-7d9f-c3 on node-2: step 1 of 1, its replacement fits node-3"
        + " (1400m cpu free there)");
    assertThatThrownBy(() -> plan.decision(0, cache, EXAMPLE_NOW)).isInstanceOf(IllegalArgumentException.class);

    assertThat(plan.progress(replace(example, worker, rebuilt(worker).terminating().build())).step()).isEqualTo(RoomPlan.Step.WAIT);
    ClusterSnapshot evicted = replace(example, worker);
    assertThat(plan.progress(evicted)).satisfies(p -> {
      assertThat(p.step()).isEqualTo(RoomPlan.Step.WAIT);
      assertThat(p.detail()).isEqualTo("waiting for the replacement of shop/worker-5b8c-p7 (ReplicaSet/worker-5b8c) to be bound to a node");
    });
    PodRecord replacement = rebuilt(worker).uid("uid-new").on("node-3").build();
    ClusterSnapshot replaced = add(evicted, replacement);
    assertThat(plan.progress(replaced).step()).isEqualTo(RoomPlan.Step.BIND);
    assertThat(plan.progress(replace(replaced, cache, rebuilt(cache).on("node-2").phase("Pending").build())).step())
        .isEqualTo(RoomPlan.Step.COMPLETE);

    // What abandons it.
    assertThat(plan.progress(replace(replaced, cache, rebuilt(cache).on("node-3").build())).abandon()).hasValue(PlanAbandon.SCHEDULED_ELSEWHERE);
    assertThat(plan.progress(replace(example, cache)).abandon()).hasValue(PlanAbandon.PENDING_POD_GONE);
    PodRecord taken = rebuilt(worker).uid("uid-new").on("node-2").build();
    assertThat(plan.progress(add(evicted, taken))).satisfies(p -> {
      assertThat(p.abandon()).hasValue(PlanAbandon.NO_LONGER_FITS);
      assertThat(p.detail()).isEqualTo("shop/cache-7d9f-c3 would no longer fit node-2: Insufficient cpu");
    });
    List<NodeRecord> cordoned = example.nodes().stream().map(n -> !n.name().equals("node-2") ? n
        : new NodeRecord(n.name(), n.labels(), n.ready(), true, n.taints(), n.allocatable())).toList();
    assertThat(plan.progress(ClusterSnapshot.of(example.pods(), List.of(), cordoned)).abandon()).hasValue(PlanAbandon.NODE_GONE);
    // Before its step, a pod to move that fits nowhere any more abandons the plan too: node-3 and the others filled up.
    ClusterSnapshot full = add(add(add(example, pod("fill-3").ns("shop").requests("cpu", 1400).on("node-3").build()),
        pod("fill-1").ns("shop").requests("cpu", 300).on("node-1").build()), pod("fill-4").ns("shop").requests("cpu", 400).on("node-4").build());
    assertThat(plan.progress(full).abandon()).hasValue(PlanAbandon.NO_LONGER_FITS);
    assertThat(Stream.of(PlanAbandon.values()).map(PlanAbandon::wireName)).contains("no-longer-fits", "timed-out");
  }

  /**
   * What {@code explain} and the forecast say: the pending pod's plan (or why none), the step that moves a pod, and the
   * plans as a pass would make them now, in the forecast's JSON too.
   */
  @Test
  void explainAndTheForecastSayThePlan() {
    ClusterSnapshot example = example();
    PolicyEvaluator e = examplePolicy();
    String plan = "shop/cache-7d9f-c3 (Pending: insufficient cpu) fits node-2 after moving worker-5b8c-p7 node-2→node-3 (1400m cpu free there)";

    assertThat(e.explain(find(example, "cache-7d9f-c3"), example, EXAMPLE_NOW)).contains("room plan (profile make-room): " + plan);
    assertThat(e.explain(find(example, "worker-5b8c-p7"), example, EXAMPLE_NOW))
        .contains("room plan (profile make-room): moves it, step 1 of 1: " + plan)
        .contains("verdict: evict as step 1 of 1 of the room plan above, when it is carried out (one step at a time)");
    assertThat(e.explain(find(example, "worker-5b8c-q9"), example, EXAMPLE_NOW)).noneMatch(l -> l.startsWith("room plan"))
        .contains("verdict: never, as the pod is now");
    ClusterSnapshot high = withPriority(withPriority(example, "worker", 1000), "api", 1000);
    assertThat(e.explain(find(high, "cache-7d9f-c3"), high, EXAMPLE_NOW)).anySatisfy(l -> assertThat(l)
        .startsWith("room plan (profile make-room): no plan: insufficient cpu; node-2:"));

    Forecast forecast = e.forecast(example, EXAMPLE_NOW, Duration.ofHours(1));
    assertThat(forecast.plans()).extracting(RoomPlan::describe).containsExactly(plan);
    var json = forecast.writeTo(new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode());
    assertThat(json.path("plans").get(0).path("summary").asText()).isEqualTo(plan);
    assertThat(json.path("plans").get(0).path("moves").get(0).path("to").asText()).isEqualTo("node-3");
    assertThat(json.path("plans").get(0).path("pending").path("uid").asText()).isEqualTo("uid-cache-7d9f-c3");
    assertThat(new PolicyEvaluator(PolicyLoader.load(Path.of("config/examples/anti-affinity-fragmentation-policy.yaml")))
        .forecast(example, EXAMPLE_NOW, Duration.ofHours(1)).plans()).isEmpty();
  }

  private static PodRecord find(ClusterSnapshot s, String name) {
    return s.pods().stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow();
  }


  /** The snapshot with {@code pod} replaced by {@code by} (none: removed). */
  private static ClusterSnapshot replace(ClusterSnapshot s, PodRecord pod, PodRecord... by) {
    List<PodRecord> pods = new ArrayList<>(s.pods().stream().filter(p -> !p.uid().equals(pod.uid())).toList());
    pods.addAll(List.of(by));
    return ClusterSnapshot.of(pods, List.of(), s.nodes());
  }

  private static ClusterSnapshot add(ClusterSnapshot s, PodRecord pod) {
    List<PodRecord> pods = new ArrayList<>(s.pods());
    pods.add(pod);
    return ClusterSnapshot.of(pods, List.of(), s.nodes());
  }
}
