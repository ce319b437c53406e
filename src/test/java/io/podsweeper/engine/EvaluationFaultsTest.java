package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.strategy.Decision;
import io.podsweeper.testing.FakePodSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A pod whose judging throws fails alone on every path of the live loop (an event, a deadline, a full pass, a reload):
 * counted, and the pods after it are still removed. (Before, an exception on one pod ended the whole full pass or
 * reload there, every time.)
 */
class EvaluationFaultsTest {
  private static final String HEAD = "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n";
  private static final Instant OLD = Instant.now().minus(Duration.ofHours(5));

  private final FakePodSource source = new FakePodSource();
  private final List<Decision> sent = new CopyOnWriteArrayList<>();
  private final Metrics metrics = new Metrics();

  private Sweeper sweeper(String rules) {
    Sweeper s = new Sweeper(PolicyLoader.parse(HEAD + rules, "test"), source, (d, dryRun) -> {
      sent.add(d);
      source.pods.remove(d.podKey());
      return new RequestResult(RequestResult.Outcome.REMOVED, 200, "");
    }, metrics, Clock.systemUTC(), new RecentDecisions(100));
    s.start();
    return s;
  }

  private PodRecord failed(String ns, String name) {
    PodRecord p = pod(name).ns(ns).on("n1").created(OLD).phase("Failed")
        .container(PodFixtures.terminatedAt("c", "Error", 1, OLD.plusSeconds(1))).build();
    source.put(p);
    return p;
  }

  private void onlyTheGoodPodsGo(int good) {
    await().atMost(Duration.ofSeconds(5)).until(() -> sent.size() == good);
    assertThat(sent).extracting(Decision::namespace).containsOnly("a");
    assertThat(metrics.evaluationErrors.labels("poisoned", "evaluate").get()).isPositive();
  }

  @Test
  void eventsOfAPodWhoseJudgingThrowsStopNoOtherPod() {
    source.poisoned.add("poisoned");
    try (Sweeper s = sweeper("rules: [{name: r, states: [Failed]}]\n")) {
      s.podChanged(failed("poisoned", "bad"));
      s.podChanged(failed("a", "good"));
      onlyTheGoodPodsGo(1);
    }
  }

  @Test
  void aDeadlineOfAPodWhoseJudgingThrowsStopsNoOtherDeadline() {
    try (Sweeper s = sweeper("rules: [{name: r, states: [Running], maxAge: 2s}]\n")) {
      Instant created = Instant.now().minusMillis(500);
      PodRecord bad = pod("bad").ns("poisoned").created(created).build();
      PodRecord good = pod("good").ns("a").created(created).build();
      source.put(bad);
      source.put(good);
      s.podChanged(bad);
      s.podChanged(good);
      await().atMost(Duration.ofSeconds(1)).until(() -> s.pendingDeadlines() == 2);
      source.poisoned.add("poisoned"); // its value turns bad while it waits for its deadline
      onlyTheGoodPodsGo(1);
    }
  }

  @Test
  void aFullPassGoesOnPastAPodWhoseJudgingThrows() {
    try (Sweeper s = sweeper("rules: [{name: r, states: [Failed]}]\n")) {
      fivePoisonedAndFiveGoodPodsCachedWithoutAnEvent();
      s.fullPass();
      onlyTheGoodPodsGo(5);
    }
  }

  @Test
  void aReloadGoesOnPastAPodWhoseJudgingThrows() {
    try (Sweeper s = sweeper("rules: [{name: r, states: [Succeeded]}]\n")) {
      fivePoisonedAndFiveGoodPodsCachedWithoutAnEvent();
      s.reload(PolicyLoader.parse(HEAD + "rules: [{name: r, states: [Failed]}]\n", "test"));
      onlyTheGoodPodsGo(5);
    }
  }

  private void fivePoisonedAndFiveGoodPodsCachedWithoutAnEvent() {
    for (int i = 0; i < 5; i++) {
      failed("poisoned", "bad-" + i);
      failed("a", "good-" + i);
    }
    source.poisoned.add("poisoned");
  }

  @Test
  void aPodWhoseJudgingThrowsIsJudgedAgainWithBackoffAndGoesOnceItCanBeJudged() {
    source.poisoned.add("poisoned");
    try (Sweeper s = sweeper("rules: [{name: r, states: [Failed]}]\n")) {
      s.podChanged(failed("poisoned", "bad"));
      await().atMost(Duration.ofSeconds(2)).until(() -> metrics.evaluationErrors.labels("poisoned", "evaluate").get() == 1.0);
      source.poisoned.clear();
      // Judged again 5 s after it failed, without any event.
      await().atMost(Duration.ofSeconds(8)).until(() -> sent.size() == 1);
      assertThat(metrics.evaluationErrors.labels("poisoned", "evaluate").get()).as("counted once, not in a loop").isEqualTo(1.0);
    }
  }
}
