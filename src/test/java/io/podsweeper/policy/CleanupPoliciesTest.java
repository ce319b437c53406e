package io.podsweeper.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.podsweeper.policy.CleanupPolicies.ClusterRails;
import io.podsweeper.policy.CleanupPolicies.Source;
import io.podsweeper.policy.CleanupPolicies.Verdict;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** PodCleanupPolicy specs are judged whole: the rule language, then the guard rails; accepted ones compose. */
class CleanupPoliciesTest {
  private static final String RAILS = "{minMaxAge: 1h, allowTerminated: true}";

  private static JsonNode yaml(String text) {
    return YamlDocuments.read(text, "test", 1 << 16).get(0);
  }

  private static ClusterRails rails(String spec) {
    return CleanupPolicies.clusterRails(Optional.of(yaml(spec)));
  }

  private static Verdict judge(String namespace, String spec, String rails) {
    return CleanupPolicies.judge(new Source(namespace, "cleanup", yaml(spec)), rails(rails));
  }

  @Test
  void anAcceptedPolicyIsScopedToItsOwnNamespaceAndNamedAfterItself() {
    Verdict v = judge("team-a", "rules: [{name: failed, states: [Failed], maxAgeAfterFinish: 2h}]", RAILS);
    assertThat(v.outcome().accepted()).isTrue();
    assertThat(v.outcome().reason()).isEqualTo("Accepted");
    Profile profile = v.profile().orElseThrow();
    assertThat(profile.name()).isEqualTo("PodCleanupPolicy team-a/cleanup");
    assertThat(profile.readyNodesOnly()).isFalse();
    assertThat(profile.evictor()).isEqualTo(EvictorArgs.NONE);
    Rule rule = ((PodLifeTimeArgs) profile.deschedule().get(0)).rules().get(0);
    assertThat(rule.name()).isEqualTo("cleanup/failed");
    assertThat(rule.namespaces().matches("team-a")).isTrue();
    assertThat(rule.namespaces().matches("team-b")).isFalse();
    assertThat(rule.namespaces().matches("team-a2")).isFalse();
    assertThat(rule.maxAgeAfterFinish()).contains(Duration.ofHours(2));
  }

  static Stream<Arguments> rejected() {
    String terminalOff = "{minMaxAge: 1h, allowTerminated: false}";
    return Stream.of(
        // The rule language, with the file policy's own messages and exact paths.
        Arguments.of("rules: [{name: a, states: [Crashloop], maxAge: 2h}]", RAILS, "InvalidSpec",
            "spec.rules[0].states[0]: unknown state \"Crashloop\""),
        Arguments.of("rules: [{name: a, maxage: 2h}]", RAILS, "InvalidSpec", "spec.rules[0].maxage: unknown field"),
        Arguments.of("rules: [{name: a, maxAge: 2h}, {name: a, maxAge: 3h}]", RAILS, "InvalidSpec",
            "spec.rules[1].name: duplicate rule name \"a\""),
        Arguments.of("rules: []", RAILS, "InvalidSpec", "spec.rules: at least one rule is required"),
        Arguments.of("{}", RAILS, "InvalidSpec", "spec.rules: at least one rule is required"),
        Arguments.of("rules: [{name: a, maxAge: 2h, namespaces: {include: [other]}}]", RAILS, "InvalidSpec",
            "spec.rules[0].namespaces: not allowed in a PodCleanupPolicy: its rules apply to its own namespace only"),
        Arguments.of("rules: [{name: a, maxAge: 2h}]\ndryRun: true", RAILS, "InvalidSpec", "spec.dryRun: unknown field"),
        // The guard rails.
        Arguments.of("rules: [{name: a, states: [CrashLoopBackOff], maxAge: 1m}]", RAILS, "ExceedsGuardRails",
            "spec.rules[0].maxAge: 1m is shorter than the cluster's minMaxAge 1h"),
        Arguments.of("rules: [{name: ok, maxAge: 2h}, {name: a, states: [Failed], maxAgeAfterFinish: 30m}]", RAILS,
            "ExceedsGuardRails", "spec.rules[1].maxAgeAfterFinish: 30m is shorter than the cluster's minMaxAge 1h"),
        Arguments.of("rules: [{name: a, states: [CrashLoopBackOff]}]", RAILS, "ExceedsGuardRails",
            "spec.rules[0]: needs maxAge or maxAgeAfterFinish of at least 1h"),
        Arguments.of("rules: [{name: a, states: [Pending, Evicted], maxAge: 2h}]", terminalOff, "ExceedsGuardRails",
            "spec.rules[0].states[1]: \"Evicted\" is a terminal state, and the cluster does not allow"),
        Arguments.of("rules: [{name: a, maxAge: 2h}]", "{allowedNamespaces: {include: [\"ci-*\"]}}", "NamespaceNotAllowed",
            "namespace team-a is not in the allowedNamespaces"),
        // The admin's own policy is wrong: nothing namespaced applies.
        Arguments.of("rules: [{name: a, maxAge: 2h}]", "{minMaxAge: soon}", "ClusterPolicyInvalid",
            "ClusterPodCleanupPolicy \"default\" is invalid: spec.minMaxAge: invalid duration \"soon\""),
        // A team's own finished-pod budget: the file's reader, a cap on its own namespace only, within the rails.
        Arguments.of("finishedPodBudget: {maxPods: 200}", RAILS, "InvalidSpec", "spec.finishedPodBudget.phases: name the finished phases"),
        Arguments.of("finishedPodBudget: {maxPods: 200, maxPodsPerNamespace: 100, phases: [Failed]}", RAILS, "InvalidSpec",
            "spec.finishedPodBudget.maxPodsPerNamespace: unknown field"),
        Arguments.of("finishedPodBudget: {maxPods: 200, phases: [Failed]}", terminalOff, "ExceedsGuardRails",
            "spec.finishedPodBudget.phases: a finishedPodBudget removes finished pods, and the cluster does not allow namespaced"
                + " policies to (allowTerminated: false)"),
        Arguments.of("finishedPodBudget: {maxPods: 200, minRetention: 30m, phases: [Failed]}", RAILS, "ExceedsGuardRails",
            "spec.finishedPodBudget.minRetention: 30m is shorter than the cluster's minMaxAge 1h"),
        Arguments.of("rules: []\nfinishedPodBudget: null", RAILS, "InvalidSpec", "spec.rules: at least one rule is required, or a finishedPodBudget"));
  }

  @ParameterizedTest
  @MethodSource
  void rejected(String spec, String rails, String reason, String message) {
    Verdict v = judge("team-a", spec, rails);
    assertThat(v.outcome().accepted()).isFalse();
    assertThat(v.profile()).isEmpty();
    assertThat(v.outcome().reason()).isEqualTo(reason);
    assertThat(v.outcome().message()).startsWith(message);
  }

  @Test
  void withoutTheClusterPolicyNothingNamespacedApplies() {
    ClusterRails none = CleanupPolicies.clusterRails(Optional.empty());
    assertThat(none.outcome().accepted()).isFalse();
    Verdict v = CleanupPolicies.judge(new Source("team-a", "p", yaml("rules: [{name: a, maxAge: 2h}]")), none);
    assertThat(v.outcome().reason()).isEqualTo("NoClusterPolicy");
    assertThat(v.outcome().message()).contains("ClusterPodCleanupPolicy \"default\"");
  }

  @Test
  void theClusterPolicyHasSafeDefaultsAndSaysWhatIsInForce() {
    ClusterRails defaults = CleanupPolicies.clusterRails(Optional.of(yaml("{}")));
    assertThat(defaults.rails().orElseThrow().minMaxAge()).isEqualTo(Duration.ofHours(1));
    assertThat(defaults.rails().get().allowTerminated()).isFalse();
    assertThat(defaults.outcome().message()).isEqualTo(
        "guard rails in force: minMaxAge 1h, allowTerminated false, maxPoliciesPerNamespace 20, maxRulesPerPolicy 50");
    ClusterRails capped = rails("{maxRemovalsPerHourPerNamespace: 10}");
    assertThat(capped.outcome().message()).contains("allowTerminated false, maxRemovalsPerHourPerNamespace 10,");
    assertThat(rails("{maxRulesPerPolicy: 101}").outcome().message()).startsWith("spec.maxRulesPerPolicy: must be between 1 and 100");
    Verdict underCap = judge("team-a", "rules: [{name: failed, states: [Failed], maxAgeAfterFinish: 2h}]",
        "{allowTerminated: true, maxRemovalsPerHourPerNamespace: 10}");
    assertThat(underCap.profile().orElseThrow().maxRemovalsPerHourPerNamespace()).hasValue(10);
    assertThat(judge("team-a", "rules: [{name: failed, states: [Failed], maxAgeAfterFinish: 2h}]", RAILS).profile().orElseThrow()
        .maxRemovalsPerHourPerNamespace()).isEmpty();
    assertThat(rails("{minMaxAge: 1h, allowTerminated: \"yes\"}").outcome())
        .isEqualTo(new CleanupPolicies.Outcome(false, "InvalidSpec", "spec.allowTerminated: must be true or false, got \"yes\""));
    assertThat(rails("{minMaxAge: 1h, maxAge: 2h}").outcome().message()).startsWith("spec.maxAge: unknown field");
  }

  @Test
  void aPolicyWithMoreRulesThanTheRailsAllowIsRejectedUnread() {
    String fiftyOne = "rules: [" + IntStream.range(0, 51).mapToObj(i -> "{name: r" + i + ", maxAge: 2h}").collect(Collectors.joining(", "))
        + "]";
    Verdict v = judge("team-a", fiftyOne, RAILS);
    assertThat(v.outcome()).isEqualTo(new CleanupPolicies.Outcome(false, "TooManyRules",
        "spec.rules: 51 rules, more than the cluster's maxRulesPerPolicy 50"));
    assertThat(judge("team-a", fiftyOne, "{maxRulesPerPolicy: 60}").outcome().accepted()).isTrue();
    assertThat(judge("team-a", "rules: [{name: a, maxAge: 2h}, {name: b, maxAge: 2h}]", "{maxRulesPerPolicy: 1}").outcome().reason())
        .isEqualTo("TooManyRules");
  }

  @Test
  void pastTheRailsPoliciesPerNamespaceTheNewerOnesAreRejectedAndOtherNamespacesAreUntouched() {
    ClusterRails rails = rails("{maxPoliciesPerNamespace: 2}");
    JsonNode spec = yaml("rules: [{name: a, maxAge: 2h}]");
    List<Verdict> verdicts = CleanupPolicies.judgeAll(List.of(new Source("team-a", "oldest", spec), new Source("team-b", "only", spec),
        new Source("team-a", "second", spec), new Source("team-a", "newest", spec)), rails);
    assertThat(verdicts).extracting(v -> v.source().name() + ": " + v.outcome().reason())
        .containsExactly("oldest: Accepted", "only: Accepted", "second: Accepted", "newest: TooManyPolicies");
    assertThat(verdicts.get(3).outcome().message()).isEqualTo("namespace team-a has more than 2 PodCleanupPolicy objects"
        + " (the cluster's maxPoliciesPerNamespace); only the oldest are considered");
    assertThat(verdicts.get(3).profile()).isEmpty();
    assertThat(CleanupPolicies.judgeAll(Collections.nCopies(21, new Source("team-a", "p", spec)), rails("{}")))
        .extracting(v -> v.outcome().reason()).containsOnly("Accepted", "TooManyPolicies").endsWith("TooManyPolicies")
        .filteredOn("Accepted"::equals).hasSize(20);
  }

  @Test
  void aTeamsBudgetCapsItsOwnNamespaceWithTheClustersMinMaxAgeAsItsRetention() {
    Verdict v = judge("team-a", "finishedPodBudget: {maxPods: 200, phases: [Failed]}", RAILS);
    assertThat(v.outcome()).isEqualTo(new CleanupPolicies.Outcome(true, "Accepted",
        "0 rule(s) and a finishedPodBudget of 200 pods in force in namespace team-a"));
    FinishedPodBudget budget = v.budget().orElseThrow();
    assertThat(budget.namespace()).contains("team-a");
    assertThat(budget.name()).isEqualTo("PodCleanupPolicy team-a/cleanup");
    assertThat(budget.rule()).isEqualTo("cleanup/finishedPodBudget");
    assertThat(budget.minRetention()).isEqualTo(Duration.ofHours(1));
    assertThat(budget.phases()).containsExactly(PodState.FAILED);
    // A profile still, with no rules: the budget's removals are the policy's, under its hourly cap.
    assertThat(v.profile().orElseThrow().name()).isEqualTo("PodCleanupPolicy team-a/cleanup");
    assertThat(judge("team-a", "finishedPodBudget: {maxPods: 200, minRetention: 3h, phases: [Succeeded]}", RAILS).budget().orElseThrow()
        .minRetention()).isEqualTo(Duration.ofHours(3));
    assertThat(judge("team-a", "rules: [{name: a, maxAge: 2h}]", RAILS).budget()).isEmpty();
  }

  @Test
  void aNamespaceHasOneBudgetTheOldestPolicysAndARejectedOneDoesNotCount() {
    JsonNode budget = yaml("finishedPodBudget: {maxPods: 200, phases: [Failed]}");
    JsonNode tooShort = yaml("finishedPodBudget: {maxPods: 200, minRetention: 1m, phases: [Failed]}");
    JsonNode rulesOnly = yaml("rules: [{name: a, maxAge: 2h}]");
    List<Verdict> verdicts = CleanupPolicies.judgeAll(List.of(new Source("team-a", "short", tooShort), new Source("team-a", "first", budget),
        new Source("team-a", "rules", rulesOnly), new Source("team-b", "own", budget), new Source("team-a", "second", budget)), rails(RAILS));
    assertThat(verdicts).extracting(v -> v.source().name() + ": " + v.outcome().reason())
        .containsExactly("short: ExceedsGuardRails", "first: Accepted", "rules: Accepted", "own: Accepted", "second: TooManyBudgets");
    assertThat(verdicts.get(4).outcome().message()).isEqualTo("spec.finishedPodBudget: namespace team-a has one already, in"
        + " PodCleanupPolicy first (one per namespace: the oldest policy's counts)");
    assertThat(verdicts.get(4).profile()).isEmpty();
    assertThat(verdicts.get(4).budget()).isEmpty();
  }

  /**
   * Judged again after one team's change, the unchanged policies keep the very verdicts they had (not judged again:
   * a verdict is made anew by every judgement), the changed one is judged anew, and what depends on the others (one
   * budget per namespace) is worked out anew; new guard rails judge every policy again.
   */
  @Test
  void judgedAgainOnlyWhatChanged() {
    JsonNode rules = yaml("rules: [{name: a, maxAge: 2h}]");
    JsonNode budget = yaml("finishedPodBudget: {maxPods: 200, phases: [Failed]}");
    Judgements judgements = new Judgements();
    List<Verdict> first = judgements.judgeAll(List.of(new Source("team-a", "p", rules), new Source("team-b", "p", rules),
        new Source("team-b", "budget", budget)), rails(RAILS));

    List<Verdict> second = judgements.judgeAll(List.of(new Source("team-a", "p", yaml("rules: [{name: a, maxAge: 3h}]")),
        new Source("team-b", "p", rules), new Source("team-b", "budget", budget), new Source("team-b", "another", budget)), rails(RAILS));
    assertThat(second.get(0)).isNotSameAs(first.get(0)).isEqualTo(CleanupPolicies.judge(second.get(0).source(), rails(RAILS)));
    assertThat(second.get(1)).isSameAs(first.get(1));
    assertThat(second.get(2)).isSameAs(first.get(2));
    assertThat(second.get(3).outcome().reason()).isEqualTo("TooManyBudgets");

    List<Verdict> stricter = judgements.judgeAll(List.of(new Source("team-b", "p", rules)), rails("{minMaxAge: 3h}"));
    assertThat(stricter.get(0)).isNotSameAs(second.get(1));
    assertThat(stricter.get(0).outcome().reason()).isEqualTo("ExceedsGuardRails");
  }

  @Test
  void composeAddsTheTeamsBudgetsAfterTheFilesHeldAtLeastAsLongAsTheClustersRetention() {
    Policy file = PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        finishedPodBudget: {maxPods: 5000, minRetention: 2h, phases: [Succeeded, Failed]}
        """, "policy.yaml");
    Verdict shorter = judge("team-b", "finishedPodBudget: {maxPods: 200, minRetention: 90m, phases: [Failed]}", RAILS);
    Verdict longer = judge("team-a", "finishedPodBudget: {maxPods: 100, minRetention: 3h, phases: [Failed]}", RAILS);
    Policy combined = CleanupPolicies.compose(file, List.of(shorter, longer));
    assertThat(combined.finishedPodBudgets()).extracting(b -> b.namespace().orElse("cluster") + " " + b.maxPods() + " "
        + Durations.format(b.minRetention())).containsExactly("cluster 5000 2h", "team-a 100 3h", "team-b 200 2h");
    // Without a cluster budget, a team's stands as judged.
    Policy noBudget = PolicyLoader.parse("apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules: [{name: a, maxAge: 2h}]\n", "p");
    assertThat(CleanupPolicies.compose(noBudget, List.of(shorter)).finishedPodBudgets()).containsExactly(shorter.budget().get());
  }

  @Test
  void composeAddsAcceptedPoliciesInOrderAfterTheFileProfilesAndKeepsTheFileSettings() {
    Policy file = PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        dryRun: true
        limits: {maxTotal: 7}
        rules: [{name: crash, states: [CrashLoopBackOff], maxAge: 2h}]
        """, "policy.yaml");
    Verdict b = judge("team-b", "rules: [{name: a, maxAge: 2h}]", RAILS);
    Verdict a = judge("team-a", "rules: [{name: a, maxAge: 2h}]", RAILS);
    Verdict bad = judge("team-c", "rules: [{name: a, maxAge: 1m}]", RAILS);
    Policy combined = CleanupPolicies.compose(file, List.of(b, bad, a));
    assertThat(combined.profiles()).extracting(Profile::name)
        .containsExactly(Profile.NATIVE_RULES, "PodCleanupPolicy team-a/cleanup", "PodCleanupPolicy team-b/cleanup");
    assertThat(combined.dryRun()).isTrue();
    assertThat(combined.limits()).isEqualTo(file.limits());
    assertThat(combined.guard()).isEqualTo(file.guard());
    assertThat(CleanupPolicies.compose(file, List.of(bad))).isEqualTo(file);
  }
}
