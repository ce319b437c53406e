package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.policy.PodState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Podsweeper's own lifetime rules, as pure functions over pod records. */
class PodLifeTimeTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static PolicyEvaluator policy(String rules) {
    Policy p = PolicyLoader.parse("apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules:\n" + rules.stripIndent(), "test");
    return new PolicyEvaluator(p);
  }

  private static Optional<Verdict> evaluate(PolicyEvaluator e, PodRecord pod, NamespaceRecord... namespaces) {
    return e.evaluate(pod, ClusterSnapshot.of(List.of(pod), List.of(namespaces), List.of()));
  }

  /** A pod in exactly this state, where the state lives (phase, pod reason, container reason). */
  private static PodRecord podIn(PodState state) {
    PodFixtures.PodBuilder b = pod("p").created(T0);
    return switch (state.kind()) {
      case PHASE -> b.phase(state.wireName()).build();
      case POD_REASON -> b.phase("Failed").reason(state.wireName()).build();
      case WAITING_REASON -> b.phase("Running").container(PodFixtures.waiting("c", state.wireName(), 0)).build();
      case TERMINATED_REASON -> b.phase(state.terminal() ? "Failed" : "Running").container(PodFixtures.terminatedAt("c", state.wireName(), 1, T0.plusSeconds(5))).build();
    };
  }

  @ParameterizedTest
  @EnumSource(PodState.class)
  void everyStateMatchesAPodInItAndNotOthers(PodState state) {
    PolicyEvaluator e = policy("  - {name: r, states: [" + state.wireName() + "]}\n");
    assertThat(evaluate(e, podIn(state))).isPresent();
    PodState other = state == PodState.RUNNING ? PodState.PENDING : PodState.RUNNING;
    assertThat(evaluate(e, pod("q").created(T0).phase(other.wireName()).build()))
        .as("a %s pod is not in state %s", other, state).isEmpty();
  }

  @Test
  void finishedPodsNeedAnExplicitOptIn() {
    PodRecord failed = pod("f").created(T0).phase("Failed").container(PodFixtures.waiting("c", "CrashLoopBackOff", 0)).build();
    PodRecord succeeded = pod("s").created(T0).phase("Succeeded").container(PodFixtures.terminatedAt("c", "Completed", 0, T0)).build();
    PolicyEvaluator ageOnly = policy("  - {name: r, maxAge: 1s}\n");
    assertThat(evaluate(ageOnly, failed)).isEmpty();
    assertThat(evaluate(ageOnly, succeeded)).isEmpty();
    assertThat(evaluate(policy("  - {name: r, states: [CrashLoopBackOff]}\n"), failed)).isEmpty();
    assertThat(evaluate(policy("  - {name: r, states: [Failed]}\n"), failed)).isPresent();
    assertThat(evaluate(policy("  - {name: r, states: [Completed]}\n"), succeeded)).isPresent();
    PodRecord evicted = pod("e").created(T0).phase("Failed").reason("Evicted").build();
    assertThat(evaluate(policy("  - {name: r, states: [Evicted]}\n"), evicted)).isPresent();
  }

  @Test
  void ageFromCreationIsStrictlyOlderThan() {
    PolicyEvaluator e = policy("  - {name: r, states: [Running], maxAge: 1h}\n");
    Verdict v = evaluate(e, pod("p").created(T0).build()).orElseThrow();
    assertThat(v.dueAt()).isEqualTo(T0.plus(Duration.ofHours(1)));
    assertThat(v.isDue(T0.plus(Duration.ofHours(1)))).isFalse();
    assertThat(v.isDue(T0.plus(Duration.ofHours(1)).plusMillis(1))).isTrue();
  }

  @Test
  void ageAfterFinishCountsFromTheLatestContainerFinish() {
    PolicyEvaluator e = policy("  - {name: r, states: [Failed], maxAgeAfterFinish: 1h}\n");
    PodRecord twoContainers = pod("p").created(T0).phase("Failed")
        .container(PodFixtures.terminatedAt("c", "Error", 1, T0.plusSeconds(60))).container(PodFixtures.terminatedAt("c", "Error", 1, T0.plusSeconds(600))).build();
    assertThat(evaluate(e, twoContainers).orElseThrow().dueAt()).isEqualTo(T0.plusSeconds(600 + 3600));
    PodRecord noContainers = pod("q").created(T0).phase("Failed").build();
    assertThat(evaluate(e, noContainers).orElseThrow().dueAt()).isEqualTo(T0.plusSeconds(3600));
  }

  /**
   * The operator's report: a pod the kubelet evicted ten minutes ago after a week of running. Its container ended as
   * ContainerStatusUnknown without a finishedAt, and its init container finished a week ago: neither creation nor that
   * init container says when the pod ended; the DisruptionTarget condition does.
   */
  @Test
  void aKubeletEvictedPodIsAgedFromItsDisruptionNotFromCreation() {
    PolicyEvaluator e = policy("  - {name: kubelet-evicted, states: [Evicted], maxAgeAfterFinish: 6h}\n");
    Instant created = T0.minus(Duration.ofDays(7));
    Instant disrupted = T0.minus(Duration.ofMinutes(10));
    PodRecord evicted = pod("p").created(created).phase("Failed").reason("Evicted")
        .container(new ContainerStatus("init", ContainerStatus.Kind.INIT, Optional.empty(), Optional.of("Completed"),
            OptionalInt.of(0), Optional.of(created.plusSeconds(5)), 0))
        .container(PodFixtures.statusUnknown("main"))
        .condition("DisruptionTarget", "True", "TerminationByKubelet", disrupted)
        .condition("Ready", "False", "PodFailed", disrupted)
        .build();
    Verdict v = evaluate(e, evicted).orElseThrow();
    assertThat(v.dueAt()).isEqualTo(disrupted.plus(Duration.ofHours(6)));
    assertThat(v.isDue(T0)).isFalse();
    assertThat(v.decide(evicted, disrupted.plus(Duration.ofHours(7))).reason())
        .isEqualTo("Failed (reason Evicted), ended by TerminationByKubelet and KubeletEviction, finished 7h ago (DisruptionTarget condition);"
            + " rule kubelet-evicted allows 6h after finish");
  }

  /** Without any record of its end, a pod is aged from the newest timestamp it has, creation only when nothing is newer. */
  @Test
  void aPodWithoutEvidenceOfItsEndIsAgedFromItsNewestTimestamp() {
    PolicyEvaluator e = policy("  - {name: kubelet-evicted, states: [Evicted], maxAgeAfterFinish: 6h}\n");
    Instant created = T0.minus(Duration.ofDays(7));
    PodFixtures.PodBuilder lost = pod("p").created(created).phase("Failed").reason("Evicted").container(PodFixtures.statusUnknown("main"))
        .condition("PodScheduled", "True", null, created.plusSeconds(1));
    PodRecord started = lost.started(created.plus(Duration.ofHours(1))).build();
    Verdict v = evaluate(e, started).orElseThrow();
    assertThat(v.dueAt()).isEqualTo(created.plus(Duration.ofHours(1 + 6)));
    assertThat(v.decide(started, T0).reason()).contains("finished 6d23h ago (no finish recorded: start time)");

    PodRecord onlyCreated = pod("q").created(created).phase("Failed").reason("Evicted").container(PodFixtures.statusUnknown("main")).build();
    Verdict fromCreation = evaluate(e, onlyCreated).orElseThrow();
    assertThat(fromCreation.dueAt()).isEqualTo(created.plus(Duration.ofHours(6)));
    assertThat(fromCreation.decide(onlyCreated, T0).reason()).contains("finished 7d ago (no finish recorded: creation)");
  }

  @Test
  void bothAgesTakeTheLaterDeadline() {
    PolicyEvaluator e = policy("  - {name: r, states: [Failed], maxAge: 3h, maxAgeAfterFinish: 1h}\n");
    PodRecord p = pod("p").created(T0).phase("Failed").container(PodFixtures.terminatedAt("c", "Error", 1, T0.plusSeconds(60))).build();
    assertThat(evaluate(e, p).orElseThrow().dueAt()).isEqualTo(T0.plus(Duration.ofHours(3)));
  }

  @Test
  void theEarliestRuleWins() {
    PolicyEvaluator e = policy("  - {name: slow, states: [Running], maxAge: 3h}\n  - {name: fast, states: [Running], maxAge: 1h}\n");
    assertThat(evaluate(e, pod("p").created(T0).build()).orElseThrow().rule()).isEqualTo("fast");
  }

  @Test
  void terminatingMirrorAndStaticPodsAreNeverMatched() {
    PolicyEvaluator e = policy("  - {name: r, states: [Running]}\n");
    assertThat(evaluate(e, pod("t").created(T0).terminating().build())).isEmpty();
    assertThat(evaluate(e, pod("m").created(T0).annotation("kubernetes.io/config.mirror", "x").build())).isEmpty();
    assertThat(evaluate(e, pod("s").created(T0).annotation("kubernetes.io/config.source", "file").build())).isEmpty();
    assertThat(evaluate(e, pod("a").created(T0).annotation("kubernetes.io/config.source", "api").build())).isPresent();
  }

  @Test
  void theProtectAnnotationOnAPodOrItsNamespaceWinsOverEveryStrategy() {
    PolicyEvaluator e = policy("  - {name: r, states: [Running]}\n");
    assertThat(evaluate(e, pod("p").created(T0).annotation("podsweeper.io/protect", "true").build())).isEmpty();
    assertThat(evaluate(e, pod("p").ns("safe").created(T0).build(), new NamespaceRecord("safe", Map.of(), true))).isEmpty();
    assertThat(evaluate(e, pod("p").created(T0).annotation("podsweeper.io/protect", "false").build())).isPresent();
    Policy upstream = PolicyLoader.parse("""
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerPolicy
        profiles:
          - name: p
            pluginConfig: [{name: PodLifeTime, args: {states: [Running]}}]
            plugins: {deschedule: {enabled: [PodLifeTime]}}
        """, "upstream");
    PodRecord annotated = pod("p").created(T0).on("n1").annotation("podsweeper.io/protect", "true")
        .annotation("descheduler.alpha.kubernetes.io/evict", "true").build();
    var view = ClusterSnapshot.of(List.of(annotated), List.of(), List.of(PodFixtures.node("n1").build()));
    assertThat(new PolicyEvaluator(upstream).evaluate(annotated, view)).as("even over upstream's evict annotation").isEmpty();
  }

  @Test
  void upstreamsEvictAnnotationNeverLetsARuleTouchAMirrorStaticOrTerminatingPod() {
    PolicyEvaluator e = policy("  - {name: r, states: [Running], maxAge: 1h}\n");
    String evict = "descheduler.alpha.kubernetes.io/evict";
    assertThat(evaluate(e, pod("mirror").created(T0).annotation("kubernetes.io/config.mirror", "x").annotation(evict, "").build())).isEmpty();
    assertThat(evaluate(e, pod("static").created(T0).annotation("kubernetes.io/config.source", "file").annotation(evict, "").build())).isEmpty();
    assertThat(evaluate(e, pod("terminating").created(T0).terminating().annotation(evict, "").build())).isEmpty();
    assertThat(evaluate(e, pod("plain").created(T0).annotation(evict, "").build())).isPresent();
  }

  @Test
  void keepLastKeepsTheNewestFinishedPodsOfEachOwner() {
    PolicyEvaluator e = policy("  - {name: history, states: [Succeeded], keepLast: 2}\n");
    List<PodRecord> pods = new java.util.ArrayList<>();
    // Five runs of CronJob "nightly" (each its own Job), finished an hour apart, and three runs of a plain Job.
    for (int i = 0; i < 5; i++) {
      pods.add(pod("nightly-" + i).created(T0).phase("Succeeded").ownedBy("Job", "nightly-2945" + (1000 + i) + "0")
          .container(PodFixtures.terminatedAt("c", "Completed", 0, T0.plusSeconds(3600L * i))).build());
    }
    for (int i = 0; i < 3; i++) {
      pods.add(pod("import-" + i).created(T0).phase("Succeeded").ownedBy("Job", "import")
          .container(PodFixtures.terminatedAt("c", "Completed", 0, T0.plusSeconds(60L * i))).build());
    }
    pods.add(pod("failed").created(T0).phase("Failed").ownedBy("Job", "import").build());
    ClusterSnapshot view = ClusterSnapshot.of(pods, List.of(), List.of());
    List<Decision> decisions = e.plan(view, T0.plusSeconds(86_400));
    assertThat(decisions).extracting(Decision::name).containsExactlyInAnyOrder("nightly-0", "nightly-1", "nightly-2", "import-0");
    assertThat(decisions).filteredOn(d -> d.name().equals("nightly-0")).first()
        .satisfies(d -> assertThat(d.reason()).contains("number 5 of 5 of CronJob/nightly by finish time, rule keeps 2"));

    PolicyEvaluator perNamespace = policy("  - {name: history, states: [Succeeded], keepLast: 6, keepPer: namespace}\n");
    // Of the namespace's 8, the two that finished first (at T0, a tie broken by name) go.
    assertThat(perNamespace.plan(view, T0.plusSeconds(86_400))).extracting(Decision::name).containsExactlyInAnyOrder("import-0", "nightly-0");
  }

  /** Seen, and evicted by a rule that opts in to evicting bare pods (RuleProtectionsTest: the others keep them). */
  @Test
  void bareAndUnscheduledPodsAreSeen() {
    PolicyEvaluator e = policy("  - {name: r, states: [Pending], maxAge: 1m, evict: [BarePods]}\n");
    Verdict v = evaluate(e, pod("p").created(T0).bare().unscheduled().build()).orElseThrow();
    assertThat(v.decide(pod("p").created(T0).bare().unscheduled().build(), T0.plusSeconds(120)).reason())
        .isEqualTo("Pending with no node, age 2m; rule r allows 1m");
  }

  @Test
  void namespaceGlobsAndSelectors() {
    PolicyEvaluator globs = policy("  - {name: r, states: [Running], namespaces: {include: [\"ci-*\", \"build-?\"], exclude: [ci-prod]}}\n");
    assertThat(evaluate(globs, pod("p").ns("ci-main").created(T0).build())).isPresent();
    assertThat(evaluate(globs, pod("p").ns("build-7").created(T0).build())).isPresent();
    assertThat(evaluate(globs, pod("p").ns("build-77").created(T0).build())).isEmpty();
    assertThat(evaluate(globs, pod("p").ns("ci-prod").created(T0).build())).isEmpty();
    assertThat(evaluate(globs, pod("p").ns("web").created(T0).build())).isEmpty();

    PolicyEvaluator nsSel = policy("  - {name: r, states: [Running], namespaceSelector: {matchLabels: {team: data}}}\n");
    assertThat(evaluate(nsSel, pod("p").ns("a").created(T0).build(), new NamespaceRecord("a", Map.of("team", "data")))).isPresent();
    assertThat(evaluate(nsSel, pod("p").ns("b").created(T0).build(), new NamespaceRecord("b", Map.of("team", "web")))).isEmpty();
    PolicyEvaluator byName = policy("  - {name: r, states: [Running], namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: c}}}\n");
    assertThat(evaluate(byName, pod("p").ns("c").created(T0).build())).as("an unseen namespace has its name label").isPresent();
  }

  @Test
  void podSelectorOperators() {
    String rule = "  - name: r\n    states: [Running]\n    podSelector:\n      matchLabels: {app: api}\n      matchExpressions:\n"
        + "        - {key: tier, operator: In, values: [a, b]}\n        - {key: env, operator: NotIn, values: [prod]}\n"
        + "        - {key: owner, operator: Exists}\n        - {key: keep, operator: DoesNotExist}\n";
    PolicyEvaluator e = policy(rule);
    PodFixtures.PodBuilder matching = pod("p").created(T0).label("app", "api").label("tier", "a").label("owner", "me");
    assertThat(evaluate(e, matching.build())).isPresent();
    assertThat(evaluate(e, pod("p").created(T0).label("app", "api").label("tier", "c").label("owner", "me").build())).isEmpty();
    assertThat(evaluate(e, pod("p").created(T0).label("app", "api").label("tier", "a").label("owner", "me").label("env", "prod").build())).isEmpty();
    assertThat(evaluate(e, pod("p").created(T0).label("app", "api").label("tier", "a").build())).isEmpty();
    assertThat(evaluate(e, pod("p").created(T0).label("app", "api").label("tier", "a").label("owner", "me").label("keep", "1").build())).isEmpty();
    assertThat(evaluate(e, pod("p").created(T0).label("app", "web").label("tier", "a").label("owner", "me").build())).isEmpty();
  }

  @Test
  void reasonAndActionOfADecision() {
    PolicyEvaluator e = policy("  - {name: ci-cleanup, states: [Failed], maxAgeAfterFinish: 1h}\n");
    Instant finished = T0.plusSeconds(60);
    PodRecord failed = pod("p").created(T0).phase("Failed").container(PodFixtures.terminatedAt("c", "Error", 1, finished)).build();
    Decision d = evaluate(e, failed).orElseThrow().decide(failed, finished.plus(Duration.ofMinutes(133)));
    assertThat(d.reason()).isEqualTo("Failed, finished 2h13m ago; rule ci-cleanup allows 1h after finish");
    assertThat(d.action()).isEqualTo(Action.DELETE);
    PodRecord running = pod("r").created(T0).container(PodFixtures.waiting("c", "CrashLoopBackOff", 0)).build();
    assertThat(Decision.of(running, "PodLifeTime", "p", "r", "x", T0).action()).isEqualTo(Action.EVICT);
  }
}
