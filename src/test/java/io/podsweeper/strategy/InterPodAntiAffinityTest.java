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
import io.podsweeper.cluster.Scheduling.PodAffinityTerm;
import io.podsweeper.cluster.Taint;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.policy.LabelSelector;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.safety.RemovalBudget;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** RemovePodsViolatingInterPodAntiAffinity on snapshots, and the evictor's nodeFit on inter-pod anti-affinity. */
class InterPodAntiAffinityTest {
  private static final String PLUGIN = "RemovePodsViolatingInterPodAntiAffinity";
  private static final String HOSTNAME = "kubernetes.io/hostname";
  private static final String ZONE = "topology.kubernetes.io/zone";
  private static final PolicyEvaluator PLAIN = policy("{}", "deschedule", PLUGIN, "{}");

  /** A term excluding pods labelled {@code app=<app>} in the holder's namespace from its {@code key} domain. */
  private static PodAffinityTerm excluding(String app, String key) {
    return new PodAffinityTerm(new LabelSelector(Map.of("app", app), List.of()), Set.of(), Optional.empty(), key);
  }

  private static PodBuilder app(String name, String app, String node) {
    return pod(name).label("app", app).on(node);
  }

  private static NodeRecord zoned(String name, String zone) {
    return node(name, Map.of(HOSTNAME, name, ZONE, zone), List.of());
  }

  @Test
  void evictsThePodWhoseTermSelectsAPodOnItsNodeWithAReason() {
    PassResult r = run(PLAIN, List.of(node("n1"), node("n2")),
        app("a", "a", "n1").build(),
        app("b", "b", "n1").antiAffinity(excluding("a", HOSTNAME)).build());
    assertThat(evicted(r)).containsExactly("b");
    assertThat(r.decisions().get(0).strategy()).isEqualTo(PLUGIN);
    assertThat(r.decisions().get(0).reason()).isEqualTo("the pod's required anti-affinity excludes pods matching app=a from its "
        + "topology domain kubernetes.io/hostname=n1, and pod default/a runs there on node n1");
  }

  @Test
  void hostnameTermsDoNotReachAcrossNodes() {
    assertThat(evicted(run(PLAIN, List.of(node("n1"), node("n2")),
        app("a", "a", "n1").build(),
        app("b", "b", "n2").antiAffinity(excluding("a", HOSTNAME)).build()))).isEmpty();
  }

  @Test
  void zoneTermsSpanTheNodesOfTheZone() {
    PassResult r = run(PLAIN, List.of(zoned("n1", "x"), zoned("n2", "x"), zoned("n3", "y")),
        app("a", "a", "n1").build(),
        app("b", "b", "n2").antiAffinity(excluding("a", ZONE)).build(),
        app("c", "c", "n3").antiAffinity(excluding("a", ZONE)).build());
    assertThat(evicted(r)).containsExactly("b");
    assertThat(r.decisions().get(0).reason())
        .endsWith("from its topology domain topology.kubernetes.io/zone=x, and pod default/a runs there on node n1");
  }

  @Test
  void aNodeWithoutTheTopologyKeyIsInNoDomain() {
    // The scheduler applies the term nowhere on such a node: it would place the pod right back.
    assertThat(evicted(run(PLAIN, List.of(node("n1"), node("n2")),
        app("a", "a", "n1").build(),
        app("b", "b", "n1").antiAffinity(excluding("a", ZONE)).build()))).isEmpty();
  }

  @Test
  void lowerPriorityGoesFirstAndItsEvictionResolvesTheOther() {
    // Two replicas excluding each other: only the lower-priority one goes, whatever the names say.
    PassResult r = run(PLAIN, List.of(node("n1"), node("n2")),
        app("a-high", "web", "n1").priority(100).antiAffinity(excluding("web", HOSTNAME)).build(),
        app("z-low", "web", "n1").priority(10).antiAffinity(excluding("web", HOSTNAME)).build());
    assertThat(evicted(r)).containsExactly("z-low");
    assertThat(r.decisions().get(0).reason()).contains("pod default/a-high runs there");
  }

  @Test
  void onlyThePodHoldingTheTermIsACandidate() {
    // a matches b's term but has none of its own: as upstream, b goes even though a has the lower priority.
    assertThat(evicted(run(PLAIN, List.of(node("n1"), node("n2")),
        app("a", "a", "n1").priority(0).build(),
        app("b", "b", "n1").priority(100).antiAffinity(excluding("a", HOSTNAME)).build()))).containsExactly("b");
  }

  @Test
  void termNamespacesDefaultToTheHoldersOwn() {
    NodeRecord n1 = node("n1");
    PodBuilder other = app("a", "a", "n1").ns("other");
    assertThat(evicted(run(PLAIN, List.of(n1, node("n2")), other.build(),
        app("b", "b", "n1").antiAffinity(excluding("a", HOSTNAME)).build()))).isEmpty();
    PodAffinityTerm listed = new PodAffinityTerm(new LabelSelector(Map.of("app", "a"), List.of()), Set.of("other"), Optional.empty(), HOSTNAME);
    assertThat(evicted(run(PLAIN, List.of(n1, node("n2")), other.build(),
        app("b", "b", "n1").antiAffinity(listed).build()))).containsExactly("b");
    PodAffinityTerm bySelector = new PodAffinityTerm(new LabelSelector(Map.of("app", "a"), List.of()), Set.of(),
        Optional.of(new LabelSelector(Map.of("kubernetes.io/metadata.name", "other"), List.of())), HOSTNAME);
    assertThat(evicted(run(PLAIN, List.of(n1, node("n2")), other.build(),
        app("b", "b", "n1").antiAffinity(bySelector).build()))).containsExactly("b");
  }

  @Test
  void termsAreReadFromPodSpecsIncludingTheNamespaceSelector() {
    String yaml = """
        apiVersion: v1
        kind: List
        items:
        - {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {kubernetes.io/hostname: n1}},
           status: {conditions: [{type: Ready, status: "True"}]}}
        - {apiVersion: v1, kind: Node, metadata: {name: n2, labels: {kubernetes.io/hostname: n2}},
           status: {conditions: [{type: Ready, status: "True"}]}}
        - apiVersion: v1
          kind: Pod
          metadata: {name: a, namespace: other, labels: {app: a}, creationTimestamp: "2026-01-01T00:00:00Z",
                     ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}]}
          spec: {nodeName: n1, containers: [{name: c, image: x}]}
          status: {phase: Running}
        - apiVersion: v1
          kind: Pod
          metadata: {name: b, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z",
                     ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u2, controller: true}]}
          spec:
            nodeName: n1
            containers: [{name: c, image: x}]
            affinity:
              podAntiAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                - {labelSelector: {matchLabels: {app: a}}, namespaceSelector: {}, topologyKey: kubernetes.io/hostname}
          status: {phase: Running}
        """;
    var snapshot = SnapshotReader.parse(yaml, "test");
    // An empty namespaceSelector selects every namespace.
    assertThat(PLAIN.pass(snapshot, Passes.NOW, new RemovalBudget(PLAIN.policy().limits()), true).decisions())
        .extracting(Decision::podKey).containsExactly("default/b");
  }

  @Test
  void onlyPodsPassingTheNamespacesAndLabelSelectorCountOnEitherSide() {
    List<NodeRecord> nodes = List.of(node("n1"), node("n2"));
    var a = app("a", "a", "n1").build();
    var b = app("b", "b", "n1").label("tier", "x").antiAffinity(excluding("a", HOSTNAME)).build();
    assertThat(evicted(run(policy("{}", "deschedule", PLUGIN, "{namespaces: {include: [elsewhere]}}"), nodes, a, b))).isEmpty();
    assertThat(evicted(run(policy("{}", "deschedule", PLUGIN, "{namespaces: {exclude: [elsewhere]}}"), nodes, a, b)))
        .containsExactly("b");
    // As upstream, a pod the labelSelector leaves out does not count as the pod a term excludes either.
    assertThat(evicted(run(policy("{}", "deschedule", PLUGIN, "{labelSelector: {matchLabels: {tier: x}}}"), nodes, a, b))).isEmpty();
    assertThat(evicted(run(policy("{}", "deschedule", PLUGIN, "{labelSelector: {matchExpressions: [{key: app, operator: Exists}]}}"),
        nodes, a, b))).containsExactly("b");
  }

  @Test
  void protectedPodsStayAndStillCount() {
    List<NodeRecord> nodes = List.of(node("n1"), node("n2"));
    assertThat(evicted(run(PLAIN, nodes, app("a", "a", "n1").build(),
        app("b", "b", "n1").ownedBy("DaemonSet", "agent").antiAffinity(excluding("a", HOSTNAME)).build()))).isEmpty();
    assertThat(evicted(run(PLAIN, nodes, app("a", "a", "n1").build(),
        app("b", "b", "n1").priority(2_000_000_000).antiAffinity(excluding("a", HOSTNAME)).build()))).isEmpty();
    // The protected lower-priority replica is skipped, not removed from the count: the other one goes.
    assertThat(evicted(run(PLAIN, nodes,
        app("ds", "web", "n1").priority(0).ownedBy("DaemonSet", "agent").antiAffinity(excluding("web", HOSTNAME)).build(),
        app("rs", "web", "n1").priority(10).antiAffinity(excluding("web", HOSTNAME)).build()))).containsExactly("rs");
  }

  @Test
  void nodeFitKeepsPodsThatFitNoOtherNode() {
    NodeRecord tainted = node("n2", Map.of(HOSTNAME, "n2"), List.of(new Taint("dedicated", "gpu", "NoSchedule")));
    var a = app("a", "a", "n1").build();
    var b = app("b", "b", "n1").antiAffinity(excluding("a", HOSTNAME)).build();
    assertThat(evicted(run(policy("{nodeFit: false}", "deschedule", PLUGIN, "{}"), List.of(node("n1"), tainted), a, b)))
        .containsExactly("b");
    assertThat(evicted(run(policy("{nodeFit: true}", "deschedule", PLUGIN, "{}"), List.of(node("n1"), tainted), a, b))).isEmpty();
    assertThat(evicted(run(policy("{nodeFit: true}", "deschedule", PLUGIN, "{}"), List.of(node("n1"), node("n2")), a, b)))
        .containsExactly("b");
  }

  @Test
  void nodeFitHonoursAntiAffinityOnTheTargetNodeBothWays() {
    var e = policy("{nodeFit: true}", "deschedule", PLUGIN, "{}");
    var a = app("a", "a", "n1").build();
    var b = app("b", "b", "n1").antiAffinity(excluding("a", HOSTNAME)).build();
    // n2 has a pod b's own term excludes.
    var anotherA = app("a2", "a", "n2").build();
    assertThat(evicted(run(e, List.of(node("n1"), node("n2")), a, b, anotherA))).isEmpty();
    // n2 has a pod whose term excludes b.
    var guard = app("guard", "g", "n2").antiAffinity(excluding("b", HOSTNAME)).build();
    assertThat(evicted(run(e, List.of(node("n1"), node("n2")), a, b, guard))).isEmpty();
    // A third node free of both takes it.
    assertThat(evicted(run(e, List.of(node("n1"), node("n2"), node("n3")), a, b, anotherA, guard))).containsExactly("b");
  }

  @Test
  void nodeAndTotalLimits() {
    List<NodeRecord> nodes = List.of(node("n1"), node("n2"));
    var pods = new io.podsweeper.cluster.PodRecord[] {
      app("a", "a", "n1").build(),
      app("b1", "b", "n1").antiAffinity(excluding("a", HOSTNAME)).build(),
      app("b2", "b", "n1").antiAffinity(excluding("a", HOSTNAME)).build(),
      app("c", "a", "n2").build(),
      app("d", "d", "n2").antiAffinity(excluding("a", HOSTNAME)).build()};
    assertThat(evicted(run(PLAIN, nodes, pods))).containsExactly("b1", "b2", "d");
    // The node limit moves on to the next node; the total limit ends the run.
    assertThat(evicted(run(policy("maxNoOfPodsToEvictPerNode: 1\n", "{}", "deschedule", PLUGIN, "{}"), nodes, pods)))
        .containsExactly("b1", "d");
    assertThat(evicted(run(policy("maxNoOfPodsToEvictTotal: 1\n", "{}", "deschedule", PLUGIN, "{}"), nodes, pods)))
        .containsExactly("b1");
  }

  @Test
  void argsAreReadStrictly() {
    assertThatThrownBy(() -> policy("{}", "deschedule", PLUGIN, "{nodeFit: true}"))
        .isInstanceOf(PolicyException.class).hasMessageContaining("nodeFit");
    assertThatThrownBy(() -> policy("{}", "deschedule", PLUGIN, "{namespaces: {include: [a], exclude: [b]}}"))
        .isInstanceOf(PolicyException.class).hasMessageContaining("only one of Include/Exclude namespaces can be set");
  }
}
