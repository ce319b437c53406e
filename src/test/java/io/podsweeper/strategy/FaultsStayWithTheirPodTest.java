package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.strategy.Passes.NOW;
import static io.podsweeper.strategy.Passes.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Taint;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.safety.RemovalBudget;
import io.podsweeper.testing.FakePodSource;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A pod whose judging throws (here: its namespace's look-up, standing for any value nobody foresaw) fails alone, as a
 * fault named in the answer: the pass, the forecast and explain go on for every other pod.
 */
class FaultsStayWithTheirPodTest {
  private final FakePodSource view = new FakePodSource();

  private PodRecord failed(String ns, String name) {
    PodRecord p = pod(name).ns(ns).on("n1").created(NOW.minus(Duration.ofHours(5))).phase("Failed")
        .container(PodFixtures.terminatedAt("c", "Error", 1, NOW.minus(Duration.ofHours(4)))).build();
    view.put(p);
    return p;
  }

  private static PolicyEvaluator failedRule() {
    return new PolicyEvaluator(PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: r, states: [Failed], maxAgeAfterFinish: 1h}]
        """, "test"));
  }

  @Test
  void aPassGoesOnPastAPodWhoseJudgingThrows() {
    failed("poisoned", "bad");
    failed("a", "good");
    view.poisoned.add("poisoned");

    PassResult pass = failedRule().pass(view, NOW, new RemovalBudget(failedRule().policy().limits()), true);

    assertThat(Passes.evicted(pass)).containsExactly("good");
    assertThat(pass.faults()).singleElement().asString().contains("poisoned/bad").contains("a poisoned value");
  }

  @Test
  void aBalanceStrategyGoesOnPastAPodWhoseJudgingThrows() {
    view.nodes.addAll(List.of(node("n1", Map.of(), List.of(new Taint("dedicated", "gpu", "NoSchedule"))), node("n2")));
    view.put(pod("bad").ns("poisoned").on("n1").build());
    view.put(pod("good").ns("a").on("n1").build());
    view.poisoned.add("poisoned");
    PolicyEvaluator taints = Passes.policy("{}", "deschedule", "RemovePodsViolatingNodeTaints", "{}");

    PassResult pass = taints.balance(view, NOW, new RemovalBudget(taints.policy().limits()), PolicyEvaluator.StrategyRunner.DIRECT);

    assertThat(Passes.evicted(pass)).containsExactly("good");
    assertThat(pass.faults()).singleElement().asString().contains("poisoned/bad");
  }

  @Test
  void theForecastGoesOnPastAPodWhoseJudgingThrowsAndNamesIt() {
    failed("poisoned", "bad");
    failed("a", "good");
    view.poisoned.add("poisoned");

    Forecast forecast = failedRule().forecast(view, NOW, Duration.ofHours(1));

    assertThat(forecast.removals()).extracting(Decision::name).containsExactly("good");
    assertThat(forecast.faults()).singleElement().asString().contains("poisoned/bad");
  }

  @Test
  void explainSaysThatJudgingThePodFailedInsteadOfFailing() {
    PodRecord bad = failed("poisoned", "bad");
    view.poisoned.add("poisoned");

    assertThat(failedRule().explain(bad, view, NOW)).singleElement().asString()
        .startsWith("fault: judging this pod failed").contains("a poisoned value");
  }
}
