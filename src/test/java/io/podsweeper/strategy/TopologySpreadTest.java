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
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling.SpreadConstraint;
import io.podsweeper.cluster.Taint;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.policy.LabelSelector;
import io.podsweeper.policy.NamespaceFilter;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.policy.TopologySpreadArgs;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** RemovePodsViolatingTopologySpreadConstraint on snapshots: which domains count, how many pods move, which ones. */
class TopologySpreadTest {
  private static final String PLUGIN = TopologySpreadArgs.NAME;
  private static final LabelSelector WEB = new LabelSelector(Map.of("app", "web"), List.of());
  /** maxSkew 1 over zones, for pods labelled app=web; inclusion policies at the API defaults. */
  private static final SpreadConstraint ZONES = new SpreadConstraint(1, "zone", "DoNotSchedule", WEB, List.of(), true, false);
  private static final SpreadConstraint SOFT_ZONES = new SpreadConstraint(1, "zone", "ScheduleAnyway", WEB, List.of(), true, false);

  private static NodeRecord zone(String name, String zone) {
    return node(name, Map.of("zone", zone), List.of());
  }

  /** The plugin with no args: upstream's defaults. */
  private static final String DEFAULT_ARGS = """
      apiVersion: descheduler/v1alpha2
      kind: DeschedulerPolicy
      profiles:
        - name: p
          pluginConfig: [{name: RemovePodsViolatingTopologySpreadConstraint}]
          plugins: {balance: {enabled: [RemovePodsViolatingTopologySpreadConstraint]}}
      """;
  private static final List<NodeRecord> TWO_ZONES = List.of(zone("a1", "a"), zone("b1", "b"));
  private static final List<NodeRecord> THREE_ZONES = List.of(zone("a1", "a"), zone("b1", "b"), zone("c1", "c"));

  private static PodBuilder web(String name, String node) {
    return pod(name).on(node).label("app", "web").spread(ZONES);
  }

  private static PassResult balance(String args, List<NodeRecord> nodes, PodBuilder... pods) {
    return balance("{}", args, nodes, pods);
  }

  private static PassResult balance(String evictorArgs, String args, List<NodeRecord> nodes, PodBuilder... pods) {
    return run(policy(evictorArgs, "balance", PLUGIN, args), nodes, java.util.Arrays.stream(pods).map(PodBuilder::build)
        .toArray(PodRecord[]::new));
  }

  @Test
  void balancedDomainsMoveNothing() {
    PassResult r = balance("{}", TWO_ZONES, web("w1", "a1"), web("w2", "a1"), web("w3", "b1"));
    assertThat(r.decisions()).isEmpty();
    assertThat(r.skipped()).isEmpty();
  }

  @Test
  void threeAgainstNoneWithMaxSkewOneMovesOnePodWithACheckableReason() {
    // Average 1.5: the largest may give at most ceil((3 - 0 - 1) / 2) = 1 pod per pass, leaving 2 and 1.
    PassResult r = balance("{}", TWO_ZONES, web("w1", "a1"), web("w2", "a1"), web("w3", "a1"));
    assertThat(evicted(r)).containsExactly("w1");
    assertThat(r.decisions().get(0).reason())
        .isEqualTo("topology zone=a has 3 pods of app=web, zone=b has 0; maxSkew 1 (DoNotSchedule)");
  }

  @Test
  void movesFromTheLargestDomainToEverySmallerOneDownToTheAverage() {
    // Sizes a=5, b=1, c=0, average 2: a gives c 2 (half the excess), then b 1; then every domain holds 2.
    PassResult r = balance("{}", THREE_ZONES, web("w1", "a1"), web("w2", "a1"), web("w3", "a1"), web("w4", "a1"),
        web("w5", "a1"), web("w6", "b1"));
    assertThat(evicted(r)).containsExactly("w1", "w2", "w3");
    assertThat(r.decisions()).extracting(Decision::reason).containsExactly(
        "topology zone=a has 5 pods of app=web, zone=c has 0; maxSkew 1 (DoNotSchedule)",
        "topology zone=a has 5 pods of app=web, zone=c has 0; maxSkew 1 (DoNotSchedule)",
        "topology zone=a has 5 pods of app=web, zone=b has 1; maxSkew 1 (DoNotSchedule)");
    // A larger maxSkew tolerates the same spread.
    SpreadConstraint loose = new SpreadConstraint(5, "zone", "DoNotSchedule", WEB, List.of(), true, false);
    assertThat(balance("{}", THREE_ZONES, pod("x1").on("a1").label("app", "web").spread(loose),
        pod("x2").on("a1").label("app", "web").spread(loose)).decisions()).isEmpty();
  }

  @Test
  void softConstraintsOnlyWhenListed() {
    PodBuilder[] pods = {
      pod("s1").on("a1").label("app", "web").spread(SOFT_ZONES),
      pod("s2").on("a1").label("app", "web").spread(SOFT_ZONES),
      pod("s3").on("a1").label("app", "web").spread(SOFT_ZONES)};
    assertThat(evicted(balance("{}", TWO_ZONES, pods))).isEmpty();
    assertThat(evicted(balance("{constraints: [ScheduleAnyway]}", TWO_ZONES, pods))).containsExactly("s1");
    assertThat(evicted(balance("{constraints: [DoNotSchedule, ScheduleAnyway]}", TWO_ZONES, pods))).containsExactly("s1");
    // Listing only the soft kind leaves hard constraints alone.
    assertThat(evicted(balance("{constraints: [ScheduleAnyway]}", TWO_ZONES, web("w1", "a1"), web("w2", "a1"), web("w3", "a1"))))
        .isEmpty();
  }

  @Test
  void nodesWithoutTheTopologyKeyAreNoDomainAndTheirPodsDoNotCount() {
    List<NodeRecord> nodes = List.of(zone("a1", "a"), zone("b1", "b"), node("x1", Map.of(), List.of()), node("x2", Map.of(), List.of()));
    // Counted over zones: a=2, b=1. The unlabelled x1 (3 pods) and x2 (none) would unbalance it if they counted.
    assertThat(balance("{}", nodes, web("w1", "a1"), web("w2", "a1"), web("w3", "b1"), web("x", "x1"), web("y", "x1"),
        web("z", "x1")).decisions()).isEmpty();
  }

  @Test
  void finishedAndTerminatingPodsDoNotCount() {
    assertThat(balance("{}", TWO_ZONES, web("w1", "a1"), web("w2", "a1"), web("done", "a1").phase("Succeeded"),
        web("leaving", "a1").terminating(), web("w3", "b1")).decisions()).isEmpty();
  }

  @Test
  void onlyReadyNodesOfTheNodeSetAreDomains() {
    NodeRecord notReady = new NodeRecord("c1", Map.of("zone", "c"), false, false, List.of(), Map.of("cpu", 4000L, "pods", 110L));
    assertThat(balance("{}", List.of(zone("a1", "a"), zone("b1", "b"), notReady), web("w1", "a1"), web("w2", "b1")).decisions())
        .isEmpty();
  }

  @Test
  void nodeAffinityPolicyHonourLeavesOutNodesThePodsCannotUse() {
    NodeRecord other = node("c1", Map.of("zone", "c", "pool", "other"), List.of());
    List<NodeRecord> nodes = List.of(node("a1", Map.of("zone", "a", "pool", "web"), List.of()),
        node("b1", Map.of("zone", "b", "pool", "web"), List.of()), other);
    Map<String, String> pinned = Map.of("pool", "web");
    // Honor (the default): zone c is not the pods' to use; a=2, b=2 is balanced.
    PodBuilder[] honoured = {
      pod("w1").on("a1").label("app", "web").nodeSelector(pinned).spread(ZONES),
      pod("w2").on("a1").label("app", "web").nodeSelector(pinned).spread(ZONES),
      pod("w3").on("b1").label("app", "web").nodeSelector(pinned).spread(ZONES),
      pod("w4").on("b1").label("app", "web").nodeSelector(pinned).spread(ZONES)};
    assertThat(balance("{topologyBalanceNodeFit: false}", nodes, honoured).decisions()).isEmpty();
    // Ignore: zone c counts (with 0 pods): a=2, b=2, c=0.
    SpreadConstraint ignoring = new SpreadConstraint(1, "zone", "DoNotSchedule", WEB, List.of(), false, false);
    PodBuilder[] ignored = {
      pod("w1").on("a1").label("app", "web").nodeSelector(pinned).spread(ignoring),
      pod("w2").on("a1").label("app", "web").nodeSelector(pinned).spread(ignoring),
      pod("w3").on("b1").label("app", "web").nodeSelector(pinned).spread(ignoring),
      pod("w4").on("b1").label("app", "web").nodeSelector(pinned).spread(ignoring)};
    assertThat(evicted(balance("{topologyBalanceNodeFit: false}", nodes, ignored))).hasSize(1);
  }

  @Test
  void nodeTaintsPolicyHonourLeavesOutNodesWithUntoleratedTaints() {
    List<NodeRecord> nodes = List.of(zone("a1", "a"), zone("b1", "b"),
        node("c1", Map.of("zone", "c"), List.of(new Taint("dedicated", "gpu", "NoSchedule"))));
    SpreadConstraint honouring = new SpreadConstraint(1, "zone", "DoNotSchedule", WEB, List.of(), true, true);
    assertThat(balance("{topologyBalanceNodeFit: false}", nodes,
        pod("w1").on("a1").label("app", "web").spread(honouring),
        pod("w2").on("a1").label("app", "web").spread(honouring),
        pod("w3").on("b1").label("app", "web").spread(honouring),
        pod("w4").on("b1").label("app", "web").spread(honouring)).decisions()).isEmpty();
    // Ignore (the default): the tainted zone c counts, with no pods.
    assertThat(evicted(balance("{topologyBalanceNodeFit: false}", nodes, web("w1", "a1"), web("w2", "a1"), web("w3", "b1"),
        web("w4", "b1")))).hasSize(1);
  }

  @Test
  void matchLabelKeysSpreadEachRevisionOnItsOwn() {
    SpreadConstraint perRevision = new SpreadConstraint(1, "zone", "DoNotSchedule", WEB, List.of("rev"), true, false);
    PodBuilder[] pods = {
      pod("old1").on("a1").label("app", "web").label("rev", "1").spread(perRevision),
      pod("old2").on("a1").label("app", "web").label("rev", "1").spread(perRevision),
      pod("new1").on("b1").label("app", "web").label("rev", "2").spread(perRevision),
      pod("new2").on("b1").label("app", "web").label("rev", "2").spread(perRevision)};
    // All of app=web is balanced (2 and 2); each revision on its own is not (2 and 0).
    PassResult r = balance("{}", TWO_ZONES, pods);
    assertThat(evicted(r)).containsExactly("old1", "new1");
    assertThat(r.decisions().get(0).reason()).isEqualTo("topology zone=a has 2 pods of app=web,rev in (1), zone=b has 0; "
        + "maxSkew 1 (DoNotSchedule)");
  }

  @Test
  void topologyBalanceNodeFitKeepsPodsThatFitNoNodeOfASmallerDomain() {
    // b1 has 1000m of its 4000m left; each web pod asks 3000m.
    PodBuilder[] pods = {
      web("w1", "a1").requests("cpu", 3000), web("w2", "a1").requests("cpu", 3000), web("w3", "a1").requests("cpu", 3000),
      pod("hog").on("b1").requests("cpu", 3000)};
    PassResult kept = balance("{}", TWO_ZONES, pods);
    assertThat(kept.decisions()).isEmpty();
    assertThat(kept.notes()).containsExactly("p/" + PLUGIN + ": default/w1 stays: it fits no node of a domain below the "
        + "average (topologyBalanceNodeFit)");
    assertThat(evicted(balance("{topologyBalanceNodeFit: false}", TWO_ZONES, pods))).containsExactly("w1");
  }

  @Test
  void podsThatFitASmallerDomainMoveFirst() {
    // "big" would go first (no priority), but only "small" fits b1.
    PassResult r = balance("{}", TWO_ZONES, web("big", "a1").requests("cpu", 3000), web("small", "a1").priority(100).requests("cpu", 500),
        web("w3", "a1").priority(100).requests("cpu", 3000), pod("hog").on("b1").requests("cpu", 3000));
    assertThat(evicted(r)).containsExactly("small");
  }

  @Test
  void lowestPriorityMovesFirstAndNoPriorityBeforeAny() {
    assertThat(evicted(balance("{}", TWO_ZONES, web("high", "a1").priority(1000), web("low", "a1").priority(10),
        web("mid", "a1").priority(500)))).containsExactly("low");
    assertThat(evicted(balance("{}", TWO_ZONES, web("high", "a1").priority(1000), web("none", "a1"),
        web("low", "a1").priority(-5)))).containsExactly("none");
  }

  @Test
  void podsWithNodeSelectorOrAffinityMoveAfterTheOthers() {
    assertThat(evicted(balance("{topologyBalanceNodeFit: false}", TWO_ZONES, web("pinned", "a1").nodeSelector(Map.of("zone", "a")),
        web("free", "a1").priority(1000), web("w3", "a1").priority(1000)))).containsExactly("free");
  }

  @Test
  void evictorProtectionIsHonoured() {
    // The protected pod would go first by priority; evictable pods move before it.
    PodBuilder protectedPod = web("kept", "a1").annotation(PodRecord.PROTECT_ANNOTATION, "true");
    assertThat(evicted(balance("{}", TWO_ZONES, protectedPod, web("w2", "a1").priority(10), web("w3", "a1").priority(20))))
        .containsExactly("w2");
    // When only protected pods are in the largest domain, none goes; they still count.
    assertThat(balance("{}", TWO_ZONES, web("bare1", "a1").bare(), web("bare2", "a1").bare(), web("bare3", "a1").bare()).decisions())
        .isEmpty();
    // The evictor's own nodeFit applies on top: no other node can take the pod.
    assertThat(balance("{nodeFit: true}", "{topologyBalanceNodeFit: false}", TWO_ZONES, web("w1", "a1").requests("cpu", 3000),
        web("w2", "a1").requests("cpu", 3000), web("w3", "a1").requests("cpu", 3000), pod("hog").on("b1").requests("cpu", 3000))
        .decisions()).isEmpty();
  }

  @Test
  void namespacesChooseWhichConstraintsAreBalanced() {
    PodBuilder[] pods = {web("w1", "a1"), web("w2", "a1"), web("w3", "a1"), web("o1", "a1").ns("other"),
        web("o2", "a1").ns("other"), web("o3", "a1").ns("other")};
    assertThat(balance("{namespaces: {include: [other]}}", TWO_ZONES, pods).decisions()).extracting(Decision::podKey)
        .containsExactly("other/o1");
    assertThat(balance("{namespaces: {exclude: [other]}}", TWO_ZONES, pods).decisions()).extracting(Decision::podKey)
        .containsExactly("default/w1");
    // A constraint selects pods of its own namespace only: together a=2, b=2 would be balanced, but each namespace
    // on its own has 2 and 0.
    assertThat(evicted(balance("{}", TWO_ZONES, web("w1", "a1"), web("w2", "a1"), web("o1", "b1").ns("other"),
        web("o2", "b1").ns("other")))).containsExactly("w1", "o1");
  }

  @Test
  void labelSelectorChoosesWhichPodsMayGoNotWhichCount() {
    PodBuilder[] pods = {web("w1", "a1"), web("w2", "a1"), web("canary", "a1").label("track", "canary").priority(1000)};
    assertThat(evicted(balance("{labelSelector: {matchLabels: {track: canary}}}", TWO_ZONES, pods))).containsExactly("canary");
    // No pod matches: the domains are still unbalanced, but nothing may go.
    assertThat(balance("{labelSelector: {matchLabels: {track: none}}}", TWO_ZONES, pods).decisions()).isEmpty();
  }

  @Test
  void removalLimitsApply() {
    PodBuilder[] six = {web("w1", "a1"), web("w2", "a1"), web("w3", "a1"), web("w4", "a1"), web("w5", "a1"), web("w6", "a1")};
    assertThat(evicted(balance("{}", TWO_ZONES, six))).hasSize(3);
    var perNode = policy("maxNoOfPodsToEvictPerNode: 2\n", "{}", "balance", PLUGIN, "{}");
    assertThat(evicted(run(perNode, TWO_ZONES, java.util.Arrays.stream(six).map(PodBuilder::build).toArray(PodRecord[]::new))))
        .containsExactly("w1", "w2");
    var total = policy("maxNoOfPodsToEvictTotal: 1\n", "{}", "balance", PLUGIN, "{}");
    assertThat(evicted(run(total, TWO_ZONES, java.util.Arrays.stream(six).map(PodBuilder::build).toArray(PodRecord[]::new))))
        .containsExactly("w1");
  }

  @Test
  void argsAndDefaults() {
    Policy p = PolicyLoader.parse(DEFAULT_ARGS, "policy.yaml");
    assertThat(p.profiles().get(0).balance()).containsExactly(
        new TopologySpreadArgs(NamespaceFilter.ALL, LabelSelector.EVERYTHING, Set.of("DoNotSchedule"), true));
  }

  @Test
  void badArgsAreRejectedWithClearErrors() {
    assertThatThrownBy(() -> policy("{}", "balance", PLUGIN, "{constraints: [DoNotSchedule, Sometimes]}"))
        .isInstanceOf(PolicyException.class)
        .hasMessageContaining("constraints[1]: constraint \"Sometimes\" is not one of [DoNotSchedule ScheduleAnyway]");
    assertThatThrownBy(() -> policy("{}", "balance", PLUGIN, "{namespaces: {include: [a], exclude: [b]}}"))
        .hasMessageContaining("only one of Include/Exclude namespaces can be set");
    assertThatThrownBy(() -> policy("{}", "balance", PLUGIN, "{includeSoftConstraints: true}"))
        .hasMessageContaining("includeSoftConstraints");
    assertThatThrownBy(() -> policy("{}", "balance", PLUGIN, "{topologyBalanceNodeFit: sure}"))
        .hasMessageContaining("topologyBalanceNodeFit");
    assertThatThrownBy(() -> policy("{}", "deschedule", PLUGIN, "{}"))
        .hasMessageContaining("RemovePodsViolatingTopologySpreadConstraint is a balance plugin, not a deschedule plugin");
  }

  @Test
  void v1alpha1IncludeSoftConstraintsBecomesBothKindsOnABalanceProfile() {
    Policy p = PolicyLoader.parse("""
        apiVersion: descheduler/v1alpha1
        kind: DeschedulerPolicy
        strategies:
          RemovePodsViolatingTopologySpreadConstraint:
            enabled: true
            params: {includeSoftConstraints: true, nodeFit: true, namespaces: {exclude: [kube-system]}}
        """, "policy.yaml");
    assertThat(p.profiles().get(0).name()).isEqualTo("strategy-RemovePodsViolatingTopologySpreadConstraint-profile");
    assertThat(p.profiles().get(0).deschedule()).isEmpty();
    assertThat(p.profiles().get(0).balance()).containsExactly(new TopologySpreadArgs(
        new NamespaceFilter(List.of(), List.of("kube-system")), LabelSelector.EVERYTHING, Set.of("DoNotSchedule", "ScheduleAnyway"), true));
    assertThat(p.profiles().get(0).evictor().nodeFit()).isTrue();
  }

  @Test
  void koordinatorRunsItAsABalancePlugin() {
    Policy p = PolicyLoader.parse("""
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerConfiguration
        profiles:
          - name: k
            pluginConfig:
              - {name: RemovePodsViolatingTopologySpreadConstraint, args: {constraints: [ScheduleAnyway]}}
            plugins:
              balance: {enabled: [{name: RemovePodsViolatingTopologySpreadConstraint}]}
        """, "koordinator.yaml");
    assertThat(p.profiles().get(0).balance()).containsExactly(
        new TopologySpreadArgs(NamespaceFilter.ALL, LabelSelector.EVERYTHING, Set.of("ScheduleAnyway"), true));
  }

  /** A snapshot as kubectl prints it: the constraints come from the pod spec, with the API's policy defaults. */
  @Test
  void constraintsAreReadFromThePodSpec() {
    StringBuilder yaml = new StringBuilder("apiVersion: v1\nkind: List\nitems:\n");
    for (String[] n : new String[][] {{"a1", "a"}, {"b1", "b"}}) {
      yaml.append("""
          - apiVersion: v1
            kind: Node
            metadata: {name: %s, labels: {zone: %s}}
            status:
              conditions: [{type: Ready, status: "True"}]
              allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
          """.formatted(n[0], n[1]));
    }
    for (String name : List.of("w1", "w2", "w3")) {
      yaml.append("""
          - apiVersion: v1
            kind: Pod
            metadata:
              name: %s
              namespace: default
              creationTimestamp: "2026-01-01T00:00:00Z"
              labels: {app: web, rev: "7"}
              ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: u1, controller: true}]
            spec:
              nodeName: a1
              containers: [{name: main, image: nginx}]
              topologySpreadConstraints:
                - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}},
                   matchLabelKeys: [rev], nodeTaintsPolicy: Honor}
            status: {phase: Running}
          """.formatted(name));
    }
    var snapshot = SnapshotReader.parse(yaml.toString(), "snapshot.yaml");
    assertThat(snapshot.pods().get(0).scheduling().spreadConstraints()).containsExactly(
        new SpreadConstraint(1, "zone", "DoNotSchedule", WEB, List.of("rev"), true, true));
    List<Decision> plan = new PolicyEvaluator(PolicyLoader.parse(DEFAULT_ARGS, "policy.yaml")).plan(snapshot, Passes.NOW);
    assertThat(plan).extracting(Decision::podKey).containsExactly("default/w1");
  }
}
