package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.safety.GuardWindowStore;
import io.podsweeper.testing.FakePodSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A pod this service is removing counts as unavailable for its owner's maxUnavailablePerOwner before the cache shows
 * it go, and the limit is judged again after the wait for the rate. (As gone from the guard's share, also when its
 * eviction was taken over from an earlier leader: EvictionRequestTest.)
 */
class BeingRemovedTest {
  private static final Instant OLD = Instant.now().minus(Duration.ofHours(5));
  private static final String HEAD = "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n";

  private final FakePodSource source = new FakePodSource();
  private final RecentDecisions recent = new RecentDecisions(100);
  private final Metrics metrics = new Metrics();
  private final KillSwitch killSwitch = new KillSwitch(metrics, (paused, reason, over) -> true);
  private final List<String> sent = new CopyOnWriteArrayList<>();

  /** Sends after {@code delay}; the cache then shows the pod terminating, as the informer would a moment later. */
  private Sweeper sweeper(String policy, Duration delay, GuardWindowStore store) {
    return new Sweeper(PolicyLoader.parse(HEAD + policy, "test"), source, (d, dryRun) -> {
      try {
        Thread.sleep(delay.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      sent.add(d.name());
      String owner = source.pod(d.podKey()).flatMap(PodRecord::controller).orElseThrow().name();
      source.put(pod(d.name()).ns(d.namespace()).uid(d.uid()).rv("2").created(OLD).ownedBy("ReplicaSet", owner).terminating().build());
      return new RequestResult(RequestResult.Outcome.REMOVED, 201, "");
    }, metrics, Clock.systemUTC(), recent, killSwitch, why -> {}, store);
  }

  /** The guard lifted: a share of two pods would stop the second on its own. */
  private static final String NO_GUARD = "guard: {maxNamespaceShare: 1.0, maxClusterShare: 1.0}\n";

  private void twoReadySiblingsDue(Sweeper s) {
    s.start();
    for (String name : List.of("a", "b")) {
      PodRecord p = pod(name).ns("x").uid("uid-" + name).created(OLD).ownedBy("ReplicaSet", "rs").condition("Ready", "True", "", OLD).build();
      source.put(p);
      s.podChanged(p);
    }
  }

  /** Two Ready siblings due together, the first's request in flight while the second is admitted: one goes. */
  @Test
  void aSiblingInFlightCountsAsUnavailable() {
    try (Sweeper s = sweeper(NO_GUARD + "limits: {maxUnavailablePerOwner: 1, perSecond: 100}\nrules: [{name: r, states: [Running]}]\n",
        Duration.ofMillis(50), GuardWindowStore.NONE)) {
      twoReadySiblingsDue(s);
      await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> sent.size() <= 1);
      assertThat(sent).hasSize(1);
      assertThat(killSwitch.paused()).isFalse();
    }
  }

  /**
   * An owner's limit is judged again at the final check: a sibling became unavailable (not by this service) while
   * the removal waited for the rate, whose one token another pod had just spent.
   */
  @Test
  void anOwnersLimitIsJudgedAgainAfterTheRateWait() {
    try (Sweeper s = sweeper(NO_GUARD + "limits: {maxUnavailablePerOwner: 1, perSecond: 0.5}\nrules: [{name: r, states: [Running]}]\n",
        Duration.ZERO, GuardWindowStore.NONE)) {
      s.start();
      PodRecord other = pod("other").ns("x").uid("uid-other").created(OLD).ownedBy("ReplicaSet", "rs-other").build();
      PodRecord due = pod("due").ns("x").uid("uid-due").created(OLD).ownedBy("ReplicaSet", "rs").condition("Ready", "True", "", OLD).build();
      source.put(pod("sibling").ns("x").uid("uid-sibling").created(Instant.now()).ownedBy("ReplicaSet", "rs")
          .condition("Ready", "True", "", OLD).build());
      for (PodRecord p : List.of(other, due)) {
        source.put(p);
        s.podChanged(p);
      }
      await().atMost(Duration.ofSeconds(2)).until(() -> sent.contains("other"));
      source.put(pod("sibling").ns("x").uid("uid-sibling").rv("2").created(Instant.now()).ownedBy("ReplicaSet", "rs")
          .condition("Ready", "False", "", Instant.now()).build());
      await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(6)).until(() -> !sent.contains("due"));
    }
  }
}
