package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.CleanupPolicies;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.policy.YamlDocuments;
import io.podsweeper.removal.Backoff;
import io.podsweeper.removal.Rules;
import io.podsweeper.strategy.PolicyEvaluator;
import io.podsweeper.testing.FakePodSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A team whose PodCleanupPolicies cost much (here each judging is charged 100 ms of CPU) is held to its share of the
 * evaluation thread: its team rules wait for the next interval, said in figures for its status, while another
 * namespace's pods, and the cluster's own rules in the costly namespace, are judged at once.
 */
class TeamRulesShareTest {
  private static final Instant OLD = Instant.now().minus(Duration.ofHours(5));

  private final FakePodSource source = new FakePodSource();
  private final List<String> due = new CopyOnWriteArrayList<>();
  private final Map<String, String> throttled = new ConcurrentHashMap<>();
  private final Metrics metrics = new Metrics();
  /** The evaluation thread's CPU time: every reading costs 50 ms, so each judging by team rules is charged 100 ms. */
  private final AtomicLong cpu = new AtomicLong();

  private PodRecord failed(String ns, String name) {
    PodRecord p = pod(name).ns(ns).on("n1").created(OLD).phase("Failed")
        .container(PodFixtures.terminatedAt("c", "Error", 1, OLD.plusSeconds(1))).build();
    source.put(p);
    return p;
  }

  private static Policy clusterRuleForOrdinaryAndTeamRuleForHostile() {
    var rails = CleanupPolicies.clusterRails(Optional.of(YamlDocuments.read("{allowTerminated: true}", "test", 1 << 16).get(0)));
    var team = CleanupPolicies.judge(new CleanupPolicies.Source("hostile", "costly",
        YamlDocuments.read("rules: [{name: failed, states: [Failed], maxAgeAfterFinish: 1h}]", "test", 1 << 16).get(0)), rails);
    return CleanupPolicies.compose(PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: cluster, namespaces: {include: [ordinary]}, states: [Failed]}]
        """, "test"), List.of(team));
  }

  @Test
  void aCostlyTeamWaitsForItsShareAndNobodyElseDoes() throws InterruptedException {
    Policy policy = clusterRuleForOrdinaryAndTeamRuleForHostile();
    Rules rules = new Rules(policy, new PolicyEvaluator(policy), 1);
    Evaluations evaluations = new Evaluations(source, () -> rules, Clock.systemUTC(), metrics,
        new WorkQueue(System::nanoTime, new Backoff(Clock.systemUTC(), System::nanoTime)), due::add, System::nanoTime,
        () -> cpu.addAndGet(50_000_000), () -> true);
    evaluations.reportThrottledTeams(throttled::put);
    evaluations.start();
    try {
      for (int i = 0; i < 10; i++) {
        evaluations.add(failed("hostile", "h" + i).key());
      }
      for (int i = 0; i < 3; i++) {
        evaluations.add(failed("ordinary", "o" + i).key());
      }

      await().atMost(Duration.ofSeconds(2)).until(() -> due.stream().filter(k -> k.startsWith("ordinary/")).count() == 3);
      assertThat(due.stream().filter(k -> k.startsWith("hostile/")).count()).as("within its share of the first second")
          .isLessThan(10);
      assertThat(throttled.get("hostile")).contains("share is 250ms").contains("once it is paid back");
      assertThat(throttled).doesNotContainKey("ordinary");
      // Its pods are judged by its rules all the same, a share a second.
      await().atMost(Duration.ofSeconds(8)).until(() -> due.stream().filter(k -> k.startsWith("hostile/")).count() == 10);
      assertThat(metrics.teamRulesThrottled.labels("hostile").get()).isPositive();
    } finally {
      evaluations.close();
    }
  }
}
