package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.NOW;
import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.cluster.PodFixtures.terminatedAt;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.CleanupPolicies;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.policy.YamlDocuments;
import io.podsweeper.safety.RemovalBudget;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The finished-pod budget as {@code plan}, the forecast and {@code explain} show it: fair shares, and what it never removes. */
class FinishedPodBudgetTest {
  private static final String HEAD = "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n";

  static PolicyEvaluator policy(String yaml) {
    return new PolicyEvaluator(PolicyLoader.parse(HEAD + yaml, "policy.yaml"));
  }

  /** A pod of {@code phase} in {@code ns} whose container finished {@code ago} before NOW. */
  static PodRecord finished(String ns, String name, String phase, Duration ago) {
    return pod(name).ns(ns).phase(phase).age(ago.plusMinutes(1)).containers(terminatedAt("main", phase.equals("Failed") ? "Error" : "Completed",
        phase.equals("Failed") ? 1 : 0, NOW.minus(ago))).build();
  }

  /** {@code count} Succeeded pods in {@code ns}, named {@code ns-0}…, the first finished {@code oldest} ago, each a minute later. */
  static List<PodRecord> finished(String ns, int count, Duration oldest) {
    return IntStream.range(0, count).mapToObj(i -> finished(ns, ns + "-" + i, "Succeeded", oldest.minusMinutes(i))).toList();
  }

  static ClusterSnapshot cluster(Collection<PodRecord> pods, NamespaceRecord... namespaces) {
    return ClusterSnapshot.of(pods, List.of(namespaces), List.of());
  }

  @SafeVarargs
  static List<PodRecord> all(List<PodRecord>... groups) {
    List<PodRecord> all = new ArrayList<>();
    for (List<PodRecord> g : groups) {
      all.addAll(g);
    }
    return all;
  }

  static Map<String, Long> removedPerNamespace(List<Decision> decisions) {
    return decisions.stream().collect(Collectors.groupingBy(Decision::namespace, TreeMap::new, Collectors.counting()));
  }

  static List<String> names(List<Decision> decisions) {
    return decisions.stream().map(Decision::name).toList();
  }

  @Test
  void aBurstingNamespaceLosesItsOldestAndTheQuietOnesKeepTheirs() {
    PolicyEvaluator e = policy("finishedPodBudget: {maxPods: 100, phases: [Succeeded, Failed]}\n");
    List<PodRecord> ci = finished("ci", 150, Duration.ofHours(3));
    List<Decision> plan = e.plan(cluster(all(ci, finished("quiet-a", 20, Duration.ofDays(2)), finished("quiet-b", 30, Duration.ofDays(3)))), NOW);

    // 200 held, 100 allowed: the quiet namespaces (20 and 30) are under the level and keep everything, even their
    // far older pods; ci's fair share is what they leave, 50, and it loses its 100 oldest.
    assertThat(removedPerNamespace(plan)).containsExactly(Map.entry("ci", 100L));
    assertThat(names(plan)).containsExactlyElementsOf(ci.subList(0, 100).stream().map(PodRecord::name).toList());
    Decision first = plan.get(0);
    assertThat(first.strategy()).isEqualTo(FinishedPodBudgets.STRATEGY);
    assertThat(first.profile()).isEqualTo("finishedPodBudget");
    assertThat(first.rule()).isEqualTo("finishedPodBudget");
    assertThat(first.action()).isEqualTo(Action.DELETE);
    assertThat(first.dueAt()).isEqualTo(NOW);
    assertThat(first.reason()).isEqualTo("budget: ci holds 150 finished pods, fair share 50 of 100; finished 3h ago");
    assertThat(plan.get(99).reason()).startsWith("budget: ci holds 51 finished pods, fair share 50 of 100;");
  }

  @Test
  void unequalDemandsAreWaterFilledAndTheFurthestOverGoesFirst() {
    PolicyEvaluator e = policy("finishedPodBudget: {maxPods: 50, phases: [Succeeded]}\n");
    ClusterSnapshot snapshot = cluster(all(finished("ci", 48, Duration.ofHours(5)), finished("data", 19, Duration.ofHours(5)),
        finished("web", 9, Duration.ofHours(5)), finished("ml", 6, Duration.ofHours(5))));
    List<Decision> plan = e.plan(snapshot, NOW);

    // ml (6) and web (9) fit under an equal split and keep all; ci and data share the other 35: 18 and 17 (the odd
    // pod to the first by name). ci is 30 over, data 2: ci goes first until they are level, then they alternate.
    assertThat(removedPerNamespace(plan)).containsExactly(Map.entry("ci", 30L), Map.entry("data", 2L));
    assertThat(plan.subList(0, 28)).extracting(Decision::namespace).containsOnly("ci");
    assertThat(plan.subList(28, 32)).extracting(Decision::namespace).containsExactly("ci", "data", "ci", "data");
    assertThat(plan.get(0).reason()).startsWith("budget: ci holds 48 Succeeded pods, fair share 18 of 50;");
    assertThat(plan.get(29).reason()).startsWith("budget: data holds 19 Succeeded pods, fair share 17 of 50;");
  }

  @Test
  void aPerNamespaceCapHoldsWhileTheClusterIsUnderItsBudget() {
    PolicyEvaluator e = policy("finishedPodBudget: {maxPods: 1000, maxPodsPerNamespace: 10, phases: [Succeeded]}\n");
    List<PodRecord> ci = finished("ci", 15, Duration.ofHours(1));
    List<Decision> plan = e.plan(cluster(all(ci, finished("web", 5, Duration.ofHours(1)))), NOW);
    assertThat(names(plan)).containsExactly("ci-0", "ci-1", "ci-2", "ci-3", "ci-4");
    assertThat(plan.get(0).reason()).startsWith("budget: ci holds 15 Succeeded pods, fair share 10 of 1,000 (maxPodsPerNamespace);");
  }

  @Test
  void aPodYoungerThanTheMinimumRetentionStaysAndThePlanSaysTheBudgetCannotBeHeld() {
    PolicyEvaluator e = policy("finishedPodBudget: {maxPods: 10, minRetention: 30m, phases: [Succeeded]}\n");
    // 30 pods, finished 44m to 15m ago: 15 are 30m old or older.
    List<PodRecord> ci = finished("ci", 30, Duration.ofMinutes(44));
    PassResult pass = e.pass(cluster(ci), NOW, new RemovalBudget(e.policy().limits()), true);
    assertThat(names(pass.decisions())).containsExactlyElementsOf(ci.subList(0, 15).stream().map(PodRecord::name).toList());
    assertThat(pass.notes()).contains("finishedPodBudget: 30 Succeeded pods counted after the rules' removals, budget 10 (minRetention 30m)",
        "finishedPodBudget cannot be held in ci: 5 over its fair share 10 once its removable pods are gone (5 too young)");
  }

  @Test
  void keepLastAndProtectionsAreRespectedAndWhatTheyHoldCounts() {
    // The rule removes nothing here (a month's age), but keeps the newest two reports of each owner.
    PolicyEvaluator e = policy("""
        finishedPodBudget: {maxPods: 3, phases: [Succeeded]}
        rules:
          - {name: reports, states: [Succeeded], podSelector: {matchLabels: {app: report}}, keepLast: 2, maxAgeAfterFinish: 30d}
        """);
    List<PodRecord> batch = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      var b = pod("report-" + i).ns("batch").phase("Succeeded").label("app", "report").ownedBy("Job", "report").age(Duration.ofHours(12))
          .containers(terminatedAt("main", "Completed", 0, NOW.minus(Duration.ofHours(10 - i))));
      batch.add((i == 0 ? b.annotation("podsweeper.io/protect", "true") : b).build());
    }
    List<PodRecord> vault = finished("vault", 4, Duration.ofDays(1));
    ClusterSnapshot snapshot = cluster(all(batch, vault),
        new NamespaceRecord("vault", Map.of("kubernetes.io/metadata.name", "vault"), true));
    PassResult pass = e.pass(snapshot, NOW, new RemovalBudget(e.policy().limits()), true);

    // 14 held, 3 allowed (batch's share 2, vault's 1, the odd pod to the first by name). Batch loses its seven
    // removable reports; report-0 (protected) and the newest two (kept) stay. Vault's pods are all protected.
    assertThat(names(pass.decisions())).containsExactly("report-1", "report-2", "report-3", "report-4", "report-5", "report-6", "report-7");
    assertThat(pass.notes()).contains(
        "finishedPodBudget cannot be held in batch: 1 over its fair share 2 once its removable pods are gone (1 kept)",
        "finishedPodBudget cannot be held in vault: 3 over its fair share 1 once its removable pods are gone (3 protected)");
  }

  @Test
  void onlyThePhasesTheBudgetNamesAreCountedOrRemoved() {
    PolicyEvaluator e = policy("finishedPodBudget: {maxPods: 5, phases: [Failed]}\n");
    List<PodRecord> pods = new ArrayList<>(finished("ci", 10, Duration.ofDays(2)));
    for (int i = 0; i < 8; i++) {
      pods.add(finished("ci", "failed-" + i, "Failed", Duration.ofHours(10 - i)));
    }
    List<Decision> plan = e.plan(cluster(pods), NOW);
    assertThat(names(plan)).containsExactly("failed-0", "failed-1", "failed-2");
    assertThat(plan.get(0).reason()).startsWith("budget: ci holds 8 Failed pods, fair share 5 of 5;");
  }

  @Test
  void theRulesRemoveFirstAndTheBudgetOnlyWhatTheyLeaveOver() {
    PolicyEvaluator e = policy("""
        finishedPodBudget: {maxPods: 10, phases: [Succeeded]}
        rules: [{name: old, states: [Succeeded], maxAgeAfterFinish: 5h}]
        """);
    // 20 pods finished 10h to 10h-19m ago... and 10 more an hour ago: the rule takes the 20, the budget nothing.
    List<Decision> plan = e.plan(cluster(all(finished("ci", 20, Duration.ofHours(10)), finished("web", 10, Duration.ofHours(1)))), NOW);
    assertThat(plan).extracting(Decision::strategy).containsOnly(PodLifeTime.NAME).hasSize(20);
    // The same with 12 in web: web is 2 over once the rule is done.
    plan = e.plan(cluster(all(finished("ci", 20, Duration.ofHours(10)), finished("web", 12, Duration.ofHours(1)))), NOW);
    assertThat(plan.subList(20, 22)).extracting(d -> d.strategy() + " " + d.name())
        .containsExactly("FinishedPodBudget web-0", "FinishedPodBudget web-1");
  }

  @Test
  void theLimitsOfThePassApplyToTheBudgetToo() {
    PolicyEvaluator e = policy("limits: {maxTotal: 4}\nfinishedPodBudget: {maxPods: 10, phases: [Succeeded]}\n");
    PassResult pass = e.pass(cluster(finished("ci", 20, Duration.ofHours(3))), NOW, new RemovalBudget(e.policy().limits()), true);
    assertThat(pass.decisions()).hasSize(4);
    assertThat(pass.notes()).contains("finished-pod budgets: 4 removal(s), 1 more held back by the limits");
  }

  @Test
  void aDryRunPlansTheSameRemovals() {
    String budget = "finishedPodBudget: {maxPods: 5, phases: [Succeeded]}\n";
    ClusterSnapshot snapshot = cluster(all(finished("ci", 8, Duration.ofHours(3)), finished("web", 4, Duration.ofHours(3))));
    PolicyEvaluator dry = policy("dryRun: true\n" + budget);
    assertThat(dry.policy().dryRun()).isTrue();
    assertThat(dry.plan(snapshot, NOW)).isEqualTo(policy(budget).plan(snapshot, NOW)).hasSize(7);
    assertThat(dry.forecast(snapshot, NOW, Duration.ofHours(1)).dryRun()).isTrue();
  }

  @Test
  void aTeamsCapHoldsInItsNamespaceWithinTheClustersRetention() {
    Policy file = PolicyLoader.parse(HEAD + "finishedPodBudget: {maxPods: 1000, minRetention: 2h, phases: [Succeeded]}\n", "policy.yaml");
    JsonNode rails = YamlDocuments.read("{minMaxAge: 1h, allowTerminated: true}", "rails", 4096).get(0);
    JsonNode spec = YamlDocuments.read("finishedPodBudget: {maxPods: 20, minRetention: 1h, phases: [Succeeded]}", "spec", 4096).get(0);
    CleanupPolicies.Verdict verdict = CleanupPolicies.judge(new CleanupPolicies.Source("team-a", "cleanup", spec),
        CleanupPolicies.clusterRails(Optional.of(rails)));
    PolicyEvaluator e = new PolicyEvaluator(CleanupPolicies.compose(file, List.of(verdict)));
    // 5 pods finished 3h to 2h56m ago, 30 finished 90m to 61m ago: 15 over the team's cap, but its 1h is held to the
    // cluster's 2h, so only the 5 are old enough; team-b, as many pods and no cap, loses none (the cluster is under 1,000).
    List<PodRecord> teamA = all(IntStream.range(0, 5).mapToObj(i -> finished("team-a", "old-" + i, "Succeeded", Duration.ofMinutes(180 - i)))
        .toList(), finished("team-a", 30, Duration.ofMinutes(90)));
    PassResult pass = e.pass(cluster(all(teamA, finished("team-b", 35, Duration.ofHours(3)))), NOW, new RemovalBudget(e.policy().limits()), true);

    assertThat(names(pass.decisions())).containsExactly("old-0", "old-1", "old-2", "old-3", "old-4");
    Decision first = pass.decisions().get(0);
    assertThat(first.profile()).isEqualTo("PodCleanupPolicy team-a/cleanup");
    assertThat(first.rule()).isEqualTo("cleanup/finishedPodBudget");
    assertThat(first.reason()).isEqualTo("budget: PodCleanupPolicy team-a/cleanup keeps at most 20 Succeeded pods in team-a, which holds 35;"
        + " finished 3h ago");
    assertThat(pass.notes()).contains("PodCleanupPolicy team-a/cleanup cannot be held in team-a: 10 over its cap 20 once its removable pods"
        + " are gone (10 too young)");
  }

  @Test
  void theForecastShowsEachPodWhenItBecomesOldEnoughUnlessTheRulesBringItsNamespaceWithinFirst() {
    PolicyEvaluator e = policy("""
        finishedPodBudget: {maxPods: 4, minRetention: 1h, phases: [Succeeded, Failed]}
        rules: [{name: failed, states: [Failed], maxAgeAfterFinish: 50m}]
        """);
    // ci: 3 Succeeded finished 2h ago (removable now), 3 finished 30m ago (old enough in 30m), 2 Failed finished 20m
    // ago, which the rule removes in 30m: ci holds 8 of 4.
    List<PodRecord> pods = new ArrayList<>(finished("ci", 3, Duration.ofHours(2)));
    pods.addAll(IntStream.range(0, 3).mapToObj(i -> finished("ci", "young-" + i, "Succeeded", Duration.ofMinutes(30 - i))).toList());
    pods.add(finished("ci", "failed-0", "Failed", Duration.ofMinutes(20)));
    pods.add(finished("ci", "failed-1", "Failed", Duration.ofMinutes(20)));
    Forecast f = e.forecast(cluster(pods), NOW, Duration.ofHours(2));

    // Now: the 3 old ones bring ci to 5. In 30m the rule removes the Failed two: 3, within; young-* are never due.
    assertThat(f.removals()).extracting(d -> d.name() + " " + d.strategy() + " " + Duration.between(NOW, d.dueAt()))
        .containsExactly("ci-0 FinishedPodBudget PT0S", "ci-1 FinishedPodBudget PT0S", "ci-2 FinishedPodBudget PT0S",
            "failed-0 PodLifeTime PT30M", "failed-1 PodLifeTime PT30M");
    // Without the rule, young-0 goes when it is an hour old (in 30m): ci is then 5 of 4, and 4 after.
    f = policy("finishedPodBudget: {maxPods: 4, minRetention: 1h, phases: [Succeeded, Failed]}\n").forecast(cluster(pods), NOW, Duration.ofHours(2));
    assertThat(f.removals()).extracting(d -> d.name() + " " + Duration.between(NOW, d.dueAt()))
        .containsExactly("ci-0 PT0S", "ci-1 PT0S", "ci-2 PT0S", "young-0 PT30M");
    assertThat(f.removals().get(3).reason()).isEqualTo("budget: ci holds 5 finished pods, fair share 4 of 4; finished 1h ago");
    assertThat(policy("finishedPodBudget: {maxPods: 4, minRetention: 1h, phases: [Succeeded, Failed]}\n")
        .forecast(cluster(pods), NOW, Duration.ofMinutes(29)).removals()).hasSize(3);
  }

  @Test
  void explainSaysWhereTheNamespaceStandsAndWhatTheBudgetMakesOfThePod() {
    PolicyEvaluator e = policy("finishedPodBudget: {maxPods: 2, minRetention: 1h, phases: [Succeeded]}\n");
    List<PodRecord> pods = all(finished("ci", 3, Duration.ofHours(3)), List.of(finished("ci", "young", "Succeeded", Duration.ofMinutes(10))));
    ClusterSnapshot snapshot = cluster(pods);
    assertThat(e.explain(pods.get(0), snapshot, NOW)).contains(
        "finished-pod budget finishedPodBudget (Succeeded, minRetention 1h): budget: ci holds 4 Succeeded pods, fair share 2 of 2, 2 over",
        "  this pod: the budget may remove it now (its namespace's oldest removable pods go first, while it is over)",
        "verdict: delete now, by FinishedPodBudget (rule finishedPodBudget): budget: ci holds 4 Succeeded pods, fair share 2 of 2;"
            + " finished 3h ago");
    assertThat(e.explain(pods.get(3), snapshot, NOW)).contains("  this pod: finished 10m ago, under the budget's minRetention 1h"
        + " (old enough at " + NOW.plus(Duration.ofMinutes(50)) + ")").last().isEqualTo("verdict: never, as the pod is now");
    // Once the two oldest are gone ci is within: the young one stays. With two more young ones, it goes when it is an
    // hour old, if ci is still over then; the next one stays.
    pods = all(finished("ci", 2, Duration.ofHours(3)), List.of(finished("ci", "young", "Succeeded", Duration.ofMinutes(10)),
        finished("ci", "younger", "Succeeded", Duration.ofMinutes(5)), finished("ci", "youngest", "Succeeded", Duration.ofMinutes(1))));
    assertThat(e.explain(pods.get(2), cluster(pods), NOW)).last().isEqualTo("verdict: delete at " + NOW.plus(Duration.ofMinutes(50))
        + " by FinishedPodBudget (rule finishedPodBudget), if its namespace is still over then and the pod does not change before");
    assertThat(e.explain(pods.get(3), cluster(pods), NOW)).last().isEqualTo("verdict: never, as the pod is now");
  }
}
