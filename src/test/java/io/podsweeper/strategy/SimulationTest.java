package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.node;
import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.policy.LabelSelector;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The filters that count pods across topology domains, against the kube-scheduler's (v1.29) InterPodAffinity and
 * PodTopologySpread, and the simulation's moves (pods leave and land, and every count follows, undoably).
 */
class SimulationTest {
  private static final String HOST = "kubernetes.io/hostname";

  private static NodeRecord host(String name, String zone) {
    return node(name).label(HOST, name).label("zone", zone).build();
  }

  private static Scheduling.PodAffinityTerm term(String app, String key) {
    return new Scheduling.PodAffinityTerm(new LabelSelector(Map.of("app", app), List.of()), Set.of(), Optional.empty(), key);
  }

  private static Simulation sim(List<NodeRecord> nodes, PodRecord... pods) {
    return new Simulation(ClusterSnapshot.of(List.of(pods), List.of(PodFixtures.namespace("default", Map.of()),
        PodFixtures.namespace("other", Map.of("team", "x"))), nodes));
  }

  private static Optional<String> refusal(Simulation sim, PodRecord pod, NodeRecord node) {
    return sim.refusal(pod, node).map(SchedulerFilters.Unfit::reason);
  }

  private static final NodeRecord N1 = host("n1", "a");
  private static final NodeRecord N2 = host("n2", "a");
  private static final NodeRecord N3 = host("n3", "b");
  private static final NodeRecord BARE = node("bare").build();

  /** The incoming pod's anti-affinity: no selected pod in the node's domain; a node without the key: the term does not apply. */
  @Test
  void antiAffinityOfTheIncomingPod() {
    PodRecord cache = pod("cache-a").label("app", "cache").on("n1").build();
    Simulation sim = sim(List.of(N1, N2, N3, BARE), cache);
    PodRecord perHost = pod("cache-b").label("app", "cache").unscheduled().antiAffinity(term("cache", HOST)).build();
    assertThat(refusal(sim, perHost, N1)).hasValue("node(s) didn't match pod anti-affinity rules");
    assertThat(refusal(sim, perHost, N2)).isEmpty();
    PodRecord perZone = pod("cache-c").label("app", "cache").unscheduled().antiAffinity(term("cache", "zone")).build();
    assertThat(refusal(sim, perZone, N2)).isPresent();
    assertThat(refusal(sim, perZone, N3)).isEmpty();
    assertThat(refusal(sim, perZone, BARE)).isEmpty();
  }

  /** Existing pods' anti-affinity: a placed pod whose term selects the incoming pod keeps it out of its domain. */
  @Test
  void antiAffinityOfThePodsAlreadyThere() {
    PodRecord loner = pod("loner").on("n1").antiAffinity(term("web", "zone")).build();
    Simulation sim = sim(List.of(N1, N2, N3), loner);
    PodRecord web = pod("web").label("app", "web").unscheduled().build();
    assertThat(refusal(sim, web, N2)).hasValue("node(s) didn't satisfy existing pods anti-affinity rules");
    assertThat(refusal(sim, web, N3)).isEmpty();
    assertThat(refusal(sim, pod("db").label("app", "db").unscheduled().build(), N1)).isEmpty();
    // The holder moves to zone b: zone a is open, zone b closed.
    sim.move(loner, "n3");
    assertThat(refusal(sim, web, N2)).isEmpty();
    assertThat(refusal(sim, web, N3)).isPresent();
  }

  /**
   * The incoming pod's affinity: the node must have the term's key and a selected pod in its domain; with no selected
   * pod anywhere, the first pod of a group that matches its own terms goes anywhere with the key.
   */
  @Test
  void affinityOfTheIncomingPod() {
    PodRecord db = pod("db").label("app", "db").on("n1").build();
    Simulation sim = sim(List.of(N1, N2, N3, BARE), db);
    PodRecord nearDb = pod("api").unscheduled().affinity(term("db", "zone")).build();
    assertThat(refusal(sim, nearDb, N2)).isEmpty();
    assertThat(refusal(sim, nearDb, N3)).hasValue("node(s) didn't match pod affinity rules");
    assertThat(refusal(sim, nearDb, BARE)).isPresent();
    PodRecord firstOfGroup = pod("ring-0").label("app", "ring").unscheduled().affinity(term("ring", "zone")).build();
    assertThat(refusal(sim, firstOfGroup, N3)).isEmpty();
    assertThat(refusal(sim, firstOfGroup, BARE)).isPresent();
    PodRecord notItsOwnGroup = pod("x").label("app", "other").unscheduled().affinity(term("ring", "zone")).build();
    assertThat(refusal(sim, notItsOwnGroup, N3)).isPresent();
    // Once the db pod leaves, nothing matches: api is no longer the first of its group (it does not match its own term).
    sim.move(db, "");
    assertThat(refusal(sim, nearDb, N2)).isPresent();
  }

  /** A term's namespaces: its own namespace by default, those listed, or those its namespace selector matches. */
  @Test
  void affinityTermsSelectInTheirNamespaces() {
    PodRecord elsewhere = pod("cache-x").ns("other").label("app", "cache").on("n1").build();
    Simulation sim = sim(List.of(N1, N2), elsewhere);
    assertThat(refusal(sim, pod("c").label("app", "cache").unscheduled().antiAffinity(term("cache", HOST)).build(), N1)).isEmpty();
    Scheduling.PodAffinityTerm listed = new Scheduling.PodAffinityTerm(new LabelSelector(Map.of("app", "cache"), List.of()),
        Set.of("other"), Optional.empty(), HOST);
    assertThat(refusal(sim, pod("c").unscheduled().antiAffinity(listed).build(), N1)).isPresent();
    Scheduling.PodAffinityTerm selected = new Scheduling.PodAffinityTerm(new LabelSelector(Map.of("app", "cache"), List.of()),
        Set.of(), Optional.of(new LabelSelector(Map.of("team", "x"), List.of())), HOST);
    assertThat(refusal(sim, pod("c").unscheduled().antiAffinity(selected).build(), N1)).isPresent();
  }

  private static Scheduling.SpreadConstraint spread(String key, int maxSkew) {
    return new Scheduling.SpreadConstraint(maxSkew, key, "DoNotSchedule", new LabelSelector(Map.of("app", "web"), List.of()), List.of(),
        true, false);
  }

  /**
   * PodTopologySpread: matching pods in the node's domain, plus the pod if it matches, less the emptiest domain's, at
   * most maxSkew; the node must have the key; terminating pods and other namespaces' do not count.
   */
  @Test
  void topologySpread() {
    PodRecord a1 = pod("web-1").label("app", "web").on("n1").build();
    PodRecord a2 = pod("web-2").label("app", "web").on("n2").build();
    PodRecord leaving = pod("web-3").label("app", "web").on("n3").terminating().build();
    PodRecord foreign = pod("web-4").ns("other").label("app", "web").on("n3").build();
    Simulation sim = sim(List.of(N1, N2, N3, BARE), a1, a2, leaving, foreign);
    PodRecord web = pod("web-5").label("app", "web").unscheduled().spread(spread("zone", 1)).build();
    // zone a: 2, zone b: 0 (terminating and foreign pods do not count).
    assertThat(refusal(sim, web, N1)).hasValue("node(s) didn't match pod topology spread constraints");
    assertThat(refusal(sim, web, N3)).isEmpty();
    assertThat(refusal(sim, web, BARE)).hasValue("node(s) didn't match pod topology spread constraints (missing required label)");
    // A pod the constraint does not select is held to it all the same (it only does not count itself).
    PodRecord unlabelled = pod("x").unscheduled().spread(spread("zone", 1)).build();
    assertThat(refusal(sim, unlabelled, N1)).isPresent();
    assertThat(refusal(sim, unlabelled, N3)).isEmpty();
    sim.move(a2, "n3");
    assertThat(refusal(sim, web, N1)).isEmpty();
    PodRecord soft = pod("web-6").label("app", "web").unscheduled()
        .spread(new Scheduling.SpreadConstraint(1, "zone", "ScheduleAnyway", new LabelSelector(Map.of("app", "web"), List.of()), List.of(),
            true, false)).build();
    assertThat(refusal(sim(List.of(N1, N2, N3), a1, a2), soft, N1)).isEmpty();
  }

  /**
   * Domains are the nodes the inclusion policies admit: with node affinity honoured (the default), a zone only nodes
   * the pod may not go to is no domain, so its emptiness does not hold the skew.
   */
  @Test
  void topologySpreadCountsOnlyTheDomainsThePodMayUse() {
    NodeRecord c = node("n4").label(HOST, "n4").label("zone", "c").label("pool", "gpu").build();
    PodRecord a1 = pod("web-1").label("app", "web").on("n1").build();
    PodRecord b1 = pod("web-2").label("app", "web").on("n3").build();
    Simulation sim = sim(List.of(N1, N2, N3, c), a1, b1);
    var notGpu = new io.podsweeper.cluster.NodeSelectorTerm(List.of(new io.podsweeper.cluster.NodeSelectorTerm.Requirement("pool", "DoesNotExist", List.of())));
    PodRecord web = pod("web-3").label("app", "web").unscheduled().requiredNodeAffinity(notGpu).spread(spread("zone", 1)).build();
    assertThat(refusal(sim, web, N2)).isEmpty();
    PodRecord anywhere = pod("web-4").label("app", "web").unscheduled().spread(spread("zone", 1)).build();
    assertThat(refusal(sim, anywhere, N2)).isPresent();
  }

  /** Moves change every count, and a rollback restores them. */
  @Test
  void movesAndRollback() {
    PodRecord big = pod("big").requests("cpu", 3000).on("n1").build();
    Simulation sim = sim(List.of(N1, N2), big);
    PodRecord wants = pod("p").requests("cpu", 2000).unscheduled().build();
    assertThat(refusal(sim, wants, N1)).hasValue("Insufficient cpu");
    int mark = sim.mark();
    sim.move(big, "n2");
    assertThat(refusal(sim, wants, N1)).isEmpty();
    assertThat(sim.requested("n2")).containsEntry("cpu", 3000L);
    assertThat(sim.nodeOf(big)).isEqualTo("n2");
    sim.move(big, "");
    assertThat(sim.nodeOf(big)).isEmpty();
    sim.rollback(mark);
    assertThat(refusal(sim, wants, N1)).hasValue("Insufficient cpu");
    assertThat(sim.requested("n2")).doesNotContainKey("cpu");
    assertThat(sim.nodeOf(big)).isEqualTo("n1");
  }

  /** The pods that keep a pod off a node whatever the resources: host-port holders, and anti-affinity both ways. */
  @Test
  void conflictingPods() {
    PodRecord port = pod("proxy").hostPort("0.0.0.0", "TCP", 80).on("n1").build();
    PodRecord cache = pod("cache-a").label("app", "cache").on("n1").build();
    PodRecord holder = pod("loner").on("n2").antiAffinity(term("web", "zone")).build();
    Simulation sim = sim(List.of(N1, N2, N3), port, cache, holder);
    PodRecord web = pod("web").label("app", "web").hostPort("0.0.0.0", "TCP", 80).antiAffinity(term("cache", HOST)).unscheduled().build();
    assertThat(sim.conflicting(web, N1)).extracting(PodRecord::name).containsExactly("proxy", "cache-a", "loner");
    assertThat(sim.conflicting(web, N3)).isEmpty();
  }
}
