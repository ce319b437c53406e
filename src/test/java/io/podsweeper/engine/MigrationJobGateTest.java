package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.kube.PodRemover;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.safety.GuardWindowStore;
import io.podsweeper.strategy.Decision;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * PodMigrationJobs in the gate: a job holds its place in the limits from its admission until it ends, one that ends
 * before its eviction gives the place back, and its eviction meets the final check when it is sent.
 */
class MigrationJobGateTest {
  private static final String POLICY = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      migrationJobs: {mode: EvictDirectly}
      limits: {maxTotal: 1}
      guard: {maxNamespaceShare: 1.0}
      rules: [{name: r, states: [Failed]}]
      """;

  private final SweeperTest.FakeSource source = new SweeperTest.FakeSource();
  private final Metrics metrics = new Metrics();
  private final KillSwitch killSwitch = new KillSwitch(metrics, (paused, reason, over) -> true);
  private final List<Decision> sent = new CopyOnWriteArrayList<>();

  private Sweeper sweeper() {
    return sweeper(POLICY);
  }

  private Sweeper sweeper(String policy) {
    return sweeper(PolicyLoader.parse(policy, "test"));
  }

  private Sweeper sweeper(Policy policy) {
    Sweeper s = new Sweeper(policy, source, (d, dryRun) -> {
      throw new AssertionError("no request outside a job here");
    }, metrics, Clock.systemUTC(), new RecentDecisions(100), killSwitch, why -> {}, GuardWindowStore.NONE);
    s.start();
    return s;
  }

  private PodRecord running(String name) {
    PodRecord p = pod(name).ns("a").on("n1").ownedBy("ReplicaSet", "rs").phase("Running").container(PodFixtures.running("c")).build();
    source.put(p);
    return p;
  }

  private static Decision decision(PodRecord p) {
    return Decision.of(p, "PodMigrationJob", "PodMigrationJob", "job-" + p.name(), "moved by hand", Instant.now());
  }

  private RemovalGate.JobSendResult evict(RemovalGate gate, PodRecord p) {
    return gate.evictForJob(p, Optional.empty(), d -> {
      sent.add(d);
      return new PodRemover.Result(PodRemover.Outcome.REMOVED, 201, "evicted");
    });
  }

  @Test
  void aJobHoldsItsPlaceInTheLimitsUntilItEndsAndGivesItBackIfItNeverEvicted() {
    try (Sweeper s = sweeper()) {
      RemovalGate gate = s.gate();
      PodRecord first = running("first");
      PodRecord second = running("second");
      assertThat(gate.admitJob(first, decision(first))).isEmpty();
      assertThat(gate.admitJob(second, decision(second))).hasValueSatisfying(why -> assertThat(why).contains("limit"));

      gate.jobEnded(first.uid());

      assertThat(gate.admitJob(second, decision(second))).isEmpty();
    }
  }

  @Test
  void aJobsEvictionIsHeldWhilePausedAndSentWithThePodsCurrentVersionAfter() {
    try (Sweeper s = sweeper()) {
      RemovalGate gate = s.gate();
      PodRecord p = running("web");
      assertThat(evict(gate, p).outcome()).isEqualTo(RemovalGate.JobSend.HELD);
      assertThat(gate.admitJob(p, decision(p))).isEmpty();
      killSwitch.pause("test");

      assertThat(evict(gate, p)).satisfies(r -> {
        assertThat(r.outcome()).isEqualTo(RemovalGate.JobSend.HELD);
        assertThat(r.message()).startsWith("removals are paused");
      });
      assertThat(sent).isEmpty();

      killSwitch.resume();
      PodRecord changed = pod("web").ns("a").on("n1").ownedBy("ReplicaSet", "rs").uid(p.uid()).rv("99").phase("Running")
          .container(PodFixtures.running("c")).build();
      source.put(changed);
      assertThat(evict(gate, changed).outcome()).isEqualTo(RemovalGate.JobSend.SENT);
      assertThat(sent).singleElement().satisfies(d -> {
        assertThat(d.uid()).isEqualTo(p.uid());
        assertThat(d.resourceVersion()).isEqualTo("99");
      });
    }
  }

  /**
   * A job's eviction meets its owner's limits as they are when it is sent, not only at its admission: a sibling that
   * went unavailable meanwhile (or that the worker admitted at the same moment) holds it. Its own place among the
   * evictions in progress does not count against maxInFlightPerOwner.
   */
  @Test
  void aJobsEvictionIsHeldWhileASiblingIsUnavailable() {
    try (Sweeper s = sweeper(POLICY.replace("limits: {maxTotal: 1}", "limits: {maxTotal: 5, maxUnavailablePerOwner: 1, maxInFlightPerOwner: 1}"))) {
      RemovalGate gate = s.gate();
      PodRecord web = ready("web", "True");
      ready("sibling", "True");
      assertThat(gate.admitJob(web, decision(web))).isEmpty();
      ready("sibling", "False");
      assertThat(evict(gate, web)).satisfies(r -> {
        assertThat(r.outcome()).isEqualTo(RemovalGate.JobSend.HELD);
        assertThat(r.message()).contains("would leave 2 pods of ReplicaSet rs unavailable");
      });
      ready("sibling", "True");
      assertThat(evict(gate, web).outcome()).isEqualTo(RemovalGate.JobSend.SENT);
      assertThat(sent).singleElement().satisfies(d -> assertThat(d.name()).isEqualTo("web"));
    }
  }

  private PodRecord ready(String name, String ready) {
    PodRecord p = pod(name).ns("a").on("n1").uid("uid-" + name).ownedBy("ReplicaSet", "rs").phase("Running").container(PodFixtures.running("c"))
        .condition("Ready", ready, null, null).build();
    source.put(p);
    return p;
  }

  /**
   * A job's eviction that got no answer may have been carried out; when the job then ends without another (its TTL
   * ran out), the guard keeps counting it: under maxRemovals 1 no second job is admitted. So too when the pod is seen
   * terminating first (the eviction did happen); not when a later version of the pod, not terminating, shows it did
   * not.
   */
  @Test
  void aJobsEvictionWithoutAnAnswerStaysCountedWhenTheJobEnds() {
    assertThat(secondJobAfterAnUnansweredEvictionAnd(Optional.empty())).hasValueSatisfying(why -> assertThat(why).contains("guard"));
  }

  @Test
  void aJobsEvictionWithoutAnAnswerStaysCountedWhenThePodTerminatesBeforeTheJobEnds() {
    assertThat(secondJobAfterAnUnansweredEvictionAnd(Optional.of(pod("web").rv("2").terminating())))
        .hasValueSatisfying(why -> assertThat(why).contains("guard"));
  }

  @Test
  void aJobsEvictionWithoutAnAnswerIsForgottenWhenThePodShowsItDidNotHappen() {
    assertThat(secondJobAfterAnUnansweredEvictionAnd(Optional.of(pod("web").rv("2")))).isEmpty();
  }

  /** Under guard.maxRemovals 1, job web's eviction gets no answer, web shows as {@code next}, the job ends: a second job? */
  private Optional<String> secondJobAfterAnUnansweredEvictionAnd(Optional<PodFixtures.PodBuilder> next) {
    try (Sweeper s = sweeper(POLICY.replace("limits: {maxTotal: 1}", "limits: {maxTotal: 5}").replace("guard: {maxNamespaceShare: 1.0}",
        "guard: {maxRemovals: 1, maxNamespaceShare: 1.0}"))) {
      RemovalGate gate = s.gate();
      PodRecord web = running("web");
      assertThat(gate.admitJob(web, decision(web))).isEmpty();
      assertThat(gate.evictForJob(web, Optional.empty(),
          d -> new PodRemover.Result(PodRemover.Outcome.ERROR, PodRemover.NO_ANSWER, "timed out")).outcome()).isEqualTo(RemovalGate.JobSend.HELD);
      next.map(b -> b.ns("a").on("n1").uid(web.uid()).ownedBy("ReplicaSet", "rs").phase("Running").container(PodFixtures.running("c")).build())
          .ifPresent(changed -> {
            source.put(changed);
            gate.podChanged(changed);
          });
      gate.jobEnded(web.uid());
      PodRecord other = running("other");
      return gate.admitJob(other, decision(other));
    }
  }

  @Test
  void aJobsEvictionEndsOnceWhenThePodsDeletionIsSeenBeforeTheAnswer() {
    try (Sweeper s = sweeper()) {
      RemovalGate gate = s.gate();
      PodRecord p = running("web");
      assertThat(gate.admitJob(p, decision(p))).isEmpty();

      // The informer's delete event can come in before the eviction's answer: both end the same removal.
      assertThat(gate.evictForJob(p, Optional.empty(), d -> {
        gate.podDeleted(p);
        return new PodRemover.Result(PodRemover.Outcome.REMOVED, 201, "evicted");
      }).outcome()).isEqualTo(RemovalGate.JobSend.SENT);
      gate.jobEnded(p.uid());

      assertThat(removals("success")).isEqualTo(1.0);
    }
  }

  private double removals(String result) {
    return java.util.Collections.list(metrics.registry().metricFamilySamples()).stream()
        .filter(f -> f.name.equals("podsweeper_removals")).flatMap(f -> f.samples.stream())
        .filter(x -> x.name.equals("podsweeper_removals_total") && x.labelValues.get(x.labelNames.indexOf("result")).equals(result))
        .mapToDouble(x -> x.value).sum();
  }

  @Test
  void aHandMadeJobOfAProtectedPodIsRefused() {
    try (Sweeper s = sweeper()) {
      PodRecord p = running("web");
      s.gate().admitJob(p, decision(p));
      // A hand-made job is judged by the evictor's protections (given here): a protected pod is refused, nothing sent.
      assertThat(s.gate().evictForJob(p, Optional.of("a DaemonSet pod"), d -> {
        throw new AssertionError("not sent");
      })).isEqualTo(new RemovalGate.JobSendResult(RemovalGate.JobSend.REFUSED, "a DaemonSet pod"));
    }
  }

  /**
   * Under {@code dryRun: true} a hand-made job is neither admitted nor evicted: a job's eviction has no dry-run of its
   * own. (Before, the gate admitted it as live and its eviction was a real one.)
   */
  @Test
  void aHandMadeJobUnderADryRunPolicySendsNoEviction() {
    try (Sweeper s = sweeper(PolicyLoader.parse(POLICY, "test").withDryRun(true))) {
      PodRecord p = running("web");
      assertThat(s.gate().admitJob(p, decision(p))).contains(RemovalGate.JOBS_IN_DRY_RUN);

      assertThat(evict(s.gate(), p).outcome()).isEqualTo(RemovalGate.JobSend.HELD);
      assertThat(sent).isEmpty();
    }
  }

  /**
   * A job admitted under a live policy, which then switches to dry-run before the job's eviction (a ReservationFirst
   * job waiting for its Reservation, say): its eviction waits out the dry-run, and goes once the policy is live again.
   */
  @Test
  void aJobAdmittedLiveWaitsOutASwitchToDryRun() {
    Policy live = PolicyLoader.parse(POLICY, "test");
    try (Sweeper s = sweeper(live)) {
      PodRecord p = running("web");
      assertThat(s.gate().admitJob(p, decision(p))).isEmpty();

      s.reload(live.withDryRun(true));
      assertThat(evict(s.gate(), p)).isEqualTo(new RemovalGate.JobSendResult(RemovalGate.JobSend.HELD, RemovalGate.JOBS_IN_DRY_RUN));
      assertThat(sent).isEmpty();

      s.reload(live);
      assertThat(evict(s.gate(), p).outcome()).isEqualTo(RemovalGate.JobSend.SENT);
    }
  }

  /**
   * A job this service made for a rule's decision is carried out only while its rule, re-judged on the pod as it is
   * now, still wants it (README), also by a new leader or after a restart: the job names the profile that decided
   * ({@code podsweeper.io/profile}), and the controller's decision carries it. (Before, that lived only in the gate's
   * memory: another process judged the job as hand-made, by the evictor's protections alone, and evicted a pod no
   * rule wanted any more.) The only rule wants Failed pods; "web" is Running.
   */
  @Test
  void aJobThisServiceMadeIsJudgedByItsRuleInAnotherProcess() {
    try (Sweeper newLeader = sweeper()) {
      PodRecord p = running("web");
      assertThat(newLeader.gate().admitJob(p, madeBy(newLeader, p))).isEmpty();

      assertThat(evict(newLeader.gate(), p)).isEqualTo(new RemovalGate.JobSendResult(RemovalGate.JobSend.REFUSED, "no rule wants the pod now"));
      assertThat(sent).isEmpty();
    }
  }

  /** The twin: the same job, its rule still wanting the pod, is carried out. */
  @Test
  void aJobThisServiceMadeWhoseRuleStillWantsThePodIsCarriedOutInAnotherProcess() {
    try (Sweeper newLeader = sweeper(POLICY.replace("states: [Failed]", "states: [Running]"))) {
      PodRecord p = running("web");
      assertThat(newLeader.gate().admitJob(p, madeBy(newLeader, p))).isEmpty();

      assertThat(evict(newLeader.gate(), p).outcome()).isEqualTo(RemovalGate.JobSend.SENT);
      assertThat(sent).singleElement().satisfies(d -> assertThat(d.name()).isEqualTo("web"));
    }
  }

  /** What MigrationJobController.decision builds for a job this service made for a PodLifeTime deadline: its profile. */
  private static Decision madeBy(Sweeper s, PodRecord p) {
    String profile = s.gate().rules().policy().profiles().get(0).name();
    return Decision.of(p, "PodLifeTime", profile, "job-" + p.name(), "PodMigrationJob job-" + p.name(), Instant.now());
  }
}
