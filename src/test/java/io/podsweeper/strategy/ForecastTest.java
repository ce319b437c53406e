package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.NOW;
import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.cluster.PodFixtures.terminatedAt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.CleanupPolicies;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.policy.YamlDocuments;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The forecast: each pod's deadline under the policy, as the live service times it, over a snapshot. */
class ForecastTest {
  private static final Policy POLICY = PolicyLoader.parse("""
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      rules:
        - name: failed
          states: [Failed]
          maxAgeAfterFinish: 1h
        - name: crashloop
          states: [CrashLoopBackOff]
          maxAge: 2h
      """, "test");

  /** A Failed pod whose container finished {@code ago} before NOW. */
  private static PodRecord failed(String name, Duration ago) {
    return pod(name).phase("Failed").age(ago.plusMinutes(1)).containers(terminatedAt("main", "Error", 1, NOW.minus(ago))).build();
  }

  private static PodRecord crashing(String name, Duration age) {
    return pod(name).age(age).containers(PodFixtures.waiting("main", "CrashLoopBackOff", 3)).build();
  }

  private static Forecast forecast(Policy policy, Duration within, PodRecord... pods) {
    return new PolicyEvaluator(policy).forecast(ClusterSnapshot.of(List.of(pods), List.of(), List.of()), NOW, within);
  }

  @Test
  void listsEveryPodDueWithinTheHorizonByWhenWithThoseAlreadyDueFirst() {
    Forecast f = forecast(POLICY, Duration.ofHours(6),
        crashing("crash-in-90m", Duration.ofMinutes(30)),
        failed("failed-in-10m", Duration.ofMinutes(50)),
        failed("failed-3h-ago", Duration.ofHours(4)),
        crashing("crash-in-7h", Duration.ofHours(-5)),
        pod("running").age(Duration.ofDays(3)).build(),
        pod("protected").phase("Failed").age(Duration.ofDays(1)).annotation("podsweeper.io/protect", "true")
            .containers(terminatedAt("main", "Error", 1, NOW.minus(Duration.ofHours(5)))).build());

    assertThat(f.removals()).extracting(d -> d.name() + " " + d.dueAt() + " " + d.rule() + " " + d.action().wireName())
        .containsExactly(
            "failed-3h-ago " + NOW.minus(Duration.ofHours(3)) + " failed delete",
            "failed-in-10m " + NOW.plus(Duration.ofMinutes(10)) + " failed delete",
            "crash-in-90m " + NOW.plus(Duration.ofMinutes(90)) + " crashloop evict");
    Decision due = f.removals().get(0);
    assertThat(due.dueAt()).isBefore(NOW);
    assertThat(due.uid()).isEqualTo("uid-default-failed-3h-ago");
    assertThat(due.strategy()).isEqualTo(PodLifeTime.NAME);
    assertThat(due.profile()).isEqualTo("rules");
    // A pod already due reads as it does now; one to come, as it will when it goes.
    assertThat(due.reason()).isEqualTo("Failed, finished 4h ago; rule failed allows 1h after finish");
    assertThat(f.removals().get(2).reason()).isEqualTo("CrashLoopBackOff (container main), age 2h; rule crashloop allows 2h");
    assertThat(f.until()).isEqualTo(NOW.plus(Duration.ofHours(6)));
  }

  @Test
  void aPodIsInItOnlyIfItIsDueBeforeTheHorizonEnds() {
    // "Strictly older than": due at the horizon itself means removed just after it.
    Forecast f = forecast(POLICY, Duration.ofMinutes(30),
        failed("at-the-horizon", Duration.ofMinutes(30)), failed("just-before", Duration.ofMinutes(30).plusMillis(1)));
    assertThat(f.removals()).extracting(Decision::name).containsExactly("just-before");
  }

  @Test
  void samePodsAndDeadlinesAsTheEvaluatorGivesPodByPod() {
    PodRecord[] pods = {failed("a", Duration.ofMinutes(20)), failed("b", Duration.ofHours(3)), crashing("c", Duration.ofHours(1))};
    PolicyEvaluator evaluator = new PolicyEvaluator(POLICY);
    ClusterSnapshot snapshot = ClusterSnapshot.of(List.of(pods), List.of(), List.of());
    assertThat(evaluator.forecast(snapshot, NOW, Forecast.MAX_WITHIN).removals())
        .extracting(d -> d.name() + " " + d.dueAt())
        .containsExactlyInAnyOrder(List.of(pods).stream()
            .map(p -> p.name() + " " + evaluator.evaluate(p, snapshot).orElseThrow().dueAt()).toArray(String[]::new));
  }

  @Test
  void aPodCleanupPolicysPodsAreForecastUnderItsProfileAndRule() {
    CleanupPolicies.Verdict accepted = CleanupPolicies.judge(
        new CleanupPolicies.Source("team-a", "cleanup", YamlDocuments.read(
            "rules: [{name: failed, states: [Failed], maxAgeAfterFinish: 2h}]", "spec", 1 << 16).get(0)),
        CleanupPolicies.clusterRails(Optional.of(YamlDocuments.read("{minMaxAge: 1h, allowTerminated: true}", "rails", 1 << 16).get(0))));
    Policy file = PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: ci, namespaces: {include: ["ci-*"]}, states: [Failed], maxAgeAfterFinish: 1h}]
        """, "test");
    Policy composed = CleanupPolicies.compose(file, List.of(accepted));
    PodRecord teamPod = pod("job").ns("team-a").phase("Failed").age(Duration.ofHours(3))
        .containers(terminatedAt("main", "Error", 1, NOW.minus(Duration.ofMinutes(90)))).build();

    Forecast f = forecast(composed, Duration.ofHours(1), teamPod);

    assertThat(f.removals()).singleElement().satisfies(d -> {
      assertThat(d.profile()).isEqualTo("PodCleanupPolicy team-a/cleanup");
      assertThat(d.rule()).isEqualTo("cleanup/failed");
      assertThat(d.dueAt()).isEqualTo(NOW.plus(Duration.ofMinutes(30)));
    });
    assertThat(forecast(file, Duration.ofHours(1), teamPod).removals()).isEmpty();
  }

  @Test
  void itsJsonHasTheHorizonTheNoteAndEachRemovalAsADecision() {
    ObjectNode json = forecast(POLICY, Duration.ofHours(6), failed("f", Duration.ofHours(2))).writeTo(new ObjectMapper().createObjectNode());
    assertThat(json.get("now").asText()).isEqualTo(NOW.toString());
    assertThat(json.get("within").asText()).isEqualTo("6h");
    assertThat(json.get("until").asText()).isEqualTo(NOW.plus(Duration.ofHours(6)).toString());
    assertThat(json.get("dryRun").asBoolean()).isFalse();
    assertThat(json.get("note").asText()).contains("node-aware strategies decide per pass").contains("limits, the blast-radius guard and the rate");
    assertThat(json.get("removals")).hasSize(1);
    for (String field : List.of("namespace", "name", "uid", "rule", "strategy", "profile", "action", "dueAt", "reason")) {
      assertThat(json.get("removals").get(0).hasNonNull(field)).as(field).isTrue();
    }
    assertThat(Instant.parse(json.get("removals").get(0).get("dueAt").asText())).isEqualTo(NOW.minus(Duration.ofHours(1)));
  }

  @Test
  void theHorizonIsAGoDurationOfAtMostThirtyDays() {
    assertThat(Forecast.within("within", "6h")).isEqualTo(Duration.ofHours(6));
    assertThat(Forecast.within("within", "1h30m")).isEqualTo(Duration.ofMinutes(90));
    assertThat(Forecast.within("within", "30d")).isEqualTo(Duration.ofDays(30));
    assertThatThrownBy(() -> Forecast.within("within", "31d")).isInstanceOf(PolicyException.class)
        .hasMessage("within: 31d is longer than 30d");
    assertThatThrownBy(() -> Forecast.within("--within", "6 hours")).isInstanceOf(PolicyException.class)
        .hasMessage("--within: not a duration such as 90m, 6h or 7d: \"6 hours\"");
    assertThatThrownBy(() -> Forecast.within("within", "0s")).isInstanceOf(PolicyException.class);
    assertThatThrownBy(() -> Forecast.within("within", "-1h")).isInstanceOf(PolicyException.class);
  }
}
