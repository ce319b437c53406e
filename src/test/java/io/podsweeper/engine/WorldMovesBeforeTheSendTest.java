package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.safety.GuardWindowStore;
import io.podsweeper.testing.FakePodSource;
import io.podsweeper.testing.MemoryGuardWindowStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The gate when the world moves between a decision and its request: a slow write-ahead of the guard's window, a
 * switch from dry-run to live. Each test failed on the code before its fix (found by an audit of the send path).
 */
class WorldMovesBeforeTheSendTest {
  private static final String HEAD = "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n";
  private final FakePodSource source = new FakePodSource();
  private final Metrics metrics = new Metrics();
  private final KillSwitch killSwitch = new KillSwitch(metrics, (paused, reason, over) -> true);

  /**
   * The sender writes the guard's window ahead (a ConfigMap write that may take up to the request timeout) and sends.
   * When the worker took each token before the write, requests whose tokens were taken a rate-interval apart while a
   * write was slow queued on the journal's lock and then went out back to back: at perSecond 1 (burst 1) two requests
   * within milliseconds. The sender now takes the request's turn, from a second bucket at the rate, after the write
   * and right before the request. Whichever request gets the journal first, the two go out an interval apart.
   */
  @Test
  void aSlowGuardWriteDoesNotLetTwoRequestsOutFasterThanTheRate() throws Exception {
    Instant old = Instant.now().minus(Duration.ofHours(5));
    String policy = HEAD + "limits: {perSecond: 1}\nguard: {maxRemovals: 100}\nrules: [{name: r, states: [Failed]}]\n";
    MemoryGuardWindowStore store = new MemoryGuardWindowStore();
    CountDownLatch firstWriteOnTheWire = new CountDownLatch(1);
    CountDownLatch answerFirstWrite = new CountDownLatch(1);
    AtomicInteger writes = new AtomicInteger();
    // The API server answers the first write of the guard's window after 1.2 s (a slow server; the fake models the
    // latency, it does not order threads): the first request's token was taken just before it.
    store.beforeEachWrite(() -> {
      if (writes.incrementAndGet() == 1) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1200);
        firstWriteOnTheWire.countDown();
        try {
          answerFirstWrite.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        while (System.nanoTime() < until) {
          java.util.concurrent.locks.LockSupport.parkNanos(until - System.nanoTime());
        }
      }
    });
    List<Long> sentAt = new CopyOnWriteArrayList<>();
    Sweeper s = new Sweeper(PolicyLoader.parse(policy, "test"), source, (d, dryRun) -> {
      sentAt.add(System.nanoTime());
      source.pods.remove(d.podKey());
      return new RequestResult(RequestResult.Outcome.REMOVED, 200, "");
    }, metrics, Clock.systemUTC(), new RecentDecisions(100), killSwitch, why -> {}, store);
    s.start();
    try (s) {
      for (String name : List.of("first", "second")) {
        PodRecord p = pod(name).ns("a").on("n1").created(old).phase("Failed")
            .container(PodFixtures.terminatedAt("c", "Error", 1, old.plusSeconds(1))).build();
        source.put(p);
        s.podChanged(p);
      }
      assertThat(firstWriteOnTheWire.await(5, TimeUnit.SECONDS)).isTrue();
      // The second request waits for the journal, held by the first request's write: on the worker (taking over the
      // window) if it got there first, else on its sender (writing ahead) once the worker has its token.
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> Thread.getAllStackTraces().keySet().stream()
          .anyMatch(t -> (t.getName().startsWith("sweeper-removals") || t.getName().startsWith("removal-requests"))
              && t.getState() == Thread.State.BLOCKED));
      answerFirstWrite.countDown();
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> sentAt.size() == 2);

      long gapMillis = TimeUnit.NANOSECONDS.toMillis(sentAt.get(1) - sentAt.get(0));
      assertThat(gapMillis).as("two requests %d ms apart at perSecond: 1", gapMillis).isGreaterThanOrEqualTo(700);
    }
  }

  /**
   * A switch from dry-run to live puts in a fresh limits window (and guard). A live candidate must reserve its place in
   * the live window, never in the dry-run's that is being thrown away: the removal path swaps the window under the
   * ledger's lock and only then publishes the live rules, so no live candidate exists before the live window does.
   * (Before, the rules were published first, and under maxTotal 1 two real removals went out in one window.)
   */
  @Test
  void aLiveRemovalAdmittedRightAfterADryRunSwitchIsCountedInTheLiveWindow() {
    Instant old = Instant.now().minus(Duration.ofHours(5));
    Policy live = PolicyLoader.parse(HEAD + "limits: {maxTotal: 1}\nrules: [{name: r, states: [Failed]}]\n", "test");
    List<String> removed = new CopyOnWriteArrayList<>();
    RecentDecisions recent = new RecentDecisions(100);
    Sweeper s = new Sweeper(live.withDryRun(true), source, (d, dryRun) -> {
      if (!dryRun) {
        removed.add(d.name());
        source.pods.remove(d.podKey());
      }
      return new RequestResult(RequestResult.Outcome.REMOVED, 200, "");
    }, metrics, Clock.systemUTC(), recent, killSwitch, why -> {}, GuardWindowStore.NONE);
    s.start();
    try (s) {
      PodRecord dryRunOnly = failedPod("dry", old);
      s.podChanged(dryRunOnly);
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> recent.list().stream().anyMatch(e -> e.result().equals("dry-run")));
      source.pods.remove(dryRunOnly.key());
      s.podDeleted(dryRunOnly);

      s.reload(live);
      s.podChanged(failedPod("first", old));
      s.podChanged(failedPod("second", old));
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> recent.list().stream()
          .filter(e -> !e.dryRun()).map(e -> e.decision().name()).toList().containsAll(List.of("first", "second")));

      assertThat(removed).as("real removals in one window under limits.maxTotal 1").hasSize(1);
      assertThat(recent.list()).anySatisfy(e -> assertThat(e.result()).isEqualTo("limited"));
    }
  }

  /**
   * A pause thrown while the final check judges the pod (the pod looked up, the owner's siblings counted, the rules
   * evaluated: tens of milliseconds on a large cluster) holds the removal, since the lease, the kill switch and the
   * currencies are read again after that work. (Before, they were read only first, and such a pause was passed.)
   */
  @Test
  void aPauseThrownWhileTheFinalCheckJudgesThePodHoldsTheRemoval() throws Exception {
    Instant old = Instant.now().minus(Duration.ofHours(5));
    List<String> sent = new CopyOnWriteArrayList<>();
    Sweeper s = new Sweeper(PolicyLoader.parse(HEAD + "rules: [{name: r, states: [Failed]}]\n", "test"), source, (d, dryRun) -> {
      sent.add(d.name());
      return new RequestResult(RequestResult.Outcome.REMOVED, 200, "");
    }, metrics, Clock.systemUTC(), new RecentDecisions(100), killSwitch, why -> {}, GuardWindowStore.NONE);
    // The final check runs on a sender thread; its look-up of the pod is the first part of its judging.
    source.afterLookup = key -> {
      if (Thread.currentThread().getName().startsWith("removal-requests")) {
        killSwitch.pause("thrown while the final check judged the pod");
      }
    };
    s.start();
    try (s) {
      s.podChanged(failedPod("judged", old));
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(killSwitch::paused);
      Thread.sleep(500);
      assertThat(sent).isEmpty();
    }
  }

  private PodRecord failedPod(String name, Instant old) {
    PodRecord p = pod(name).ns("a").on("n1").created(old).phase("Failed")
        .container(PodFixtures.terminatedAt("c", "Error", 1, old.plusSeconds(1))).build();
    source.put(p);
    return p;
  }
}
