package io.podsweeper.strategy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.kube.PodRecords;
import io.podsweeper.kube.PodRemover;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.safety.RemovalBudget;
import io.podsweeper.testing.Manifests;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestNodes;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What an executor of MakeRoom's plans relies on, against a real kube-scheduler and kube-controller-manager (1.20, as
 * the test API server; no kubelet, so bound pods stay Pending): an evicted ReplicaSet pod is recreated and bound; a
 * pending pod's {@code status.nominatedNodeName}, written by someone else than the scheduler, holds its node against
 * the replacements of the pods that move for it, and survives the scheduler's retries; and a plan carried out step by
 * step through the real removal request ends with the pending pod bound where planned, no other pod evicted. Then the
 * executor itself ({@code engine/RoomPlans}) in the live service: a plan carried out to the end, and one abandoned
 * mid-way. The API server's audit log is the witness of what was evicted. See docs/design.md "Holding the room".
 *
 * <p>Every test has nodes of its own, labelled with its namespace, and every pod a node selector for them, so no
 * test's pod lands on another's node; the nodes go at the end.
 */
class MakeRoomSchedulerIT {
  private static final String TEST_LABEL = "podsweeper.io/test";
  private static TestApiServer server;
  private static KubernetesClient client;
  private static PodRemover remover;
  private String ns;

  @BeforeAll
  static void start() {
    server = TestApiServer.startWithScheduling();
    client = server.client();
    remover = PodRemover.create(client, () -> OptionalLong.of(0));
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  @AfterEach
  void dropNodes() {
    if (ns != null) {
      client.nodes().withLabel(TEST_LABEL, ns).delete();
    }
  }

  private void nodes(long cpuMillis, String... names) {
    for (String name : names) {
      TestNodes.ready(client, name, cpuMillis, Map.of(TEST_LABEL, ns));
    }
  }

  /** A pod of this test: on {@code node} (null: for the scheduler), with a cpu request, labels, and optionally one per node of its app. */
  private Pod pod(String name, String node, String cpu, String app, boolean onePerNode) {
    PodBuilder pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(ns).withLabels(Map.of("app", app)).endMetadata()
        .withNewSpec().withNodeName(node).withNodeSelector(Map.of(TEST_LABEL, ns)).withTerminationGracePeriodSeconds(0L)
        .addNewContainer().withName("main").withImage("busybox:1.36").withNewResources().addToRequests("cpu", new Quantity(cpu))
        .endResources().endContainer().endSpec();
    if (onePerNode) {
      pod.editSpec().withNewAffinity().withNewPodAntiAffinity().addNewRequiredDuringSchedulingIgnoredDuringExecution()
          .withTopologyKey("kubernetes.io/hostname").withNewLabelSelector().addToMatchLabels("app", app).endLabelSelector()
          .endRequiredDuringSchedulingIgnoredDuringExecution().endPodAntiAffinity().endAffinity().endSpec();
    }
    return client.pods().inNamespace(ns).resource(pod.build()).create();
  }

  /** A ReplicaSet of this test's pods of {@code app}: it adopts the ones already there and keeps {@code replicas}. */
  private void replicaSet(String app, int replicas, String cpu, boolean onePerNode) {
    Pod template = new PodBuilder().withNewMetadata().withLabels(Map.of("app", app)).endMetadata().withNewSpec()
        .withNodeSelector(Map.of(TEST_LABEL, ns)).withTerminationGracePeriodSeconds(0L).addNewContainer().withName("main")
        .withImage("busybox:1.36").withNewResources().addToRequests("cpu", new Quantity(cpu)).endResources().endContainer().endSpec().build();
    if (onePerNode) {
      template.getSpec().setAffinity(client.pods().inNamespace(ns).list().getItems().stream()
          .filter(p -> app.equals(p.getMetadata().getLabels().get("app"))).findFirst().orElseThrow().getSpec().getAffinity());
    }
    client.apps().replicaSets().inNamespace(ns).resource(new ReplicaSetBuilder().withNewMetadata().withName(app).endMetadata()
        .withNewSpec().withReplicas(replicas).withNewSelector().addToMatchLabels("app", app).endSelector()
        .withNewTemplate().withMetadata(template.getMetadata()).withSpec(template.getSpec()).endTemplate().endSpec().build()).create();
    await().atMost(Duration.ofSeconds(30)).until(() -> pods(app).stream().filter(p -> !p.getMetadata().getOwnerReferences().isEmpty()).count()
        == replicas);
  }

  private List<Pod> pods(String app) {
    return client.pods().inNamespace(ns).withLabel("app", app).list().getItems();
  }

  private Pod get(String name) {
    return client.pods().inNamespace(ns).withName(name).get();
  }

  /** The pods of {@code app} bound to a node and not terminating, by node. */
  private List<String> boundNodes(String app) {
    return pods(app).stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null && p.getSpec().getNodeName() != null)
        .map(p -> p.getSpec().getNodeName()).sorted().toList();
  }

  private RequestResult evict(Pod pod) {
    PodRecord record = PodRecords.pod(pod);
    return remover.remove(Decision.of(record, "test", "test", "test", "a step of the test", Instant.now()), false);
  }

  private void nominate(String pod, String node) {
    client.pods().inNamespace(ns).withName(pod).editStatus(p -> new PodBuilder(p).editStatus().withNominatedNodeName(node).endStatus().build());
  }

  private void awaitUnschedulable(String pod) {
    await().atMost(Duration.ofSeconds(30)).until(() -> get(pod).getStatus().getConditions().stream()
        .anyMatch(c -> "PodScheduled".equals(c.getType()) && "Unschedulable".equals(c.getReason())));
  }

  /** How often the scheduler has said it found no node for the pod, by its own log. */
  private long schedulerRetries(String pod) {
    return server.log("scheduler").stream().filter(l -> l.contains("Unable to schedule pod") && l.contains("pod=\"" + ns + "/" + pod + "\"")).count();
  }

  @Test
  void anEvictedReplicaSetPodIsRecreatedAndBound() {
    ns = server.newNamespace("recreate");
    nodes(2000, ns + "-a");
    replicaSet("web", 2, "100m", false);
    await().atMost(Duration.ofSeconds(30)).until(() -> boundNodes("web").size() == 2);
    Pod first = pods("web").get(0);

    assertThat(evict(first).outcome()).isEqualTo(RequestResult.Outcome.REMOVED);

    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      List<Pod> now = pods("web");
      assertThat(now).extracting(p -> p.getMetadata().getUid()).doesNotContain(first.getMetadata().getUid()).hasSize(2);
      assertThat(boundNodes("web")).containsExactly(ns + "-a", ns + "-a");
    });
    assertThat(server.removalRequests(ns)).extracting(TestApiServer.AuditEvent::name).containsExactly(first.getMetadata().getName());
  }

  /**
   * The executor's way to keep the room: the pending pod's nominatedNodeName. The pending pod (1800m) cannot fit n3
   * (2000m) until both small pods (300m each) leave. Evicted without a nomination, a small pod's replacement goes back
   * to n3, the node with the most room; once the pending pod is nominated to n3, the scheduler counts it there for
   * every pod of its priority or lower, so the replacements go elsewhere; it leaves the nomination in place while it
   * retries the pod and finds no node; and once n3 is empty it binds the pod there.
   */
  @Test
  void aNominationHoldsTheNodeForThePendingPod() {
    String n3 = twoSmallPodsInTheWay("nominate")[2];

    // Without a nomination, the room goes back to where it was.
    assertThat(evict(get("small-1")).outcome()).isEqualTo(RequestResult.Outcome.REMOVED);
    await().atMost(Duration.ofSeconds(30)).until(() -> boundNodes("small").size() == 2);
    assertThat(boundNodes("small")).containsExactly(n3, n3);

    nominate("cache-c", n3);
    long retries = schedulerRetries("cache-c");
    Pod back = pods("small").stream().filter(p -> !p.getMetadata().getName().equals("small-2")).findFirst().orElseThrow();
    assertThat(evict(back).outcome()).isEqualTo(RequestResult.Outcome.REMOVED);
    await().atMost(Duration.ofSeconds(30)).until(() -> boundNodes("small").size() == 2);
    assertThat(boundNodes("small")).containsOnlyOnce(n3).doesNotHaveDuplicates();
    // The scheduler tried the pod again (a pod was deleted) and found no node: the nomination stays.
    await().atMost(Duration.ofSeconds(30)).until(() -> schedulerRetries("cache-c") > retries);
    assertThat(get("cache-c").getStatus().getNominatedNodeName()).isEqualTo(n3);
    assertThat(get("cache-c").getSpec().getNodeName()).isNull();

    assertThat(evict(get("small-2")).outcome()).isEqualTo(RequestResult.Outcome.REMOVED);
    await().atMost(Duration.ofSeconds(30)).until(() -> n3.equals(get("cache-c").getSpec().getNodeName()));
    await().atMost(Duration.ofSeconds(30)).until(() -> boundNodes("small").size() == 2);
    assertThat(boundNodes("small")).doesNotContain(n3);
    // Bound, the pod keeps the nomination it was given: nothing clears it.
    assertThat(get("cache-c").getStatus().getNominatedNodeName()).isEqualTo(n3);
    assertThat(server.removalRequests(ns)).hasSize(3);
  }

  /**
   * The fragmentation example, live: MakeRoom's plan on the cluster as read from the API server, carried out as an
   * executor will (nominate the pending pod to the target, then each step {@link RoomPlan#progress} names, through the
   * real removal request), ends with the cache replica bound to the target, and only the pods the plan named evicted.
   */
  @Test
  void aPlanCarriedOutStepByStepBindsThePendingPod() {
    String[] n = fragmentation("plan");

    PolicyEvaluator makeRoom = new PolicyEvaluator(PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        profiles:
        - name: make-room
          pluginConfig:
          - {name: MakeRoom, args: {pendingFor: 0s}}
          plugins: {balance: {enabled: [MakeRoom]}}
        """, "inline"));
    ClusterSnapshot view = SnapshotReader.fromCluster(client, false);
    PassResult pass = makeRoom.pass(view, Instant.now(), new RemovalBudget(makeRoom.policy().limits()), false);
    assertThat(pass.plans()).as("notes: %s", pass.notes()).singleElement();
    RoomPlan plan = pass.plans().get(0);
    assertThat(plan.describe()).isEqualTo(ns + "/cache-c3 (Pending: insufficient cpu) fits " + n[1] + " after moving batch-p7 "
        + n[1] + "→" + n[2] + " (1400m cpu free there)");

    nominate("cache-c3", plan.target());
    Instant deadline = Instant.now().plusSeconds(60);
    RoomPlan.Progress progress = plan.progress(view);
    while (progress.step() != RoomPlan.Step.COMPLETE) {
      switch (progress.step()) {
        case EVICT -> {
          RoomPlan.Move move = plan.moves().get(progress.index());
          PodRecord pod = view.podsInNamespace(move.namespace()).stream().filter(p -> p.uid().equals(move.uid())).findFirst().orElseThrow();
          assertThat(remover.remove(plan.decision(progress.index(), pod, Instant.now()), false).outcome()).isEqualTo(RequestResult.Outcome.REMOVED);
        }
        case WAIT, BIND -> sleep();
        case ABANDON -> fail("plan abandoned: " + progress.abandon().orElseThrow().wireName() + ": " + progress.detail());
        default -> fail("unexpected " + progress);
      }
      if (Instant.now().isAfter(deadline)) {
        fail("plan not complete after 60 s: " + progress.detail() + "\nscheduler:\n" + server.logTail("scheduler", 20));
      }
      view = SnapshotReader.fromCluster(client, false);
      progress = plan.progress(view);
    }

    assertThat(get("cache-c3").getSpec().getNodeName()).isEqualTo(n[1]);
    assertThat(server.removalRequests(ns)).extracting(TestApiServer.AuditEvent::name).containsExactly("batch-p7");
    // The replacement went elsewhere: with the cache replica held there, the target had no room for it.
    assertThat(boundNodes("batch")).hasSize(2).filteredOn(n[1]::equals).hasSize(1);
  }

  /**
   * Three 2000m nodes of a new namespace: cache-a and cache-b (1500m, one per node) on the first two, two small
   * ReplicaSet pods (300m) on the third, and cache-c (1800m) pending: it fits the third only once both small pods left.
   */
  private String[] twoSmallPodsInTheWay(String prefix) {
    ns = server.newNamespace(prefix);
    String[] n = {ns + "-1", ns + "-2", ns + "-3"};
    nodes(2000, n);
    pod("cache-a", n[0], "1500m", "cache", true);
    pod("cache-b", n[1], "1500m", "cache", true);
    pod("small-1", n[2], "300m", "small", false);
    pod("small-2", n[2], "300m", "small", false);
    replicaSet("small", 2, "300m", false);
    pod("cache-c", null, "1800m", "cache", true);
    awaitUnschedulable("cache-c");
    return n;
  }

  /**
   * The README's fragmentation example on nodes of a new namespace: a cache replica (one per node) pending on four
   * 2000m nodes, each partly filled by small ReplicaSet pods. Its plan moves batch-p7 off node 2; returns the nodes.
   */
  private String[] fragmentation(String prefix) {
    ns = server.newNamespace(prefix);
    String[] n = {ns + "-1", ns + "-2", ns + "-3", ns + "-4"};
    nodes(2000, n);
    pod("cache-a1", n[0], "1500m", "cache", true);
    pod("worker-k2", n[0], "100m", "worker", false);
    pod("worker-m4", n[0], "100m", "worker", false);
    pod("batch-p7", n[1], "300m", "batch", false);
    pod("batch-q9", n[1], "300m", "batch", false);
    pod("api-r8", n[2], "300m", "api", false);
    pod("api-t3", n[2], "300m", "api", false);
    pod("cache-b2", n[3], "1500m", "cache", true);
    pod("worker-x1", n[3], "100m", "worker", false);
    replicaSet("worker", 3, "100m", false);
    replicaSet("batch", 2, "300m", false);
    replicaSet("api", 2, "300m", false);
    pod("cache-c3", null, "1500m", "cache", true);
    replicaSet("cache", 3, "1500m", true);
    awaitUnschedulable("cache-c3");
    return n;
  }

  /** The live service with MakeRoom for this test's namespace, a pass every 2 s, evictions with grace 0 (no kubelet). */
  private RunningService makeRoomService(String limits) throws Exception {
    return RunningService.start(server, """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        fullPassInterval: 2s
        gracePeriodSeconds: 0
        %s
        profiles:
        - name: make-room
          pluginConfig:
          - {name: MakeRoom, args: {pendingFor: 0s, namespaces: {include: [%s]}}}
          plugins: {balance: {enabled: [MakeRoom]}}
        """.formatted(limits, ns));
  }

  /**
   * The executor in the live service, on the fragmentation example: it nominates the cache replica to node 2, evicts
   * batch-p7 through the removal path, waits for its replacement to be bound elsewhere and for the scheduler to bind
   * the replica to node 2, then clears the nomination. The audit log shows the one eviction the plan named.
   */
  @Test
  void theServiceCarriesThePlanOutAndClearsTheNomination() throws Exception {
    String[] n = fragmentation("executor");
    try (RunningService service = makeRoomService("")) {
      await().atMost(Duration.ofSeconds(60)).until(() -> n[1].equals(get("cache-c3").getSpec().getNodeName()));
      await().atMost(Duration.ofSeconds(20)).until(() -> get("cache-c3").getStatus().getNominatedNodeName() == null);
      assertThat(service.metric("podsweeper_room_plans_started_total")).isEqualTo(1);
      assertThat(service.metric("podsweeper_room_plans_completed_total")).isEqualTo(1);
    }
    assertThat(server.removalRequests(ns)).extracting(TestApiServer.AuditEvent::name).containsExactly("batch-p7");
    assertThat(boundNodes("batch")).hasSize(2).filteredOn(n[1]::equals).hasSize(1);
    assertThat(client.v1().events().inNamespace(ns).list().getItems()).extracting(e -> e.getReason())
        .contains("PodSweeperRoomPlanStarted", "PodSweeperRoomPlanCompleted");
  }

  /**
   * A plan abandoned mid-way leaves nothing worse: two small pods must leave n3 for the pending pod; the rate (one
   * request per 20 s) lets the first eviction through at once and holds the second for its token. Meanwhile n3 is
   * cordoned: the plan is abandoned (node-gone), its nomination cleared, and the step waiting for its token is taken
   * back before its send, so the audit log shows the one eviction and no other.
   */
  @Test
  void aPlanAbandonedMidWayEvictsNothingMoreAndClearsTheNomination() throws Exception {
    String n3 = twoSmallPodsInTheWay("abandon")[2];

    try (RunningService service = makeRoomService("limits: {perSecond: 0.05, burst: 1}")) {
      await().atMost(Duration.ofSeconds(30)).until(() -> server.removalRequests(ns).size() == 1);
      Instant first = Instant.now();
      // small-1's replacement bound elsewhere: the executor hands the second step, which waits for its token.
      await().atMost(Duration.ofSeconds(15)).until(() -> boundNodes("small").size() == 2);
      assertThat(boundNodes("small")).containsOnlyOnce(n3);
      Thread.sleep(1000);
      assertThat(get("cache-c").getStatus().getNominatedNodeName()).isEqualTo(n3);
      client.nodes().withName(n3).edit(node -> {
        node.getSpec().setUnschedulable(true);
        return node;
      });

      await().atMost(Duration.ofSeconds(15)).until(() -> get("cache-c").getStatus().getNominatedNodeName() == null);
      assertThat(service.metric("podsweeper_room_plans_abandoned_total", "reason=\"node-gone\"")).isEqualTo(1);
      // Past the second request's token: it was taken back, not sent.
      long wait = Duration.ofSeconds(25).minus(Duration.between(first, Instant.now())).toMillis();
      Thread.sleep(Math.max(0, wait));
      assertThat(server.removalRequests(ns)).hasSize(1);
      assertThat(get("cache-c").getSpec().getNodeName()).isNull();
    }
  }

  /**
   * Freeing a node, as the manifests' ServiceAccount with the free-nodes add-on (manifests/free-nodes/): two 1000m
   * nodes half used and a third with two small ReplicaSet pods, under the 35% threshold. The service taints the third
   * NoSchedule (beside a taint of someone else's, which stays), evicts its pods one at a time, each replacement bound to another node (the taint keeps them off), keeps
   * the emptied node tainted for keepEmptyFor and then takes the taint off. The audit log shows the two evictions and
   * the ServiceAccount's patches of that node and of no other.
   */
  @Test
  void theServiceEmptiesANodeUnderItsTaintAndLetsItGoAfterKeepEmptyFor() throws Exception {
    ns = server.newNamespace("free-node");
    String[] n = {ns + "-1", ns + "-2", ns + "-3"};
    nodes(2000, n);
    // Someone else's taint on the node to empty: this service's is added beside it, and it stays as it was.
    io.fabric8.kubernetes.api.model.Taint theirs = new io.fabric8.kubernetes.api.model.Taint("PreferNoSchedule", "example.com/spot", null, "true");
    client.nodes().withName(n[2]).edit(node -> {
      node.getSpec().setTaints(List.of(theirs));
      return node;
    });
    pod("big-1", n[0], "1000m", "big", false);
    pod("big-2", n[1], "1000m", "big", false);
    pod("small-1", n[2], "300m", "small", false);
    pod("small-2", n[2], "300m", "small", false);
    replicaSet("small", 2, "300m", false);
    // The ServiceAccount's grants only (not the base's Deployment, whose pod the scheduler would put on these nodes).
    Manifests.kubectl(server, "apply", "-f", Manifests.BASE.resolve("namespace.yaml").toString(), "-f", Manifests.BASE.resolve("rbac.yaml").toString());
    Manifests.kubectlApplyKustomization(server, Manifests.BASE.resolve("free-nodes"));
    String sa = Manifests.user(Manifests.SERVICE_ACCOUNT);

    try (RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT), """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        fullPassInterval: 2s
        gracePeriodSeconds: 0
        profiles:
        - name: free-nodes
          pluginConfig:
          - {name: MakeRoom, args: {namespaces: {include: [nobody]}, freeNodes: {thresholds: {cpu: 35}, keepEmptyFor: 8s}}}
          plugins: {balance: {enabled: [MakeRoom]}}
        """)) {
      await().atMost(Duration.ofSeconds(30)).until(() -> taint(n[2]) != null);
      await().atMost(Duration.ofSeconds(60)).until(() -> service.metric("podsweeper_room_plans_completed_total") == 1);
      assertThat(boundNodes("small")).hasSize(2).doesNotContain(n[2]);
      assertThat(taint(n[2])).as("kept for a scale-down").isNotNull();
      await().atMost(Duration.ofSeconds(30)).until(() -> taint(n[2]) == null);
      assertThat(client.nodes().withName(n[2]).get().getSpec().getTaints()).containsExactly(theirs);
      assertThat(boundNodes("small")).hasSize(2).doesNotContain(n[2]);
      assertThat(service.metric("podsweeper_room_plans_started_total")).isEqualTo(1);
    }
    assertThat(server.removalRequests(ns)).extracting(TestApiServer.AuditEvent::name).containsExactlyInAnyOrder("small-1", "small-2");
    List<TestApiServer.AuditEvent> patches = server.audit().stream()
        .filter(e -> "nodes".equals(e.resource()) && "patch".equals(e.verb()) && sa.equals(e.user())).toList();
    assertThat(patches).extracting(TestApiServer.AuditEvent::name).containsOnly(n[2]);
    assertThat(patches).extracting(TestApiServer.AuditEvent::code).containsOnly(200);
    assertThat(patches).hasSizeGreaterThanOrEqualTo(3); // tainted, re-timed once empty, taken off
    // Each a JSON patch of the taints alone, its test first.
    assertThat(patches).allSatisfy(e -> assertThat(e.body()).allSatisfy(op -> assertThat(op.get("path").asText()).matches(
        "/spec/taints(/-|/\\d+(/key|/value)?)?|/metadata/(uid|resourceVersion)")));
    assertThat(client.v1().events().inNamespace("default").list().getItems()).filteredOn(e -> n[2].equals(e.getInvolvedObject().getName()))
        .extracting(e -> e.getReason()).contains("PodSweeperRoomPlanStarted", "PodSweeperRoomPlanCompleted");
  }

  /** This service's taint on the node, or null. */
  private static io.fabric8.kubernetes.api.model.Taint taint(String node) {
    return client.nodes().withName(node).get().getSpec().getTaints().stream()
        .filter(t -> RoomPlan.EMPTYING_TAINT.equals(t.getKey()) && "NoSchedule".equals(t.getEffect())).findFirst().orElse(null);
  }

  private static void sleep() {
    try {
      Thread.sleep(300);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
