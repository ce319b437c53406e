package io.podsweeper.removal;

import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.removal.PathFixture.START;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.CleanupPolicies;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.YamlDocuments;
import io.podsweeper.strategy.Decision;
import io.podsweeper.testing.MemoryGuardWindowStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The promises of docs/reliability.md about admission, one test each, on the removal path alone with time in the
 * test's hands (no threads, no sleeps): the world moves at the worst moment, while a removal waits for its turn.
 */
class AdmissionPromisesTest {
  /** One removal at once (the bucket's burst), the next two seconds later: the second waits. */
  private static final String SLOW = "limits: {perSecond: 0.5}\nrules: [{name: r, states: [Failed]}]\n";

  /** The first goes at once; the second's wait is where the world moves. */
  private static PodRecord secondWaiting(PathFixture f) {
    assertThat(f.admit(f.failed("first"))).isEqualTo(Answer.REMOVED);
    assertThat(f.sentNames()).containsExactly("first");
    return f.failed("second");
  }

  @Test
  void aPauseWhileARemovalWaitsForTheRateStopsItAtOnce() {
    try (PathFixture f = new PathFixture(SLOW)) {
      PodRecord second = secondWaiting(f);
      int before = f.waits();
      f.whileWaiting(1, () -> f.pause.pause("an operator"));

      Answer answer = f.admit(second);

      assertThat(f.sentNames()).containsExactly("first");
      assertThat(f.waits() - before).as("the wait gives up at the next look, not when the token comes").isEqualTo(1);
      assertThat(answer.kind()).isEqualTo(Answer.Kind.RETRY);
      // Looked at again, it is held and says why, once.
      assertThat(f.admit(second)).isEqualTo(Answer.DONE);
      assertThat(f.outcomes).containsExactly("first success", "second paused");
    }
  }

  /**
   * A team's change not applied yet (its many policies still being judged) holds back its own namespace's removals,
   * said once; another namespace's go on (before, every namespace waited for every team's change).
   */
  @Test
  void aTeamsChangeNotYetAppliedHoldsItsOwnNamespaceOnly() {
    try (PathFixture f = new PathFixture("rules: [{name: r, states: [Failed]}]\n")) {
      f.path.policiesCurrentWhile(new PoliciesCurrent() {
        @Override
        public boolean watched() {
          return true;
        }

        @Override
        public boolean in(String namespace) {
          return !namespace.equals("a");
        }
      });
      PodRecord held = f.failed("held");
      PodRecord other = pod("other").ns("b").on("n1").created(PathFixture.OLD).phase("Failed")
          .container(PodFixtures.terminatedAt("c", "Error", 1, PathFixture.OLD.plusSeconds(1))).build();
      f.source.put(other);

      assertThat(f.admit(held).kind()).isEqualTo(Answer.Kind.RETRY);
      assertThat(f.admit(other).kind()).isEqualTo(Answer.Kind.REMOVED);
      assertThat(f.sentNames()).containsExactly("other");
      assertThat(f.path.currentIn("a")).isFalse();
      assertThat(f.path.currentIn("b")).isTrue();
      assertThat(f.path.current()).as("ready: the policies are watched").isTrue();
    }
  }

  @Test
  void aNamespaceProtectedWhileARemovalWaitsKeepsItsPod() {
    try (PathFixture f = new PathFixture(SLOW)) {
      PodRecord second = secondWaiting(f);
      // No pod event: a namespace annotation changes no pod's resourceVersion. Only the final check can see it.
      f.whileWaiting(1, () -> f.source.namespaces.put("a", new NamespaceRecord("a", Map.of(), true)));

      Answer answer = f.admit(second);

      assertThat(f.sentNames()).containsExactly("first");
      assertThat(answer).isEqualTo(Answer.retryAfter(Duration.ZERO));
    }
  }

  @Test
  void aReloadWithoutTheRuleWhileARemovalWaitsDropsIt() {
    try (PathFixture f = new PathFixture(SLOW)) {
      PodRecord second = secondWaiting(f);
      int before = f.waits();
      f.whileWaiting(1, () -> f.path.apply(PathFixture.parse("limits: {perSecond: 0.5}\nrules: [{name: other, states: [Succeeded]}]\n")));

      Answer answer = f.admit(second);

      assertThat(f.sentNames()).containsExactly("first");
      assertThat(f.waits() - before).as("a decision of an older policy gives up at once").isEqualTo(1);
      assertThat(answer.kind()).isEqualTo(Answer.Kind.RETRY);
    }
  }

  @Test
  void aLeaseLostWhileARemovalWaitsSendsNothing() {
    try (PathFixture f = new PathFixture(SLOW)) {
      PodRecord second = secondWaiting(f);
      int before = f.waits();
      f.whileWaiting(1, () -> f.leading = false);

      f.admit(second);
      f.advance(Duration.ofMinutes(1));
      f.admit(second);

      assertThat(f.sentNames()).containsExactly("first");
      assertThat(f.waits() - before).isEqualTo(1);
    }
  }

  @Test
  void aReloadThatRaisesTheRateFreesAWaitingRemovalAtOnce() {
    try (PathFixture f = new PathFixture("limits: {perSecond: 0.01}\nrules: [{name: r, states: [Failed]}]\n")) {
      PodRecord second = secondWaiting(f);
      int before = f.waits();
      f.whileWaiting(1, () -> f.path.apply(PathFixture.parse("limits: {perSecond: 100}\nrules: [{name: r, states: [Failed]}]\n")));

      Answer answer = f.admit(f.failed("second"));

      // A decision made under the old policy gives up (the generation changed); decided again, it goes at once.
      assertThat(answer.kind()).isEqualTo(Answer.Kind.RETRY);
      assertThat(f.admit(second)).isEqualTo(Answer.REMOVED);
      assertThat(f.sentNames()).containsExactly("first", "second");
      assertThat(f.waits() - before).as("a few slices, not the 100 s that 0.01/s would take").isLessThanOrEqualTo(5);
    }
  }

  /**
   * The guard's write-ahead takes 15 ms, longer than the 10 ms a token of perSecond 100 takes to come back: the
   * request's turn after the write comes from the sends' bucket, which the worker's turn did not spend, so the writes
   * alone set the pace. Before, the worker took a token, the write aged it, and the sender took a second of the same
   * bucket: 25 ms a removal here, and 56 a second in the load test at perSecond 100 (docs/benchmarks.md, removal rate).
   */
  @Test
  void aWriteAheadSlowerThanTheRatesIntervalDoesNotSlowTheRate() {
    MemoryGuardWindowStore store = new MemoryGuardWindowStore();
    try (PathFixture f = new PathFixture("limits: {perSecond: 100, burst: 1}\nguard: {maxRemovals: 100}\n"
        + "rules: [{name: r, states: [Failed]}]\n", store)) {
      store.beforeEachWrite(() -> f.advance(Duration.ofMillis(15)));
      long started = f.nanos();
      for (int i = 0; i < 20; i++) {
        assertThat(f.admit(f.failed("p" + i))).isEqualTo(Answer.REMOVED);
      }

      assertThat(f.sentNames()).hasSize(20);
      assertThat(f.waits()).as("no wait for a token: each came back during a write").isZero();
      assertThat(Duration.ofNanos(f.nanos() - started)).isEqualTo(Duration.ofMillis(20 * 15));
    }
  }

  @Test
  void aRequestRetriedAfterNoAnswerIsCountedOnceByTheGuard() {
    try (PathFixture f = new PathFixture("guard: {maxRemovals: 1}\nrules: [{name: r, states: [Failed]}]\n")) {
      PodRecord flaky = f.failed("flaky");
      f.answers.put("flaky", new RequestResult(RequestResult.Outcome.ERROR, RequestResult.NO_ANSWER, "timed out"));
      Answer first = f.admit(flaky);
      assertThat(first).isEqualTo(Answer.retryAfter(Duration.ofSeconds(5)));
      f.advance(first.after());
      f.answers.remove("flaky");

      assertThat(f.admit(flaky)).as("the retry takes over the count of the request that got no answer").isEqualTo(Answer.REMOVED);
      assertThat(f.sentNames()).containsExactly("flaky");
      f.admit(f.failed("other"));
      assertThat(f.sentNames()).as("a second removal is one too many").containsExactly("flaky");
      assertThat(f.pause.paused()).isTrue();
    }
  }

  @Test
  void theGuardsWindowOutlivesARestart() {
    // A process before this one removed two pods within the window and remembered it; maxRemovals 3.
    Instant before = START.minus(Duration.ofMinutes(2));
    MemoryGuardWindowStore store = new MemoryGuardWindowStore("delete " + before.getEpochSecond() / 10 * 10 + ":2\n");
    try (PathFixture f = new PathFixture("guard: {maxRemovals: 3}\nrules: [{name: r, states: [Failed]}]\n", store)) {
      f.admit(f.failed("a"));
      f.admit(f.failed("b"));

      assertThat(f.sentNames()).as("the third removal of the window, not the first of a new one").containsExactly("a");
      assertThat(f.pause.reason()).contains("would make 4 removals");
      assertThat(store.remembered()).as("written ahead of the removal").contains(":2").contains(":1");
    }
  }

  @Test
  void theHourlyCapOutlivesARestart() {
    // A process before this one removed two pods of namespace a by the team's policy within the hour; the cap is 2.
    Instant before = START.minus(Duration.ofMinutes(20));
    MemoryGuardWindowStore store = new MemoryGuardWindowStore("hourly a " + before.getEpochSecond() / 10 * 10 + ":2\n");
    try (PathFixture f = new PathFixture(teamPolicyCappedAt(2), store)) {
      f.admit(f.failed("third"));

      assertThat(f.sentNames()).isEmpty();
      assertThat(f.outcomes).containsExactly("third limited");
    }
  }

  @Test
  void aPlaceUnderTheHourlyCapIsWrittenAheadOfItsRemoval() {
    MemoryGuardWindowStore store = new MemoryGuardWindowStore();
    try (PathFixture f = new PathFixture(teamPolicyCappedAt(2), store)) {
      f.admit(f.failed("first"));

      assertThat(f.sentNames()).containsExactly("first");
      assertThat(store.remembered()).as("a finished pod's DELETE, which the guard's shares do not count: its place under the"
          + " hourly cap is remembered").contains("\nhourly a ").endsWith(":1\n");
    }
  }

  /** A team's PodCleanupPolicy in namespace a for its Failed pods, under the admin's hourly cap. */
  private static Policy teamPolicyCappedAt(int cap) {
    var rails = CleanupPolicies.clusterRails(Optional.of(YamlDocuments.read(
        "{allowTerminated: true, maxRemovalsPerHourPerNamespace: " + cap + "}", "test", 1 << 16).get(0)));
    var team = CleanupPolicies.judge(new CleanupPolicies.Source("a", "cleanup",
        YamlDocuments.read("rules: [{name: failed, states: [Failed], maxAgeAfterFinish: 1h}]", "test", 1 << 16).get(0)), rails);
    return CleanupPolicies.compose(PathFixture.parse("rules: [{name: file, namespaces: {include: [b]}, states: [Failed]}]\n"),
        List.of(team));
  }

  @Test
  void anUnreadableGuardWindowHoldsWhatTheGuardCoversAndOnlyThat() {
    MemoryGuardWindowStore store = new MemoryGuardWindowStore("evict a this is not a window\n");
    String policy = "guard: {maxNamespaceShare: 1.0, maxClusterShare: 1.0}\n"
        + "rules: [{name: crash, states: [Running], maxAge: 1h}, {name: failed, states: [Failed]}]\n";
    try (PathFixture f = new PathFixture(policy, store)) {
      assertThat(f.admit(f.running("running", "web"))).isEqualTo(Answer.retryAfter(GuardJournal.UNREADABLE_RECHECK));
      f.admit(f.failed("finished"));

      assertThat(f.sentNames()).as("a DELETE the guard does not count goes; the eviction waits").containsExactly("finished");
      assertThat(f.outcomes).contains("running limited");
      assertThat(f.metrics.guardWindowUnreadable.get()).isEqualTo(1.0);

      f.path.resumed(); // an operator resumes: the window starts over, written over the one that could not be read
      assertThat(f.admit(f.running("running", "web"))).isEqualTo(Answer.REMOVED);
      assertThat(f.sentNames()).containsExactly("finished", "running");
      assertThat(store.remembered()).startsWith("evict a ");
      assertThat(f.metrics.guardWindowUnreadable.get()).isZero();
    }
  }

  @Test
  void aGuardWindowRewrittenReadablyLetsTheRemovalsGoOn() {
    MemoryGuardWindowStore store = new MemoryGuardWindowStore("garbage\n");
    try (PathFixture f = new PathFixture("rules: [{name: crash, states: [Running], maxAge: 1h}]\n", store)) {
      PodRecord pod = f.running("running", "web");
      f.admit(pod);
      store.writeAsAnotherReplica("");
      f.advance(Duration.ofSeconds(1));
      f.admit(pod);
      assertThat(f.sentNames()).as("read again only every few seconds").isEmpty();

      f.advance(GuardJournal.UNREADABLE_RECHECK);
      f.admit(pod);

      assertThat(f.sentNames()).containsExactly("running");
    }
  }

  @Test
  void aJobAndAPodOfOneOwnerShareItsInFlightCap() {
    String policy = "migrationJobs: {mode: EvictDirectly}\nlimits: {maxInFlightPerOwner: 1}\nguard: {maxNamespaceShare: 1.0}\n"
        + "rules: [{name: r, states: [Running], maxAge: 1h}]\n";
    try (PathFixture f = new PathFixture(policy)) {
      PodRecord moved = f.running("moved", "web");
      PodRecord sibling = f.running("sibling", "web");
      Decision byHand = Decision.of(moved, JobAdmission.HAND_MADE, JobAdmission.HAND_MADE, "job-moved", "moved by hand", START);
      assertThat(f.path.jobs().admit(moved, byHand)).as("the hand-made job is admitted").isEmpty();

      assertThat(f.admit(sibling)).isEqualTo(Answer.DONE);

      assertThat(f.sentNames()).isEmpty();
      assertThat(f.outcomes).containsExactly("sibling limited");
    }
  }
}
