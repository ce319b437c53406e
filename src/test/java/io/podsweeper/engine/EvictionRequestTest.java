package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.removal.EvictionRequester;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.safety.GuardWindowStore;
import io.podsweeper.strategy.Decision;
import io.podsweeper.testing.FakePodSource;
import io.podsweeper.testing.MemoryGuardWindowStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Evictions as EvictionRequests (KEP-4563) through the gate, without an API server: which pods are requested, that a
 * request in progress holds its place, and when the service withdraws it or sees it end.
 */
class EvictionRequestTest {
  private static final Instant OLD = Instant.now().minus(Duration.ofHours(5));
  private static final String OPT_IN = "descheduler.alpha.kubernetes.io/request-evict-only";
  private static final String POLICY = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      limits: {maxInFlightPerOwner: 1}
      guard: {maxNamespaceShare: 1.0, maxClusterShare: 1.0}
      rules: [{name: r, states: [Running]}]
      """;

  private final FakePodSource source = new FakePodSource();
  private final RecentDecisions recent = new RecentDecisions(100);
  private final Metrics metrics = new Metrics();
  private final List<Decision> evicted = new CopyOnWriteArrayList<>();
  private final List<String> requested = new CopyOnWriteArrayList<>();
  private final List<String> withdrawn = new CopyOnWriteArrayList<>();
  private volatile RequestResult.Outcome withdrawAnswer = RequestResult.Outcome.REMOVED;

  private final EvictionRequester requester = new EvictionRequester() {
    @Override
    public RequestResult request(Decision decision, boolean balance, boolean dryRun) {
      requested.add(decision.podKey());
      return new RequestResult(RequestResult.Outcome.REMOVED, 201, "");
    }

    @Override
    public RequestResult withdraw(Decision decision) {
      withdrawn.add(decision.podKey());
      return new RequestResult(withdrawAnswer, withdrawAnswer == RequestResult.Outcome.REMOVED ? 200 : 500, "");
    }

    @Override
    public List<EvictionRequester.Observed> listed() {
      return listed;
    }
  };
  /** The requests the cluster has, as the informer listed them. */
  private final List<EvictionRequester.Observed> listed = new CopyOnWriteArrayList<>();

  private Sweeper sweeper(String policy) {
    Sweeper s = new Sweeper(PolicyLoader.parse(policy, "test"), source, (d, dryRun) -> {
      evicted.add(d);
      return new RequestResult(RequestResult.Outcome.REMOVED, 201, "");
    }, metrics, Clock.systemUTC(), recent);
    s.requestEvictionsThrough(requester);
    s.start();
    return s;
  }

  private void arrive(Sweeper s, PodRecord p) {
    source.put(p);
    s.podChanged(p);
  }

  private List<String> results() {
    return recent.list().stream().map(e -> e.decision().podKey() + " " + e.result()).toList();
  }

  private static PodRecord vm(String name, String owner) {
    return pod(name).ns("vms").uid("uid-" + name).created(OLD).ownedBy("VirtualMachineInstance", owner).annotation(OPT_IN, "").build();
  }

  private static EvictionRequester.Observed observed(String uid, List<String> requesters, Optional<String> evicted,
      Optional<String> canceled, String progress) {
    return new EvictionRequester.Observed("vms", uid, uid.substring("uid-".length()), requesters, evicted, canceled, progress,
        EvictionRequester.Origin.UNKNOWN);
  }

  private static EvictionRequester.Observed ours(String uid) {
    return observed(uid, List.of("podsweeper.io"), Optional.empty(), Optional.empty(), "");
  }

  /**
   * A restarted process takes over the requests that list it: one whose pod still qualifies is in progress (its owner's
   * other pod waits, it is not requested again), one whose pod is protected or gone is withdrawn at once; others'
   * requests and ended ones are left alone.
   */
  @Test
  void aRestartTakesOverItsRequestsCountsThemAndWithdrawsThoseThatNoLongerQualify() {
    source.put(vm("a", "vm"));
    source.put(pod("p").ns("vms").uid("uid-p").created(OLD).annotation(OPT_IN, "").annotation("podsweeper.io/protect", "true").build());
    source.put(vm("x", "vm-x"));
    listed.addAll(List.of(ours("uid-a"), ours("uid-p"), ours("uid-gone"),
        observed("uid-x", List.of("drain.example.com"), Optional.empty(), Optional.empty(), ""),
        observed("uid-e", List.of("podsweeper.io"), Optional.of("PodDeleted"), Optional.empty(), "")));
    try (Sweeper s = sweeper(POLICY)) {
      s.adoptEvictionRequests();
      await().atMost(Duration.ofSeconds(3)).until(() -> withdrawn.size() == 2);
      assertThat(withdrawn).containsExactlyInAnyOrder("vms/p", "vms/gone");
      await().atMost(Duration.ofSeconds(3)).until(() -> results().containsAll(List.of("vms/p canceled", "vms/gone canceled")));
      assertThat(recent.list()).filteredOn(e -> e.decision().name().equals("gone")).singleElement()
          .satisfies(e -> assertThat(e.message()).isEqualTo("EvictionRequest uid-gone withdrawn: the pod is gone"));
      arrive(s, vm("a", "vm"));
      arrive(s, vm("b", "vm"));
      await().atMost(Duration.ofSeconds(3)).until(() -> results().contains("vms/b limited"));
      assertThat(requested).isEmpty();
      // Taken over again (the informer's first list after a new term): nothing is counted twice.
      s.adoptEvictionRequests();
      s.evictionRequestObserved(observed("uid-a", List.of("podsweeper.io"), Optional.of("PodDeleted"), Optional.empty(), ""));
      s.podDeleted(source.pods.remove("vms/a"));
      await().atMost(Duration.ofSeconds(3)).until(() -> requested.contains("vms/b"));
    }
  }

  /**
   * A restart takes over requests for a and b, whose pods still run; the remembered window holds them. They are being
   * evicted, not running as well: of four pods, two are going, and the next one would be over half.
   */
  @Test
  void requestsTakenOverAreNotCountedAsRunningByTheGuard() {
    long bucket = (Instant.now().getEpochSecond() / 10 + 1) * 10;
    MemoryGuardWindowStore remembered = new MemoryGuardWindowStore("evict vms " + bucket + ":2\n");
    List.of("a", "b", "c", "d").forEach(name -> source.put(vm(name, "vm-" + name)));
    listed.addAll(List.of(ours("uid-a"), ours("uid-b")));
    KillSwitch killSwitch = new KillSwitch(metrics, (paused, reason, over) -> true);
    String policy = POLICY.replace("guard: {maxNamespaceShare: 1.0, maxClusterShare: 1.0}", "guard: {maxNamespaceShare: 0.5, maxClusterShare: 1.0, minEvictions: 0}");
    try (Sweeper s = new Sweeper(PolicyLoader.parse(policy, "test"), source, (d, dryRun) -> null, metrics, Clock.systemUTC(), recent,
        killSwitch, why -> {}, remembered)) {
      s.requestEvictionsThrough(requester);
      s.start();
      s.adoptEvictionRequests();
      arrive(s, vm("c", "vm-c"));
      arrive(s, vm("d", "vm-d"));
      await().atMost(Duration.ofSeconds(3)).until(killSwitch::paused);
      assertThat(killSwitch.reason()).contains("would evict 3 of 4 running pods in namespace vms");
      assertThat(requested).isEmpty();
    }
  }

  /**
   * A request made under a profile the policy in force does not have (yet: a team's policy read a moment later) is
   * taken over and counted, but judged only at the next policy change.
   */
  @Test
  void aRequestOfAProfileNotReadYetIsJudgedAtTheNextPolicyChange() {
    source.put(pod("p").ns("vms").uid("uid-p").created(OLD).annotation(OPT_IN, "").annotation("podsweeper.io/protect", "true").build());
    listed.add(new EvictionRequester.Observed("vms", "uid-p", "p", List.of("podsweeper.io"), Optional.empty(), Optional.empty(), "",
        new EvictionRequester.Origin("PodLifeTime", "team-a", "r", false)));
    try (Sweeper s = sweeper(POLICY)) {
      s.adoptEvictionRequests();
      await().during(Duration.ofMillis(500)).until(() -> withdrawn.isEmpty());
      s.reload(PolicyLoader.parse(POLICY, "test"));
      await().atMost(Duration.ofSeconds(3)).until(() -> withdrawn.contains("vms/p"));
    }
  }

  @Test
  void aPodThatOptsInIsRequestedOnceAndHoldsItsOwnersPlaceTheOthersAreEvicted() {
    try (Sweeper s = sweeper(POLICY)) {
      arrive(s, vm("a", "vm"));
      arrive(s, pod("web").ns("vms").created(OLD).build());
      await().atMost(Duration.ofSeconds(3)).until(() -> requested.size() == 1 && evicted.size() == 1);
      assertThat(requested).containsExactly("vms/a");
      assertThat(evicted).extracting(Decision::podKey).containsExactly("vms/web");
      // In progress: more events neither request it again nor let a second pod of the same owner go.
      arrive(s, vm("a", "vm"));
      arrive(s, vm("b", "vm"));
      await().during(Duration.ofMillis(500)).until(() -> requested.size() == 1);
      assertThat(results()).contains("vms/a background", "vms/b limited");
      assertThat(metrics.removals.labels("background", "PodLifeTime", "vms", "evict", "r").get()).isEqualTo(1.0);
    }
  }

  /** Upstream counts its evictions in background against the limits in every cycle until they end; so does the gate. */
  @Test
  void aRequestInProgressHoldsItsPlaceInEveryNewWindowUntilItEnds() {
    try (Sweeper s = sweeper(POLICY.replace("maxInFlightPerOwner: 1", "maxTotal: 1") + "fullPassInterval: 1s\n")) {
      arrive(s, vm("a", "vm-a"));
      await().atMost(Duration.ofSeconds(3)).until(() -> requested.size() == 1);
      arrive(s, vm("b", "vm-b"));
      // Two new windows, and a is still in progress: b stays over maxTotal.
      await().during(Duration.ofMillis(2500)).until(() -> requested.size() == 1);
      assertThat(results()).contains("vms/b limited");
      // The eviction-request controller's part: Evicted, and the pod is gone.
      s.evictionRequestObserved(observed("uid-a", List.of("podsweeper.io"), Optional.of("PodDeleted"), Optional.empty(), ""));
      s.podDeleted(source.pods.remove("vms/a"));
      await().atMost(Duration.ofSeconds(3)).until(() -> requested.contains("vms/b"));
    }
  }

  /**
   * A request taken over from an earlier process holds a place only while it is in progress: it was made in a window
   * of that process, so when it ends it gives the place back, also in the window that took it over.
   */
  @Test
  void aRequestTakenOverGivesItsPlaceBackWhenItEnds() {
    try (Sweeper s = sweeper(POLICY.replace("maxInFlightPerOwner: 1", "maxTotal: 1") + "fullPassInterval: 1h\n")) {
      source.put(vm("a", "vm-a"));
      listed.add(ours("uid-a"));
      s.adoptEvictionRequests();
      arrive(s, vm("b", "vm-b"));
      await().atMost(Duration.ofSeconds(3)).until(() -> results().contains("vms/b limited"));
      s.evictionRequestObserved(observed("uid-a", List.of("podsweeper.io"), Optional.of("PodDeleted"), Optional.empty(), ""));
      s.podDeleted(source.pods.remove("vms/a"));
      arrive(s, pod("b").ns("vms").uid("uid-b").rv("2").created(OLD).ownedBy("VirtualMachineInstance", "vm-b").annotation(OPT_IN, "").build());
      await().atMost(Duration.ofSeconds(3)).until(() -> requested.contains("vms/b"));
    }
  }

  @Test
  void withPolicyAllEveryEvictionIsARequest() {
    try (Sweeper s = sweeper(POLICY + "evictionRequests: All\n")) {
      arrive(s, pod("web").ns("vms").created(OLD).build());
      await().atMost(Duration.ofSeconds(3)).until(() -> requested.size() == 1);
      assertThat(evicted).isEmpty();
    }
  }

  @Test
  void aPodProtectedWhileInProgressIsWithdrawnAndFreesItsOwnersPlace() {
    try (Sweeper s = sweeper(POLICY)) {
      arrive(s, vm("a", "vm"));
      arrive(s, vm("b", "vm"));
      await().atMost(Duration.ofSeconds(3)).until(() -> results().contains("vms/b limited"));
      // The pod terminating is the eviction under way, not a reason to withdraw.
      arrive(s, pod("a").ns("vms").uid("uid-a").rv("2").created(OLD).ownedBy("VirtualMachineInstance", "vm").annotation(OPT_IN, "")
          .terminating().build());
      arrive(s, pod("a").ns("vms").uid("uid-a").rv("3").created(OLD).ownedBy("VirtualMachineInstance", "vm").annotation(OPT_IN, "")
          .annotation("podsweeper.io/protect", "true").build());
      await().atMost(Duration.ofSeconds(3)).until(() -> withdrawn.size() == 1);
      assertThat(withdrawn).containsExactly("vms/a");
      await().atMost(Duration.ofSeconds(3)).until(() -> results().contains("vms/a canceled"));
      assertThat(recent.list()).filteredOn(e -> e.result().equals("canceled")).singleElement()
          .satisfies(e -> assertThat(e.message()).isEqualTo("EvictionRequest uid-a withdrawn: no rule wants the pod now"));
      // Its place is free: the owner's other pod goes at once.
      await().atMost(Duration.ofSeconds(3)).until(() -> requested.contains("vms/b"));
    }
  }

  @Test
  void aReloadWithoutTheRuleOrAPauseWithdraws() {
    KillSwitch killSwitch = new KillSwitch(metrics, (paused, reason, over) -> true);
    try (Sweeper s = new Sweeper(PolicyLoader.parse(POLICY, "test"), source, (d, dryRun) -> null, metrics, Clock.systemUTC(), recent,
        killSwitch, why -> {}, GuardWindowStore.NONE)) {
      s.requestEvictionsThrough(requester);
      s.start();
      arrive(s, vm("a", "vm-a"));
      arrive(s, vm("b", "vm-b"));
      await().atMost(Duration.ofSeconds(3)).until(() -> requested.size() == 2);
      s.reload(PolicyLoader.parse(POLICY.replace("name: r,", "name: other, namespaces: {include: [web]},"), "test"));
      await().atMost(Duration.ofSeconds(3)).until(() -> withdrawn.size() == 2);
      arrive(s, vm("c", "vm-c"));
      s.reload(PolicyLoader.parse(POLICY, "test"));
      await().atMost(Duration.ofSeconds(3)).until(() -> requested.contains("vms/c"));
      killSwitch.pause("stop");
      await().atMost(Duration.ofSeconds(3)).until(() -> withdrawn.contains("vms/c"));
      assertThat(recent.list()).filteredOn(e -> e.decision().name().equals("c") && e.result().equals("canceled")).singleElement()
          .satisfies(e -> assertThat(e.message()).isEqualTo("EvictionRequest uid-c withdrawn: removals are paused: stop"));
    }
  }

  @Test
  void aWithdrawalTheServerDidNotTakeLeavesItInProgress() {
    try (Sweeper s = sweeper(POLICY)) {
      arrive(s, vm("a", "vm"));
      await().atMost(Duration.ofSeconds(3)).until(() -> requested.size() == 1);
      withdrawAnswer = RequestResult.Outcome.ERROR;
      arrive(s, pod("a").ns("vms").uid("uid-a").rv("2").created(OLD).ownedBy("VirtualMachineInstance", "vm").annotation(OPT_IN, "")
          .annotation("podsweeper.io/protect", "true").build());
      await().atMost(Duration.ofSeconds(3)).until(() -> withdrawn.size() == 1);
      withdrawAnswer = RequestResult.Outcome.REMOVED;
      // Still in progress: the next change tries again.
      arrive(s, pod("a").ns("vms").uid("uid-a").rv("3").created(OLD).ownedBy("VirtualMachineInstance", "vm").annotation(OPT_IN, "")
          .annotation("podsweeper.io/protect", "true").build());
      await().atMost(Duration.ofSeconds(3)).until(() -> results().contains("vms/a canceled"));
      assertThat(withdrawn).hasSize(2);
    }
  }

  /** A replica that steps down neither follows nor withdraws; the next term takes the request over and withdraws it. */
  @Test
  void aReplicaThatLostTheLeaseLeavesTheRequestsToTheNewLeader() {
    try (Sweeper s = sweeper(POLICY)) {
      arrive(s, vm("a", "vm"));
      await().atMost(Duration.ofSeconds(3)).until(() -> requested.size() == 1);
      s.setLeading(false);
      s.evictionRequestObserved(observed("uid-a", List.of("podsweeper.io"), Optional.of("PodDeleted"), Optional.empty(), ""));
      arrive(s, pod("a").ns("vms").uid("uid-a").rv("2").created(OLD).ownedBy("VirtualMachineInstance", "vm").annotation(OPT_IN, "")
          .annotation("podsweeper.io/protect", "true").build());
      await().during(Duration.ofMillis(500)).until(() -> withdrawn.isEmpty());
      assertThat(results()).containsExactly("vms/a background");
      listed.add(ours("uid-a"));
      s.setLeading(true);
      await().atMost(Duration.ofSeconds(3)).until(() -> withdrawn.contains("vms/a"));
    }
  }

  @Test
  void evictedIsASuccessCanceledByOthersGivesThePlaceBack() {
    try (Sweeper s = sweeper(POLICY)) {
      arrive(s, vm("a", "vm-a"));
      arrive(s, vm("b", "vm-b"));
      await().atMost(Duration.ofSeconds(3)).until(() -> requested.size() == 2);
      s.evictionRequestObserved(observed("uid-a", List.of("podsweeper.io"), Optional.empty(), Optional.empty(), "kubevirt.io: 40%"));
      s.evictionRequestObserved(observed("uid-a", List.of("podsweeper.io"), Optional.of("PodDeleted"), Optional.empty(), ""));
      assertThat(recent.list().get(0).message()).isEqualTo("EvictionRequest uid-a ended: Evicted: PodDeleted (last progress: kubevirt.io: 40%)");
      assertThat(results().get(0)).isEqualTo("vms/a success");
      s.evictionRequestObserved(observed("uid-b", List.of("drain.example.com"), Optional.empty(), Optional.empty(), ""));
      assertThat(results().get(0)).isEqualTo("vms/b canceled");
      assertThat(recent.list().get(0).message())
          .isEqualTo("EvictionRequest uid-b canceled by others: this service was taken out of spec.requesters");
      assertThat(withdrawn).isEmpty();
      // Ended: later news of them changes nothing.
      s.evictionRequestObserved(observed("uid-a", List.of(), Optional.empty(), Optional.of("gone"), ""));
      assertThat(recent.list()).hasSize(4);
    }
  }

  @Test
  void anUnknownModeIsRefusedNamingThePlace() {
    assertThatThrownBy(() -> PolicyLoader.parse(POLICY + "evictionRequests: Always\n", "test"))
        .isInstanceOf(PolicyException.class)
        .hasMessageContaining("evictionRequests")
        .hasMessageContaining("unknown value \"Always\" (one of OptIn, All)");
  }
}
