package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.NOW;
import static io.podsweeper.cluster.PodFixtures.namespace;
import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.cluster.PodFixtures.terminatedAt;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.LabelSelector;
import io.podsweeper.policy.PolicyLoader;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** {@code explain} names, rule by rule, the first criterion a pod fails, or what a rule that wants it waits for. */
class ExplainTest {
  private static final PolicyEvaluator POLICY = new PolicyEvaluator(PolicyLoader.parse("""
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      rules:
        - name: ci-failed
          namespaces: {include: ["ci-*"], exclude: [ci-prod]}
          states: [Failed]
          maxAgeAfterFinish: 1h
        - name: team-crashloop
          namespaceSelector: {matchLabels: {team: web}}
          podSelector: {matchExpressions: [{key: keep, operator: DoesNotExist}]}
          states: [CrashLoopBackOff]
          maxAge: 6h
        - name: keep-five
          states: [Succeeded]
          keepLast: 1
      """, "test"));

  private static List<String> explain(PodRecord pod, ClusterSnapshot snapshot) {
    return POLICY.explain(pod, snapshot, NOW);
  }

  private static ClusterSnapshot cluster(List<PdbRecord> pdbs, PodRecord... pods) {
    return ClusterSnapshot.of(List.of(pods), List.of(namespace("web", Map.of("team", "web")), namespace("ci-prod", Map.of())),
        List.of(), pdbs, List.of(), Map.of());
  }

  private static PodRecord crashing(String name, String ns, Duration age) {
    return pod(name).ns(ns).age(age).containers(PodFixtures.waiting("main", "CrashLoopBackOff", 9)).build();
  }

  private static String rule(List<String> lines, String name) {
    return lines.stream().filter(l -> l.startsWith("    rule " + name + ": ")).findFirst().orElseThrow().strip();
  }

  @Test
  void eachRuleSaysTheFirstCriterionThePodFails() {
    PodRecord pod = crashing("api", "web", Duration.ofHours(2));
    List<String> lines = explain(pod, cluster(List.of(), pod));
    // Fails the namespace and the state: the namespace is checked first.
    assertThat(rule(lines, "ci-failed")).isEqualTo("rule ci-failed: namespace web is not in include [ci-*]");
    assertThat(rule(lines, "team-crashloop"))
        .isEqualTo("rule team-crashloop: due at " + NOW.plus(Duration.ofHours(4)) + ": age 2h is under maxAge 6h");
    assertThat(rule(lines, "keep-five"))
        .isEqualTo("rule keep-five: state Running (container main CrashLoopBackOff) is not one of [Succeeded]");
  }

  @Test
  void namespaceLabelsPodLabelsExcludesAndTheFinishedOptInEachSayWhatFailed() {
    PodRecord elsewhere = crashing("api", "batch", Duration.ofHours(8));
    PodRecord kept = pod("api-keep").ns("web").age(Duration.ofHours(8)).label("keep", "yes").label("app", "api")
        .containers(PodFixtures.waiting("main", "CrashLoopBackOff", 9)).build();
    PodRecord prod = pod("build").ns("ci-prod").phase("Failed").containers(terminatedAt("main", "Error", 1, NOW)).build();
    PodRecord finishedInWeb = pod("done").ns("web").phase("Failed").containers(terminatedAt("main", "Error", 1, NOW)).build();

    assertThat(rule(explain(elsewhere, cluster(List.of(), elsewhere)), "team-crashloop"))
        .isEqualTo("rule team-crashloop: namespace batch's labels {kubernetes.io/metadata.name=batch}"
            + " do not match namespaceSelector team=web");
    assertThat(rule(explain(kept, cluster(List.of(), kept)), "team-crashloop"))
        .isEqualTo("rule team-crashloop: pod labels {app=api, keep=yes} do not match podSelector !keep");
    assertThat(rule(explain(prod, cluster(List.of(), prod)), "ci-failed"))
        .isEqualTo("rule ci-failed: namespace ci-prod is in exclude [ci-prod]");
    assertThat(rule(explain(finishedInWeb, cluster(List.of(), finishedInWeb)), "team-crashloop"))
        .isEqualTo("rule team-crashloop: the pod has finished (Failed) and the rule names no state only finished pods have"
            + " (the opt-in they need)");
  }

  @Test
  void aRuleThatWantsThePodSaysSinceWhenOrWhatItWaitsFor() {
    PodRecord old = pod("build-1").ns("ci-a").phase("Failed").age(Duration.ofHours(4)).containers(terminatedAt("main", "Error", 1, NOW.minus(Duration.ofHours(3)))).build();
    PodRecord recent = pod("build-2").ns("ci-a").phase("Failed").age(Duration.ofHours(1)).containers(terminatedAt("main", "Error", 1, NOW.minus(Duration.ofMinutes(20)))).build();
    assertThat(rule(explain(old, cluster(List.of(), old)), "ci-failed")).isEqualTo("rule ci-failed: due since "
        + NOW.minus(Duration.ofHours(2)) + ": Failed, finished 3h ago; rule ci-failed allows 1h after finish");
    assertThat(rule(explain(recent, cluster(List.of(), recent)), "ci-failed")).isEqualTo("rule ci-failed: due at "
        + NOW.plus(Duration.ofMinutes(40)) + ": finished 20m ago, under maxAgeAfterFinish 1h");
  }

  /** Issue 37: the rule's own line said "no condition of the pod matches the rule's conditions" for a rule without any. */
  @Test
  void aRuleThatSelectsAProtectedPodSaysSoOnItsOwnLineToo() {
    PodRecord bare = pod("debug").ns("web").age(Duration.ofHours(8)).bare().containers(PodFixtures.waiting("main", "CrashLoopBackOff", 9)).build();
    List<String> lines = explain(bare, cluster(List.of(), bare));
    String protection = "selects it, but it is protected: a bare pod (no controller recreates it); a rule evicts it only with evict: [BarePods]";
    assertThat(lines).contains("  PodLifeTime: rule team-crashloop " + protection);
    assertThat(rule(lines, "team-crashloop")).isEqualTo("rule team-crashloop: " + protection);
  }

  /** What the rule does not look at is said apart from what it does, so that a state is never both missing and there. */
  @Test
  void containersAndStatesTheRuleDoesNotCountAreSaidApart() {
    PodRecord debugged = pod("api").ns("web").age(Duration.ofHours(1)).containers(PodFixtures.waiting("main", "ContainerCreating", 0),
        PodFixtures.waiting("setup", io.podsweeper.cluster.ContainerStatus.Kind.INIT, "CrashLoopBackOff", 4),
        PodFixtures.terminated("debug", io.podsweeper.cluster.ContainerStatus.Kind.EPHEMERAL, "Error", 1)).build();
    assertThat(rule(explain(debugged, cluster(List.of(), debugged)), "team-crashloop")).isEqualTo("rule team-crashloop: state Running"
        + " (container main ContainerCreating) is not one of [CrashLoopBackOff]; init container setup CrashLoopBackOff counts only with"
        + " includingInitContainers: true; ephemeral container debug Error is not counted (only upstream's PodLifeTime counts one,"
        + " with includingEphemeralContainers: true)");
    PolicyEvaluator mixed = new PolicyEvaluator(PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: broken, states: [Failed, CrashLoopBackOff], maxAge: 1h}]
        """, "test"));
    PodRecord succeeded = pod("job").phase("Succeeded").containers(PodFixtures.waiting("main", "CrashLoopBackOff", 3)).build();
    assertThat(mixed.explain(succeeded, cluster(List.of(), succeeded), NOW)).contains("    rule broken: state Succeeded (container main"
        + " CrashLoopBackOff) is not one of [Failed] (a finished pod is matched by the rule's finished states only)");
  }

  @Test
  void aPodKeptByKeepLastSaysItsRank() {
    PodRecord newer = pod("run-2").phase("Succeeded").age(Duration.ofHours(1)).ownedBy("Job", "nightly")
        .containers(terminatedAt("main", "Completed", 0, NOW.minusSeconds(60))).build();
    PodRecord older = pod("run-1").phase("Succeeded").age(Duration.ofHours(1)).ownedBy("Job", "nightly")
        .containers(terminatedAt("main", "Completed", 0, NOW.minusSeconds(600))).build();
    ClusterSnapshot snapshot = cluster(List.of(), newer, older);
    assertThat(rule(explain(newer, snapshot), "keep-five")).startsWith("rule keep-five: kept: number 1 of 2 of ")
        .endsWith(" by finish time, rule keeps 1");
    assertThat(rule(explain(older, snapshot), "keep-five")).startsWith("rule keep-five: due since ")
        .contains("number 2 of 2 of ");
  }

  @Test
  void aPodDisruptionBudgetThatAllowsNoDisruptionIsNamedWithTheRetryItCauses() {
    PodRecord pod = crashing("api", "web", Duration.ofHours(8));
    LabelSelector api = new LabelSelector(Map.of(), List.of());
    List<String> refusing = explain(pod, cluster(List.of(new PdbRecord("web", "api-pdb", api, OptionalInt.of(0))), pod));
    assertThat(refusing).contains("PodDisruptionBudget api-pdb covers it: allows no disruption now (status.disruptionsAllowed 0);"
        + " a refused eviction is retried with backoff 5s doubling to 5m");
    assertThat(refusing.get(refusing.size() - 1)).startsWith("verdict: evict now, by PodLifeTime (rule team-crashloop)")
        .endsWith("; but PodDisruptionBudget api-pdb refuses it now, so it is retried with backoff until the budget allows a disruption");

    List<String> allowing = explain(pod, cluster(List.of(new PdbRecord("web", "api-pdb", api, OptionalInt.of(2))), pod));
    assertThat(allowing).contains("PodDisruptionBudget api-pdb covers it: allows 2 disruption(s) now (status.disruptionsAllowed 2);"
        + " a refused eviction is retried with backoff 5s doubling to 5m");
    assertThat(allowing.get(allowing.size() - 1)).doesNotContain("refuses");

    List<String> unknown = explain(pod, cluster(List.of(new PdbRecord("web", "api-pdb", api)), pod));
    assertThat(unknown).contains("PodDisruptionBudget api-pdb covers it: its status.disruptionsAllowed was not read;"
        + " a refused eviction is retried with backoff 5s doubling to 5m");
  }

  @Test
  void onlyABudgetThatCoversAPodToBeEvictedIsShown() {
    PodRecord pod = crashing("api", "web", Duration.ofHours(8));
    PdbRecord otherApp = new PdbRecord("web", "db-pdb", new LabelSelector(Map.of("app", "db"), List.of()), OptionalInt.of(0));
    assertThat(explain(pod, cluster(List.of(otherApp), pod))).noneMatch(l -> l.contains("PodDisruptionBudget"));
    // A finished pod is deleted, not evicted: no budget applies.
    PodRecord finished = pod("build").ns("ci-a").phase("Failed").age(Duration.ofHours(4)).containers(terminatedAt("main", "Error", 1, NOW.minus(Duration.ofHours(3)))).build();
    PdbRecord all = new PdbRecord("ci-a", "all", new LabelSelector(Map.of(), List.of()), OptionalInt.of(0));
    assertThat(explain(finished, cluster(List.of(all), finished))).noneMatch(l -> l.contains("PodDisruptionBudget"))
        .last().asString().startsWith("verdict: delete now");
  }
}
