package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The world moves while a removal waits for its turn (a slow rate here): whatever changed by the instant before the
 * request decides, not what held when the pod became due.
 */
class WhileARemovalWaitsTest {
  private static final Instant OLD = Instant.now().minus(Duration.ofHours(5));
  private static final String HEAD = "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n";
  /** One removal at once (the bucket's burst), the next 2 s later: the second waits while the test changes things. */
  private static final String SLOW = HEAD + "limits: {perSecond: 0.5}\nrules: [{name: r, states: [Failed]}]\n";

  private final FakePodSource source = new FakePodSource();
  private final List<Decision> sent = new CopyOnWriteArrayList<>();
  /** When each of {@link #sent} was sent (System.nanoTime). */
  private final List<Long> sentAt = new CopyOnWriteArrayList<>();
  private final RecentDecisions recent = new RecentDecisions(100);
  private final Metrics metrics = new Metrics();
  private final KillSwitch killSwitch = new KillSwitch(metrics, (paused, reason, over) -> true);
  /** The request for pod "held" waits on the wire until the test answers it, then finds the pod gone (404). */
  private final CountDownLatch heldRequestSent = new CountDownLatch(1);
  private final CountDownLatch heldRequestAnswered = new CountDownLatch(1);
  /** Requests for pod "unanswered": none gets an answer (a timeout). */
  private final AtomicInteger unansweredRequests = new AtomicInteger();
  /** Requests for pod "flaky": the first gets no answer (and was not carried out), every later one is carried out. */
  private final AtomicInteger flakyRequests = new AtomicInteger();

  private Sweeper sweeper(String policy) {
    return sweeper(policy, GuardWindowStore.NONE);
  }

  private void answerWhenTheTestSays() {
    heldRequestSent.countDown();
    try {
      heldRequestAnswered.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The request for pod {@code name} is on the wire while a full pass starts a new limits window. */
  private void requestAcrossANewWindow(Sweeper s, String name) throws InterruptedException {
    PodRecord pod = failed(name);
    source.put(pod);
    s.podChanged(pod);
    assertThat(heldRequestSent.await(3, TimeUnit.SECONDS)).isTrue();
    s.fullPass();
  }

  /** A failed pod {@code name} arrives: what became of its removal, the first time it was judged. */
  private String firstResultOf(Sweeper s, String name) {
    PodRecord pod = failed(name);
    source.put(pod);
    s.podChanged(pod);
    await().atMost(Duration.ofSeconds(3)).until(() -> recent.list().stream().anyMatch(e -> e.decision().name().equals(name)));
    List<RecentDecisions.Entry> newestFirst = recent.list(e -> e.decision().name().equals(name));
    return newestFirst.get(newestFirst.size() - 1).result();
  }

  private Sweeper sweeper(String policy, GuardWindowStore guardWindow) {
    Sweeper s = new Sweeper(PolicyLoader.parse(policy, "test"), source, (d, dryRun) -> {
      if (d.name().equals("held")) {
        answerWhenTheTestSays();
        source.pods.remove(d.podKey());
        return new RequestResult(RequestResult.Outcome.GONE, 404, "pods \"held\" not found");
      }
      if (d.name().equals("background")) {
        answerWhenTheTestSays();
        return new RequestResult(RequestResult.Outcome.STARTED, 201, "a migration job carries it out");
      }
      if (d.name().equals("flaky") && flakyRequests.incrementAndGet() == 1) {
        return new RequestResult(RequestResult.Outcome.ERROR, RequestResult.NO_ANSWER, "no answer from the API server: timed out");
      }
      if (d.name().equals("unanswered")) {
        unansweredRequests.incrementAndGet();
        return new RequestResult(RequestResult.Outcome.ERROR, RequestResult.NO_ANSWER, "no answer from the API server: timed out");
      }
      if (dryRun) {
        return new RequestResult(RequestResult.Outcome.REMOVED, 200, "");
      }
      sentAt.add(System.nanoTime());
      sent.add(d);
      source.pods.remove(d.podKey());
      return new RequestResult(RequestResult.Outcome.REMOVED, 200, "");
    }, metrics, Clock.systemUTC(), recent, killSwitch, why -> {}, guardWindow);
    s.start();
    return s;
  }

  private static PodRecord failed(String name) {
    return pod(name).ns("a").on("n1").created(OLD).phase("Failed").container(PodFixtures.terminatedAt("c", "Error", 1, OLD.plusSeconds(1))).build();
  }

  /** Two due pods: the first is sent at once, the second waits for the rate; returns once the first is sent. */
  private void secondWaiting(Sweeper s) {
    for (PodRecord p : List.of(failed("first"), failed("second"))) {
      source.put(p);
      s.podChanged(p);
    }
    await().atMost(Duration.ofSeconds(3)).until(() -> sent.size() == 1);
  }

  private void nothingMoreIsSent() {
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(6)).until(() -> sent.size() == 1);
    assertThat(sent.get(0).name()).isEqualTo("first");
  }

  @Test
  void aPauseWhileARemovalWaitsForItsTurnStopsIt() {
    try (Sweeper s = sweeper(SLOW)) {
      secondWaiting(s);
      killSwitch.pause("test");
      nothingMoreIsSent();
      assertThat(recent.list()).anySatisfy(e -> {
        assertThat(e.decision().name()).isEqualTo("second");
        assertThat(e.result()).isEqualTo("paused");
      });
    }
  }

  @Test
  void aNamespaceProtectedWhileARemovalWaitsKeepsItsPod() {
    try (Sweeper s = sweeper(SLOW)) {
      secondWaiting(s);
      // No pod event: a namespace annotation changes no pod's resourceVersion.
      source.namespaces.put("a", new NamespaceRecord("a", Map.of(), true));
      nothingMoreIsSent();
    }
  }

  /**
   * While the kill switch's ConfigMap is not watched (its watch ended; fabric8 waits up to 32 s to watch again), a
   * pause written meanwhile would go unseen: nothing is sent until it is watched again.
   */
  @Test
  void noRequestWhileAPauseCouldGoUnseen() {
    AtomicBoolean watched = new AtomicBoolean(false);
    killSwitch.watchedWhile(watched::get);
    try (Sweeper s = sweeper(HEAD + "rules: [{name: r, states: [Failed]}]\n")) {
      PodRecord due = failed("due");
      source.put(due);
      s.podChanged(due);
      await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(sent::isEmpty);
      watched.set(true);
      await().atMost(Duration.ofSeconds(3)).until(() -> sent.size() == 1);
    }
  }

  @Test
  void noRequestOnceTheLeaseHasRunOut() {
    AtomicBoolean leaseValid = new AtomicBoolean(true);
    try (Sweeper s = sweeper(SLOW)) {
      s.fenceWith(leaseValid::get);
      secondWaiting(s);
      leaseValid.set(false);
      nothingMoreIsSent();
      // Leadership won again: a new term starts with a full pass.
      s.setLeading(false);
      leaseValid.set(true);
      s.setLeading(true);
      await().atMost(Duration.ofSeconds(5)).until(() -> sent.size() == 2);
    }
  }

  @Test
  void aReloadThatRaisesTheRateFreesAWaitingRemovalAtOnce() {
    try (Sweeper s = sweeper(HEAD + "limits: {perSecond: 0.01}\nrules: [{name: r, states: [Failed]}]\n")) {
      secondWaiting(s);
      s.reload(PolicyLoader.parse(HEAD + "limits: {perSecond: 100}\nrules: [{name: r, states: [Failed]}]\n", "test"));
      await().atMost(Duration.ofSeconds(2)).until(() -> sent.size() == 2);
    }
  }

  /**
   * A reload that changes other limits hands out no fresh burst: the rate's one token is spent on the first removal,
   * and the second, due just after the reload, waits its turn (2 s) instead of going at once.
   */
  @Test
  void aReloadGivesNoFreshBurstOfTheRate() {
    try (Sweeper s = sweeper(SLOW)) {
      PodRecord first = failed("first");
      source.put(first);
      s.podChanged(first);
      await().atMost(Duration.ofSeconds(3)).until(() -> sent.size() == 1);
      s.reload(PolicyLoader.parse(HEAD + "limits: {perSecond: 0.5, maxPerNode: 5}\nrules: [{name: r, states: [Failed]}]\n", "test"));
      PodRecord second = failed("second");
      source.put(second);
      s.podChanged(second);
      // The rate's spacing, whatever the machine's load: 2 s between the two sends, not a fresh token at the reload.
      await().atMost(Duration.ofSeconds(6)).until(() -> sent.size() == 2);
      assertThat(Duration.ofNanos(sentAt.get(1) - sentAt.get(0))).isGreaterThanOrEqualTo(Duration.ofMillis(1900));
    }
  }

  @Test
  void aReloadThatDropsTheRuleDropsTheWaitingRemoval() {
    try (Sweeper s = sweeper(SLOW)) {
      secondWaiting(s);
      s.reload(PolicyLoader.parse(HEAD + "limits: {perSecond: 0.5}\nrules: [{name: r, states: [Succeeded]}]\n", "test"));
      nothingMoreIsSent();
    }
  }

  /**
   * A reload changes the guard while a request is on the wire; the pod turns out gone. The guard in force must forget
   * that removal: one that never happened must not count towards maxRemovals 2 and stop the next two.
   */
  @Test
  void aRequestThatFailsAfterAGuardChangingReloadIsForgottenByTheGuardInForce() throws InterruptedException {
    aRequestThatFailsAfterAReloadGivesItsPlaceBack("guard: {maxRemovals: 2}\n", "guard: {maxRemovals: 2, window: 2h}\n");
    assertThat(killSwitch.paused()).as("the guard counted a removal that never happened").isFalse();
  }

  /** The same for the limits: the window in force gives the failed removal's place back, so maxTotal 2 admits two. */
  @Test
  void aRequestThatFailsAfterALimitsChangingReloadGivesItsPlaceBackToTheLimitsInForce() throws InterruptedException {
    aRequestThatFailsAfterAReloadGivesItsPlaceBack("limits: {maxTotal: 2}\n", "limits: {maxTotal: 2, maxPerNode: 5}\n");
    assertThat(recent.list()).noneSatisfy(e -> assertThat(e.result()).isEqualTo("limited"));
  }

  private void aRequestThatFailsAfterAReloadGivesItsPlaceBack(String before, String after) throws InterruptedException {
    try (Sweeper s = sweeper(HEAD + before + "rules: [{name: r, states: [Failed]}]\n")) {
      PodRecord held = failed("held");
      source.put(held);
      s.podChanged(held);
      assertThat(heldRequestSent.await(3, TimeUnit.SECONDS)).isTrue();
      s.reload(PolicyLoader.parse(HEAD + after + "rules: [{name: r, states: [Failed]}]\n", "test"));
      heldRequestAnswered.countDown();
      await().atMost(Duration.ofSeconds(3)).until(() -> recent.list().stream().anyMatch(e -> e.result().equals("gone")));
      for (PodRecord p : List.of(failed("p1"), failed("p2"))) {
        source.put(p);
        s.podChanged(p);
      }
      await().atMost(Duration.ofSeconds(3)).until(() -> sent.size() == 2);
    }
  }

  /**
   * A request reserved in one limits window fails after a full pass started the next: its place goes back to the
   * window that counted it, not to the new one, which would then admit one removal more than maxTotal.
   */
  @Test
  void aRequestThatFailsAfterANewWindowGivesNoPlaceToIt() throws InterruptedException {
    try (Sweeper s = sweeper(HEAD + "fullPassInterval: 1h\nlimits: {maxTotal: 1}\nrules: [{name: r, states: [Failed]}]\n")) {
      requestAcrossANewWindow(s, "held");
      PodRecord first = failed("first");
      source.put(first);
      s.podChanged(first);
      await().atMost(Duration.ofSeconds(3)).until(() -> sent.size() == 1);
      heldRequestAnswered.countDown();
      await().atMost(Duration.ofSeconds(3)).until(() -> recent.list().stream().anyMatch(e -> e.result().equals("gone")));
      assertThat(firstResultOf(s, "second")).isEqualTo("limited");
      assertThat(sent).hasSize(1);
    }
  }

  /**
   * The other way round: a request reserved in one window is accepted in background after a full pass started the
   * next. It is in progress in the new window, so it holds a place there; not carried, it would leave room for one
   * removal more than maxTotal while it goes on.
   */
  @Test
  void anEvictionAcceptedInBackgroundAfterANewWindowHoldsAPlaceInIt() throws InterruptedException {
    try (Sweeper s = sweeper(HEAD + "fullPassInterval: 1h\nlimits: {maxTotal: 1}\nrules: [{name: r, states: [Failed]}]\n")) {
      requestAcrossANewWindow(s, "background");
      heldRequestAnswered.countDown();
      await().atMost(Duration.ofSeconds(3)).until(() -> recent.list().stream().anyMatch(e -> e.result().equals("background")));
      assertThat(firstResultOf(s, "next")).isEqualTo("limited");
      assertThat(sent).isEmpty();
    }
  }

  /**
   * A dry-run switch starts the limits afresh, but an eviction still in progress holds its place in the new window
   * too: back to live, one more removal would go past maxTotal.
   */
  @Test
  void anEvictionInBackgroundHoldsItsPlaceThroughADryRunSwitch() {
    String live = HEAD + "fullPassInterval: 1h\nlimits: {maxTotal: 1}\nrules: [{name: r, states: [Failed]}]\n";
    heldRequestAnswered.countDown();
    try (Sweeper s = sweeper(live)) {
      PodRecord background = failed("background");
      source.put(background);
      s.podChanged(background);
      await().atMost(Duration.ofSeconds(3)).until(() -> recent.list().stream().anyMatch(e -> e.result().equals("background")));
      s.reload(PolicyLoader.parse(live.replace("fullPassInterval", "dryRun: true\nfullPassInterval"), "test"));
      s.reload(PolicyLoader.parse(live, "test"));
      assertThat(firstResultOf(s, "next")).isEqualTo("limited");
      assertThat(sent).isEmpty();
    }
  }

  /**
   * A request that got no answer may have been carried out: the guard keeps counting it. Under maxRemovals 2, the
   * unanswered one and the next leave no room for a third.
   */
  @Test
  void aRequestWithoutAnAnswerStaysCountedByTheGuard() {
    assertThat(removalsUnderMaxTwoAfterNoAnswer(1, Optional.empty())).containsExactly("success", "paused");
    assertThat(killSwitch.reason()).contains("would make 3 removals");
  }

  /**
   * A retry of a request that got no answer takes its count over: at most one of the two can be carried out (same
   * pod version, preconditions). Counted per attempt, a network that keeps failing would trip the guard falsely.
   */
  @Test
  void aRequestRetriedAfterNoAnswerIsCountedOnceByTheGuard() {
    assertThat(removalsUnderMaxTwoAfterNoAnswer(2, Optional.empty())).containsExactly("success", "paused");
  }

  /**
   * A retry takes over only a count the guard still holds: after a resume (which starts the window over) or once the
   * count has left the window, the retry that is carried out must be counted anew, or it would go uncounted.
   */
  @Test
  void aRetryAfterAResumeIsCountedInTheNewWindow() {
    assertThat(removalsUnderMaxTwoAfterAFlakyRetry("guard: {maxRemovals: 2}", () -> {
      killSwitch.pause("by hand");
      assertThat(killSwitch.resume()).isEmpty();
    })).containsExactly("success", "paused");
  }

  @Test
  void aRetryAfterItsCountLeftTheWindowIsCountedAgain() {
    // The retry comes 5 s after the first request: its count has left a 3 s window.
    assertThat(removalsUnderMaxTwoAfterAFlakyRetry("guard: {maxRemovals: 2, window: 3s}", () -> {})).containsExactly("success", "paused");
  }

  /** A new term restores the window in 10 s buckets: the count is held still, and the retry takes it over. */
  @Test
  void aRetryInANewTermIsCountedOnce() {
    MemoryGuardWindowStore store = new MemoryGuardWindowStore();
    assertThat(removalsUnderMaxTwoAfterAFlakyRetry("guard: {maxRemovals: 2}", store, s -> {
      s.setLeading(false);
      s.setLeading(true);
    })).containsExactly("success", "paused");
  }

  /** Pod "flaky" gets no answer, then {@code meanwhile}, then its retry goes; what becomes of two more removals. */
  private List<String> removalsUnderMaxTwoAfterAFlakyRetry(String guard, Runnable meanwhile) {
    return removalsUnderMaxTwoAfterAFlakyRetry(guard, GuardWindowStore.NONE, s -> meanwhile.run());
  }

  private List<String> removalsUnderMaxTwoAfterAFlakyRetry(String guard, GuardWindowStore store, Consumer<Sweeper> meanwhile) {
    try (Sweeper s = sweeper(HEAD + guard + "\nrules: [{name: r, states: [Failed]}]\n", store)) {
      PodRecord flaky = failed("flaky");
      source.put(flaky);
      s.podChanged(flaky);
      await().atMost(Duration.ofSeconds(3)).until(() -> flakyRequests.get() == 1);
      meanwhile.accept(s);
      await().atMost(Duration.ofSeconds(15)).until(() -> sent.stream().anyMatch(d -> d.name().equals("flaky")));
      return List.of(firstResultOf(s, "first"), firstResultOf(s, "second"));
    }
  }

  /**
   * A later version of the pod, not terminating, shows that the request without an answer was not carried out (and,
   * by its preconditions, never will be): the guard stops counting it.
   */
  @Test
  void aRequestWithoutAnAnswerIsForgottenOnceThePodShowsItDidNotHappen() {
    assertThat(removalsUnderMaxTwoAfterNoAnswer(1, Optional.of(pod("unanswered").ns("a").on("n1").created(OLD).rv("2").phase("Succeeded"))))
        .containsExactly("success", "success");
  }

  /** A later version that is terminating may be the request's doing: it stays counted. */
  @Test
  void aRequestWithoutAnAnswerStaysCountedWhenThePodIsBeingDeleted() {
    assertThat(removalsUnderMaxTwoAfterNoAnswer(1, Optional.of(pod("unanswered").ns("a").on("n1").created(OLD).rv("2").phase("Failed").terminating())))
        .containsExactly("success", "paused");
  }

  /**
   * Under guard.maxRemovals 2: pod "unanswered" gets no answer {@code requests} times (the first retry is 5 s later),
   * then shows as {@code next}, if given; what becomes of two more removals, one after the other.
   */
  private List<String> removalsUnderMaxTwoAfterNoAnswer(int requests, Optional<PodFixtures.PodBuilder> next) {
    try (Sweeper s = sweeper(HEAD + "guard: {maxRemovals: 2}\nrules: [{name: r, states: [Failed]}]\n")) {
      PodRecord unanswered = failed("unanswered");
      source.put(unanswered);
      s.podChanged(unanswered);
      await().atMost(Duration.ofSeconds(15)).until(() -> unansweredRequests.get() >= requests);
      next.map(PodFixtures.PodBuilder::build).ifPresent(changed -> {
        source.put(changed);
        s.podChanged(changed);
      });
      return List.of(firstResultOf(s, "first"), firstResultOf(s, "second"));
    }
  }

  @Test
  void shuttingDownDoesNotWaitForTheRate() {
    Sweeper s = sweeper(HEAD + "limits: {perSecond: 0.01}\nrules: [{name: r, states: [Failed]}]\n");
    secondWaiting(s);
    long started = System.nanoTime();
    s.close();
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
    assertThat(sent).hasSize(1);
  }

  /**
   * A restart (or a new leader) continues the guard's window from what the cluster remembers: half of four pods
   * were evicted before it, so not one more may go after it.
   */
  @Test
  void theGuardsWindowOutlivesARestart() {
    MemoryGuardWindowStore store = new MemoryGuardWindowStore();
    String policy = HEAD + "guard: {maxNamespaceShare: 0.5, maxClusterShare: 1.0, minEvictions: 0}\n"
        + "rules: [{name: r, states: [Running], maxAge: 1h}]\n";
    try (Sweeper first = sweeper(policy, store)) {
      List<PodRecord> pods = List.of("old-0", "old-1", "young-0", "young-1").stream()
          .map(name -> pod(name).ns("a").created(name.startsWith("old") ? OLD : Instant.now()).build()).toList();
      pods.forEach(source::put);
      pods.forEach(first::podChanged);
      await().atMost(Duration.ofSeconds(3)).until(() -> sent.size() == 2);
    }
    assertThat(store.remembered()).startsWith("evict a ");
    try (Sweeper second = sweeper(policy, store)) {
      // The young pods have aged meanwhile.
      for (String name : List.of("young-0", "young-1")) {
        PodRecord p = pod(name).ns("a").created(OLD).build();
        source.put(p);
        second.podChanged(p);
      }
      await().atMost(Duration.ofSeconds(3)).until(killSwitch::paused);
      assertThat(killSwitch.reason()).contains("would evict 3 of 4 running pods in namespace a");
      assertThat(sent).hasSize(2);
    }
  }

  /**
   * A resume starts the guard's window over, in the cluster too, but only the leader writes that: a follower that
   * sees the resume late would clear what the leader has counted since.
   */
  @Test
  void onlyTheLeaderWritesTheResumedWindow() {
    long bucket = (Instant.now().getEpochSecond() / 10 + 1) * 10;
    String leadersWindow = "evict a " + bucket + ":2\n";
    MemoryGuardWindowStore store = new MemoryGuardWindowStore(leadersWindow);
    try (Sweeper follower = sweeper(SLOW, store)) {
      follower.setLeading(false);
      killSwitch.pause("by hand");
      assertThat(killSwitch.resume()).isEmpty();
      assertThat(store.remembered()).isEqualTo(leadersWindow);

      follower.setLeading(true);
      killSwitch.pause("by hand");
      assertThat(killSwitch.resume()).isEmpty();
      assertThat(store.remembered()).as("the leader's resume, over the window it read").isEmpty();
    }
  }

  /**
   * The pod evicted first leaves the cache just after the guard looked it up among the pods being removed, before it
   * read the count: taken off twice, it would make half of four look like two of three and trip the guard falsely.
   */
  @Test
  void aPodDeletedWhileTheGuardCountsIsTakenOffOnce() {
    String policy = HEAD + "guard: {maxNamespaceShare: 0.5, maxClusterShare: 1.0, minEvictions: 0}\n"
        + "rules: [{name: r, states: [Running], maxAge: 1h}]\n";
    PodRecord first = pod("old-0").ns("a").created(OLD).build();
    PodRecord second = pod("old-1").ns("a").created(OLD).build();
    List.of(first, second, pod("young-0").ns("a").build(), pod("young-1").ns("a").build()).forEach(source::put);
    try (Sweeper s = sweeper(policy)) {
      s.podChanged(first);
      await().atMost(Duration.ofSeconds(3)).until(() -> sent.size() == 1);
      source.put(first); // evicted, and still in the cache until its deletion is heard
      AtomicBoolean deleteOnLookup = new AtomicBoolean(true);
      source.afterLookup = key -> {
        if (key.equals(first.key()) && deleteOnLookup.getAndSet(false)) {
          source.pods.remove(key);
        }
      };
      s.podChanged(second);
      await().atMost(Duration.ofSeconds(3)).until(() -> sent.size() == 2 || killSwitch.paused());
      assertThat(killSwitch.paused()).as("paused: %s", killSwitch.reason()).isFalse();
      assertThat(deleteOnLookup).as("the guard looked the first pod up").isFalse();
    }
  }

  /** The guard's share is of the pods that run on a node: never-scheduled Pending pods are nothing to evict. */
  @Test
  void theGuardCountsOnlyPodsThatRunOnANode() {
    String policy = HEAD + "guard: {maxNamespaceShare: 0.5, maxClusterShare: 1.0, minEvictions: 0}\n"
        + "rules: [{name: r, states: [Running], maxAge: 1h}]\n";
    List<PodRecord> pods = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      pods.add(pod("running-" + i).ns("a").created(OLD).build());
      pods.add(pod("pending-" + i).ns("a").created(OLD).unscheduled().build());
    }
    pods.forEach(source::put);
    try (Sweeper s = sweeper(policy)) {
      pods.forEach(s::podChanged);
      await().atMost(Duration.ofSeconds(3)).until(killSwitch::paused);
      assertThat(killSwitch.reason()).contains("would evict 3 of 5 running pods in namespace a");
      // Two were admitted before the third tripped the guard; the final check may still stop the second.
      assertThat(sent).hasSizeLessThanOrEqualTo(2);
    }
  }

  /** A held removal counts once per pod state: not again at every full pass, reload or event. */
  @Test
  void aDryRunBacklogIsCountedOncePerPodThroughPassesAndReloads() {
    String policy = HEAD + "dryRun: true\nrules: [{name: r, states: [Failed]}]\n";
    try (Sweeper s = sweeper(policy)) {
      List<PodRecord> pods = List.of(failed("p0"), failed("p1"), failed("p2"));
      pods.forEach(source::put);
      pods.forEach(s::podChanged);
      await().atMost(Duration.ofSeconds(3)).until(() -> recent.list().size() == 3);
      s.fullPass();
      s.reload(PolicyLoader.parse(policy, "test"));
      s.fullPass();
      pods.forEach(s::podChanged);
      await().during(Duration.ofSeconds(1)).until(() -> recent.list().size() == 3);
      assertThat(metrics.removals.labels("dry-run", "PodLifeTime", "a", "delete", "r").get()).isEqualTo(3.0);
      // The pod changes: that is a new state, reported again.
      PodRecord changed = pod("p0").ns("a").on("n1").created(OLD).rv("2").phase("Failed")
          .container(PodFixtures.terminatedAt("c", "Error", 1, OLD.plusSeconds(1))).build();
      source.put(changed);
      s.podChanged(changed);
      await().atMost(Duration.ofSeconds(3)).until(() -> recent.list().size() == 4);
      assertThat(sent).isEmpty();
    }
  }

  /** A tripped share stops evictions only: finished pods are still cleaned up (that is the job, not the risk). */
  @Test
  void aTrippedShareStillLetsFinishedPodsBeDeleted() throws InterruptedException {
    String policy = HEAD + "guard: {maxNamespaceShare: 0.5, maxClusterShare: 1.0, minEvictions: 0}\n"
        + "rules: [{name: r, states: [Running], maxAge: 1h}, {name: f, states: [Failed]}]\n";
    List<PodRecord> running = List.of(pod("r0").ns("a").created(OLD).build(), pod("r1").ns("a").created(OLD).build(),
        pod("r2").ns("a").created(OLD).build());
    running.forEach(source::put);
    try (Sweeper s = sweeper(policy)) {
      running.forEach(s::podChanged);
      await().atMost(Duration.ofSeconds(3)).until(killSwitch::paused);
      assertThat(killSwitch.reason()).contains("evictions are paused", "finished pods are still deleted");
      // The one admitted before the trip may or may not have passed its final check; nothing else is evicted.
      Thread.sleep(500);
      int evicted = sent.size();
      assertThat(evicted).isLessThanOrEqualTo(1);
      PodRecord finished = failed("done");
      source.put(finished);
      s.podChanged(finished);
      await().atMost(Duration.ofSeconds(3)).until(() -> sent.size() == evicted + 1);
      assertThat(sent.get(evicted).name()).isEqualTo("done");
      assertThat(killSwitch.holds(io.podsweeper.strategy.Action.EVICT)).isTrue();
    }
  }

  /**
   * An operator who resumes by hand and pauses again later does not see the guard's old reason. The reason is cleared
   * only over the version that showed the resume: a replayed old state must not undo what came after it.
   */
  @Test
  void aResumeByHandClearsTheOldReason() {
    List<String> written = new CopyOnWriteArrayList<>();
    KillSwitch ks = new KillSwitch(metrics, (paused, reason, over) -> written.add(paused + "|" + reason + "|" + over.map(v -> "over " + v).orElse("command")));
    ks.observed(Optional.of("evictions"), "blast-radius guard: ...", "1");
    assertThat(ks.holds(io.podsweeper.strategy.Action.DELETE)).isFalse();
    ks.observed(Optional.of("false"), "blast-radius guard: ...", "2");
    assertThat(ks.paused()).isFalse();
    assertThat(written).containsExactly("false||over 2");
    ks.observed(Optional.of("TRUE"), "", "3");
    assertThat(ks.holds(io.podsweeper.strategy.Action.DELETE)).isTrue();
    ks.observed(Optional.of("yes please"), "", "4");
    assertThat(ks.paused()).as("a value nobody expected stops everything").isTrue();
    ks.observed(Optional.empty(), "", "5");
    ks.storeDeleted();
    assertThat(written).as("a paused replica writes its pause back over what it saw, or where nothing is")
        .containsExactly("false||over 2", "true||over 5", "true||over ");
  }

  /** A dry-run runs the whole admission path: what the limits and the guard would hold back is reported as such. */
  @Test
  void aDryRunReportsWhatTheLimitsAndTheGuardWouldHoldBack() {
    String policy = HEAD + "dryRun: true\nlimits: {maxPerNamespace: 2}\n"
        + "guard: {maxNamespaceShare: 0.5, maxClusterShare: 1.0, minEvictions: 0}\n"
        + "rules: [{name: f, states: [Failed]}, {name: r, states: [Running], maxAge: 1h}]\n";
    List<PodRecord> pods = List.of(failed("f0"), failed("f1"), failed("f2"), pod("r0").ns("b").created(OLD).build(),
        pod("r1").ns("b").created(OLD).build(), pod("r2").ns("b").created(OLD).build());
    pods.forEach(source::put);
    try (Sweeper s = sweeper(policy)) {
      pods.forEach(s::podChanged);
      await().atMost(Duration.ofSeconds(3)).until(() -> recent.list().size() == 6);
      // Namespace a: two within maxPerNamespace, the third over it. Namespace b: one of three, then half is reached.
      assertThat(recent.list().stream().map(RecentDecisions.Entry::result).sorted().toList())
          .containsExactly("dry-run", "dry-run", "dry-run", "would-be-limited", "would-trip-guard", "would-trip-guard");
      assertThat(killSwitch.paused()).as("a dry-run never pauses").isFalse();
      assertThat(sent).isEmpty();
    }
  }
}
