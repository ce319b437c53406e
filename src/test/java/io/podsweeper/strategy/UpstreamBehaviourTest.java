package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.NOW;
import static io.podsweeper.cluster.PodFixtures.node;
import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.cluster.PodFixtures.running;
import static io.podsweeper.cluster.PodFixtures.terminated;
import static io.podsweeper.cluster.PodFixtures.waiting;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PvcRecord;
import io.podsweeper.policy.LabelSelector;
import io.podsweeper.policy.PolicyLoader;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The upstream descheduler v0.36 behaviours (shared/reference/upstream-behaviour.md sections 2-4), one test each: a
 * small {@code descheduler/v1alpha2} policy planned over a small snapshot, asserting exactly which pods are decided
 * and by which strategy. Unless a test says otherwise, nodes {@code node-a} and {@code node-b} are Ready and pods are
 * Running, owned by a ReplicaSet and scheduled on {@code node-a}.
 */
class UpstreamBehaviourTest {
  private static final String PLT = "PodLifeTime";
  private static final String RFP = "RemoveFailedPods";
  private static final String TMR = "RemovePodsHavingTooManyRestarts";

  // ---------------------------------------------------------------------------------------------------------------
  // Harness

  /** A one-profile policy: top-level fields, DefaultEvictor args and one deschedule plugin with its args. */
  static String policy(String topLevel, String evictorArgs, String plugin, String pluginArgs) {
    return """
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerPolicy
        %s
        profiles:
          - name: p
            pluginConfig:
              - name: DefaultEvictor
                args:%s
              - name: %s
                args:%s
            plugins:
              deschedule:
                enabled: [%s]
        """.formatted(topLevel, args(evictorArgs), plugin, args(pluginArgs), plugin);
  }

  private static String args(String yaml) {
    return yaml.isBlank() ? " {}" : "\n" + yaml.indent(12).stripTrailing();
  }

  static String policy(String plugin, String pluginArgs) {
    return policy("", "", plugin, pluginArgs);
  }

  static String evicting(String evictorArgs, String plugin, String pluginArgs) {
    return policy("", evictorArgs, plugin, pluginArgs);
  }

  static List<NodeRecord> twoNodes() {
    return List.of(node("node-a").build(), node("node-b").build());
  }

  /** "namespace/name strategy" of every decision of one pass at {@link PodFixtures#NOW}, in decision order. */
  static List<String> decided(String yaml, ClusterSnapshot snapshot) {
    return new PolicyEvaluator(PolicyLoader.parse(yaml, "test.yaml")).plan(snapshot, NOW).stream()
        .map(d -> d.podKey() + " " + d.strategy())
        .toList();
  }

  static List<String> decided(String yaml, PodRecord... pods) {
    return decided(yaml, ClusterSnapshot.of(List.of(pods), List.of(), twoNodes()));
  }

  static List<String> decided(String yaml, List<NodeRecord> nodes, PodRecord... pods) {
    return decided(yaml, ClusterSnapshot.of(List.of(pods), List.of(), nodes));
  }

  static String d(String name, String strategy) {
    return "default/" + name + " " + strategy;
  }

  // ---------------------------------------------------------------------------------------------------------------

  @Nested
  class PodLifeTimeArgs {
    @Test
    void ageEqualToMaxIsNotEvictedOneSecondOlderIs() {
      assertThat(decided(policy(PLT, "maxPodLifeTimeSeconds: 3600"),
          pod("equal").ageSeconds(3600).build(),
          pod("older").ageSeconds(3601).build(),
          pod("younger").ageSeconds(3599).build()))
          .containsExactly(d("older", PLT));
    }

    /** Upstream truncates the age to whole seconds before comparing: 3600.9 s is 3600, not greater than 3600. */
    @Test
    void ageIsComparedInWholeSeconds() {
      assertThat(decided(policy(PLT, "maxPodLifeTimeSeconds: 3600"),
          pod("fraction-over").age(Duration.ofSeconds(3600).plusMillis(900)).build(),
          pod("next-second").age(Duration.ofSeconds(3601)).build()))
          .containsExactly(d("next-second", PLT));
    }

    @Test
    void creationInTheFutureIsNeverEligible() {
      assertThat(decided(policy(PLT, "maxPodLifeTimeSeconds: 0"),
          pod("future").created(NOW.plusSeconds(30)).build(),
          pod("past").ageSeconds(1).build()))
          .containsExactly(d("past", PLT));
    }

    @Test
    void statesMatchThePodPhase() {
      assertThat(decided(policy(PLT, "states: [Pending]"),
          pod("pending").ageSeconds(10).phase("Pending").containers(waiting("main", "ContainerCreating", 0)).build(),
          pod("running").ageSeconds(10).build()))
          .containsExactly(d("pending", PLT));
    }

    /** Category-blind: "Evicted" (a terminated reason) also matches a kubelet-evicted pod's status.reason. */
    @Test
    void statesMatchThePodStatusReason() {
      assertThat(decided(policy(PLT, "states: [NodeLost, Evicted]"),
          pod("node-lost").ageSeconds(10).phase("Unknown").reason("NodeLost").build(),
          pod("kubelet-evicted").ageSeconds(10).phase("Failed").reason("Evicted").containers().build(),
          pod("other-reason").ageSeconds(10).phase("Failed").reason("UnexpectedAdmissionError").containers().build()))
          .containsExactlyInAnyOrder(d("node-lost", PLT), d("kubelet-evicted", PLT));
    }

    @Test
    void statesMatchAMainContainerWaitingReason() {
      assertThat(decided(policy(PLT, "states: [CrashLoopBackOff, ImagePullBackOff]"),
          pod("crashloop").ageSeconds(30).containers(running("a"), waiting("b", "CrashLoopBackOff", 4)).build(),
          pod("image").ageSeconds(20).phase("Pending").containers(waiting("main", "ImagePullBackOff", 0)).build(),
          pod("creating").ageSeconds(10).phase("Pending").containers(waiting("main", "ContainerCreating", 0)).build()))
          .containsExactly(d("crashloop", PLT), d("image", PLT));
    }

    @Test
    void statesMatchAMainContainerTerminatedReason() {
      assertThat(decided(policy(PLT, "states: [OOMKilled]"),
          pod("oom").ageSeconds(10).containers(running("a"), terminated("b", "OOMKilled", 137)).build(),
          pod("error").ageSeconds(10).containers(terminated("main", "Error", 1)).build()))
          .containsExactly(d("oom", PLT));
    }

    @Test
    void includingInitContainersWidensStatesToInitContainers() {
      PodRecord initCrash = pod("init-crash").ageSeconds(10).phase("Pending")
          .containers(waiting("init", ContainerStatus.Kind.INIT, "CrashLoopBackOff", 3),
              waiting("main", "PodInitializing", 0))
          .build();
      assertThat(decided(policy(PLT, "states: [CrashLoopBackOff]"), initCrash)).isEmpty();
      assertThat(decided(policy(PLT, "states: [CrashLoopBackOff]\nincludingInitContainers: true"), initCrash))
          .containsExactly(d("init-crash", PLT));
    }

    @Test
    void includingEphemeralContainersWidensStatesToEphemeralContainers() {
      PodRecord debug = pod("debugged").ageSeconds(10)
          .containers(running("main"), terminated("debugger", ContainerStatus.Kind.EPHEMERAL, "Error", 1))
          .build();
      assertThat(decided(policy(PLT, "states: [Error]"), debug)).isEmpty();
      assertThat(decided(policy(PLT, "states: [Error]\nincludingInitContainers: true"), debug)).isEmpty();
      assertThat(decided(policy(PLT, "states: [Error]\nincludingEphemeralContainers: true"), debug))
          .containsExactly(d("debugged", PLT));
    }

    @Test
    void conditionsMatchTypeStatusAndReasonOnTheSameCondition() {
      String args = """
          conditions:
            - type: DisruptionTarget
              status: "True"
              reason: TerminationByKubelet
          """;
      assertThat(decided(policy(PLT, args),
          pod("match").ageSeconds(10).condition("DisruptionTarget", "True", "TerminationByKubelet", NOW).build(),
          pod("other-reason").ageSeconds(10).condition("DisruptionTarget", "True", "PreemptionByScheduler", NOW).build(),
          pod("false").ageSeconds(10).condition("DisruptionTarget", "False", "TerminationByKubelet", NOW).build(),
          // the fields match, but on two different conditions
          pod("split").ageSeconds(10).condition("DisruptionTarget", "False", null, NOW)
              .condition("Ready", "True", "TerminationByKubelet", NOW).build(),
          pod("none").ageSeconds(10).build()))
          .containsExactly(d("match", PLT));
    }

    @Test
    void conditionsOrAcrossFilters() {
      String args = """
          conditions:
            - {type: PodScheduled, status: "False"}
            - {reason: Unschedulable}
          """;
      assertThat(decided(policy(PLT, args),
          pod("first").ageSeconds(30).condition("PodScheduled", "False", "SchedulingGated", NOW).build(),
          pod("second").ageSeconds(20).condition("Ready", "False", "Unschedulable", NOW).build(),
          pod("neither").ageSeconds(10).condition("PodScheduled", "True", null, NOW).build()))
          .containsExactly(d("first", PLT), d("second", PLT));
    }

    @Test
    void minTimeSinceLastTransitionIsInclusive() {
      String args = """
          conditions:
            - {type: Ready, status: "False", minTimeSinceLastTransitionSeconds: 300}
          """;
      assertThat(decided(policy(PLT, args),
          pod("exactly").ageSeconds(1000).condition("Ready", "False", null, NOW.minusSeconds(300)).build(),
          pod("older").ageSeconds(1000).condition("Ready", "False", null, NOW.minusSeconds(301)).build(),
          pod("younger").ageSeconds(1000).condition("Ready", "False", null, NOW.minusSeconds(299)).build()))
          .containsExactlyInAnyOrder(d("exactly", PLT), d("older", PLT));
    }

    @Test
    void missingLastTransitionTimeNeverMatchesAMinTime() {
      String args = """
          conditions:
            - {type: Ready, minTimeSinceLastTransitionSeconds: 1}
          """;
      assertThat(decided(policy(PLT, args),
          pod("no-time").ageSeconds(100_000).condition("Ready", "False", null, null).build(),
          pod("with-time").ageSeconds(100_000).condition("Ready", "False", null, NOW.minusSeconds(5)).build()))
          .containsExactly(d("with-time", PLT));
    }

    @Test
    void exitCodesMatchTerminatedMainContainers() {
      assertThat(decided(policy(PLT, "states: [Failed]\nexitCodes: [137, 143]"),
          pod("killed").ageSeconds(10).phase("Failed").containers(terminated("main", "Error", 137)).build(),
          pod("plain-error").ageSeconds(10).phase("Failed").containers(terminated("main", "Error", 1)).build(),
          pod("init-killed").ageSeconds(10).phase("Failed")
              .containers(terminated("init", ContainerStatus.Kind.INIT, "Error", 143), terminated("main", "Error", 2))
              .build()))
          .containsExactly(d("killed", PLT));
    }

    @Test
    void exitCodesIncludeInitContainersWithTheFlag() {
      assertThat(decided(policy(PLT, "states: [Failed]\nexitCodes: [143]\nincludingInitContainers: true"),
          pod("init-killed").ageSeconds(10).phase("Failed")
              .containers(terminated("init", ContainerStatus.Kind.INIT, "Error", 143), terminated("main", "Error", 2))
              .build()))
          .containsExactly(d("init-killed", PLT));
    }

    @Test
    void ownerKindsIncludeNeedsAListedKind() {
      assertThat(decided(policy(PLT, "maxPodLifeTimeSeconds: 60\nownerKinds: {include: [Job]}"),
          pod("job").ageSeconds(120).ownedBy("Job", "j").build(),
          pod("rs").ageSeconds(120).build()))
          .containsExactly(d("job", PLT));
    }

    @Test
    void ownerKindsExcludeRejectsAListedKind() {
      assertThat(decided(policy(PLT, "maxPodLifeTimeSeconds: 60\nownerKinds: {exclude: [ReplicaSet]}"),
          pod("job").ageSeconds(120).ownedBy("Job", "j").build(),
          pod("rs").ageSeconds(120).build()))
          .containsExactly(d("job", PLT));
    }

    @Test
    void namespacesInclude() {
      assertThat(decided(policy(PLT, "maxPodLifeTimeSeconds: 60\nnamespaces: {include: [ci]}"),
          pod("in").ns("ci").ageSeconds(120).build(),
          pod("out").ns("prod").ageSeconds(120).build()))
          .containsExactly("ci/in " + PLT);
    }

    @Test
    void namespacesExclude() {
      assertThat(decided(policy(PLT, "maxPodLifeTimeSeconds: 60\nnamespaces: {exclude: [prod]}"),
          pod("in").ns("ci").ageSeconds(120).build(),
          pod("out").ns("prod").ageSeconds(120).build()))
          .containsExactly("ci/in " + PLT);
    }

    @Test
    void labelSelector() {
      String args = """
          maxPodLifeTimeSeconds: 60
          labelSelector:
            matchLabels: {app: web}
            matchExpressions:
              - {key: keep, operator: DoesNotExist}
          """;
      assertThat(decided(policy(PLT, args),
          pod("web").ageSeconds(120).label("app", "web").build(),
          pod("web-keep").ageSeconds(120).label("app", "web").label("keep", "yes").build(),
          pod("db").ageSeconds(120).label("app", "db").build()))
          .containsExactly(d("web", PLT));
    }

    @Test
    void candidatesAreTakenOldestFirstAcrossNodes() {
      assertThat(decided(policy(PLT, "maxPodLifeTimeSeconds: 60"),
          pod("new").on("node-a").ageSeconds(200).build(),
          pod("old").on("node-b").ageSeconds(500).build(),
          pod("mid").on("node-a").ageSeconds(300).build()))
          .containsExactly(d("old", PLT), d("mid", PLT), d("new", PLT));
    }

    @Test
    void oldestIsChosenUnderATotalLimitOfOne() {
      assertThat(decided(policy("maxNoOfPodsToEvictTotal: 1", "", PLT, "maxPodLifeTimeSeconds: 60"),
          pod("new").on("node-a").ageSeconds(200).build(),
          pod("old").on("node-b").ageSeconds(500).build(),
          pod("mid").on("node-a").ageSeconds(300).build()))
          .containsExactly(d("old", PLT));
    }

    @Test
    void podsOnNotReadyOrUnknownNodesAndUnscheduledPodsAreNotConsidered() {
      List<NodeRecord> nodes = List.of(node("node-a").build(), node("node-b").notReady().build());
      assertThat(decided(policy(PLT, "maxPodLifeTimeSeconds: 60"), nodes,
          pod("ready").on("node-a").ageSeconds(120).build(),
          pod("not-ready").on("node-b").ageSeconds(120).build(),
          pod("gone-node").on("node-x").ageSeconds(120).build(),
          pod("unscheduled").unscheduled().ageSeconds(120).build()))
          .containsExactly(d("ready", PLT));
    }

    @Test
    void topLevelNodeSelectorRestrictsTheNodes() {
      List<NodeRecord> nodes = List.of(node("node-a").label("pool", "batch").build(),
          node("node-b").label("pool", "system").build(), node("node-c").build());
      assertThat(decided(policy("nodeSelector: pool in (batch)", "", PLT, "maxPodLifeTimeSeconds: 60"), nodes,
          pod("batch").on("node-a").ageSeconds(120).build(),
          pod("system").on("node-b").ageSeconds(120).build(),
          pod("unlabelled").on("node-c").ageSeconds(120).build()))
          .containsExactly(d("batch", PLT));
    }

    /**
     * Deliberate difference from upstream: upstream's PodLifeTime lists all phases, so an age-only rule also evicts
     * old Succeeded/Failed pods. Podsweeper removes a finished pod only when the rule names a finished state
     * (README "Finished pods need an explicit opt-in"), in the v1alpha2 format too.
     */
    @Test
    void differenceFromUpstream_ageOnlyRuleNeverRemovesFinishedPods() {
      assertThat(decided(policy(PLT, "maxPodLifeTimeSeconds: 60"),
          pod("failed").ageSeconds(7200).phase("Failed").ownedBy("Job", "j1").containers(terminated("main", "Error", 1)).build(),
          pod("succeeded").ageSeconds(7200).phase("Succeeded").ownedBy("Job", "j2")
              .containers(terminated("main", "Completed", 0)).build(),
          pod("running").ageSeconds(7200).build()))
          .containsExactly(d("running", PLT));
      // naming the finished state opts in
      assertThat(decided(policy(PLT, "maxPodLifeTimeSeconds: 60\nstates: [Failed]"),
          pod("failed").ageSeconds(7200).phase("Failed").ownedBy("Job", "j1").containers(terminated("main", "Error", 1)).build()))
          .containsExactly(d("failed", PLT));
    }
  }

  // ---------------------------------------------------------------------------------------------------------------

  @Nested
  class RemoveFailedPodsArgs {
    @Test
    void onlyFailedPods() {
      assertThat(decided(policy(RFP, "minPodLifetimeSeconds: 0"),
          pod("failed").ageSeconds(10).phase("Failed").containers(terminated("main", "Error", 1)).build(),
          pod("succeeded").ageSeconds(10).phase("Succeeded").containers(terminated("main", "Completed", 0)).build(),
          pod("crashing").ageSeconds(10).containers(waiting("main", "CrashLoopBackOff", 9)).build(),
          pod("pending").ageSeconds(10).phase("Pending").build()))
          .containsExactly(d("failed", RFP));
    }

    @Test
    void minPodLifetimeDefaultsTo3600InclusiveWhenArgsAreEmpty() {
      assertThat(decided(policy(RFP, ""),
          pod("exactly-hour").ageSeconds(3600).phase("Failed").build(),
          pod("almost-hour").ageSeconds(3599).phase("Failed").build()))
          .containsExactly(d("exactly-hour", RFP));
    }

    @Test
    void minPodLifetimeSecondsIsInclusive() {
      assertThat(decided(policy(RFP, "minPodLifetimeSeconds: 60"),
          pod("exactly").ageSeconds(60).phase("Failed").build(),
          pod("younger").ageSeconds(59).phase("Failed").build()))
          .containsExactly(d("exactly", RFP));
    }

    @Test
    void reasonsMatchContainerWaitingAndTerminatedReasonsAndThePodReason() {
      String args = """
          minPodLifetimeSeconds: 0
          reasons: [Evicted, OOMKilled, CreateContainerConfigError]
          """;
      assertThat(decided(policy(RFP, args),
          pod("a-pod-reason").ageSeconds(10).phase("Failed").reason("Evicted").containers().build(),
          pod("b-terminated").ageSeconds(10).phase("Failed").containers(terminated("main", "OOMKilled", 137)).build(),
          pod("c-waiting").ageSeconds(10).phase("Failed").containers(waiting("main", "CreateContainerConfigError", 0)).build(),
          pod("d-other").ageSeconds(10).phase("Failed").containers(terminated("main", "Error", 1)).build(),
          pod("e-init-only").ageSeconds(10).phase("Failed")
              .containers(terminated("init", ContainerStatus.Kind.INIT, "OOMKilled", 137)).build()))
          .containsExactly(d("a-pod-reason", RFP), d("b-terminated", RFP), d("c-waiting", RFP));
    }

    @Test
    void includingInitContainersMatchesInitContainerReasonsAndExitCodes() {
      PodRecord initOom = pod("init-oom").ageSeconds(10).phase("Failed")
          .containers(terminated("init", ContainerStatus.Kind.INIT, "OOMKilled", 137)).build();
      assertThat(decided(policy(RFP, "minPodLifetimeSeconds: 0\nreasons: [OOMKilled]\nincludingInitContainers: true"), initOom))
          .containsExactly(d("init-oom", RFP));
      assertThat(decided(policy(RFP, "minPodLifetimeSeconds: 0\nexitCodes: [137]"), initOom)).isEmpty();
      assertThat(decided(policy(RFP, "minPodLifetimeSeconds: 0\nexitCodes: [137]\nincludingInitContainers: true"), initOom))
          .containsExactly(d("init-oom", RFP));
    }

    @Test
    void excludeOwnerKinds() {
      assertThat(decided(policy(RFP, "minPodLifetimeSeconds: 0\nexcludeOwnerKinds: [Job]"),
          pod("job").ageSeconds(10).phase("Failed").ownedBy("Job", "j").build(),
          pod("rs").ageSeconds(10).phase("Failed").build()))
          .containsExactly(d("rs", RFP));
    }

    @Test
    void exitCodesOfTerminatedMainContainers() {
      assertThat(decided(policy(RFP, "minPodLifetimeSeconds: 0\nexitCodes: [2]"),
          pod("two").ageSeconds(10).phase("Failed").containers(running("a"), terminated("b", "Error", 2)).build(),
          pod("one").ageSeconds(10).phase("Failed").containers(terminated("main", "Error", 1)).build()))
          .containsExactly(d("two", RFP));
    }

    @Test
    void namespacesAndLabelSelector() {
      String args = """
          minPodLifetimeSeconds: 0
          namespaces: {include: [ci]}
          labelSelector: {matchLabels: {tier: test}}
          """;
      assertThat(decided(policy(RFP, args),
          pod("match").ns("ci").label("tier", "test").ageSeconds(10).phase("Failed").build(),
          pod("wrong-label").ns("ci").label("tier", "build").ageSeconds(10).phase("Failed").build(),
          pod("wrong-ns").ns("prod").label("tier", "test").ageSeconds(10).phase("Failed").build()))
          .containsExactly("ci/match " + RFP);
    }
  }

  // ---------------------------------------------------------------------------------------------------------------

  @Nested
  class TooManyRestartsArgs {
    @Test
    void restartsAtTheThresholdAreEvicted() {
      assertThat(decided(policy(TMR, "podRestartThreshold: 5"),
          pod("at").ageSeconds(10).containers(restarts(2), restarts(3)).build(),
          pod("below").ageSeconds(10).containers(restarts(1), restarts(3)).build(),
          pod("above").ageSeconds(10).containers(restarts(9)).build()))
          .containsExactlyInAnyOrder(d("at", TMR), d("above", TMR));
    }

    @Test
    void includingInitContainersAddsInitRestarts() {
      PodRecord p = pod("init-restarts").ageSeconds(10)
          .containers(PodFixtures.restarted("init", ContainerStatus.Kind.INIT, 3), restarts(2)).build();
      assertThat(decided(policy(TMR, "podRestartThreshold: 5"), p)).isEmpty();
      assertThat(decided(policy(TMR, "podRestartThreshold: 5\nincludingInitContainers: true"), p))
          .containsExactly(d("init-restarts", TMR));
    }

    @Test
    void statesRestrictToPhaseOrContainerWaitingReason() {
      PodRecord crashing = pod("crashing").ageSeconds(10).containers(waiting("main", "CrashLoopBackOff", 6)).build();
      PodRecord healthy = pod("healthy").ageSeconds(10).containers(restarts(6)).build();
      PodRecord pendingCrash = pod("pending-crash").ageSeconds(10).phase("Pending")
          .containers(waiting("main", "CrashLoopBackOff", 6)).build();
      PodRecord pendingOther = pod("pending-other").ageSeconds(10).phase("Pending")
          .containers(waiting("main", "ImagePullBackOff", 6)).build();
      assertThat(decided(policy(TMR, "podRestartThreshold: 3\nstates: [CrashLoopBackOff]"),
          crashing, healthy, pendingCrash, pendingOther))
          .containsExactlyInAnyOrder(d("crashing", TMR), d("pending-crash", TMR));
      assertThat(decided(policy(TMR, "podRestartThreshold: 3\nstates: [Running]"),
          crashing, healthy, pendingCrash, pendingOther))
          .containsExactlyInAnyOrder(d("crashing", TMR), d("healthy", TMR));
    }

    @Test
    void mostRestartsFirstUnderAPerNodeLimit() {
      assertThat(decided(policy("maxNoOfPodsToEvictPerNode: 1", "", TMR, "podRestartThreshold: 3"),
          pod("a-three").on("node-a").ageSeconds(900).containers(restarts(3)).build(),
          pod("a-ten").on("node-a").ageSeconds(10).containers(restarts(10)).build(),
          pod("a-seven").on("node-a").ageSeconds(500).containers(restarts(7)).build(),
          pod("b-four").on("node-b").ageSeconds(10).containers(restarts(4)).build(),
          pod("b-five").on("node-b").ageSeconds(10).containers(restarts(5)).build()))
          .containsExactly(d("a-ten", TMR), d("b-five", TMR));
    }

    @Test
    void namespacesAndLabelSelector() {
      String args = """
          podRestartThreshold: 1
          namespaces: {exclude: [kube-system]}
          labelSelector: {matchExpressions: [{key: app, operator: In, values: [web, api]}]}
          """;
      assertThat(decided(policy(TMR, args),
          pod("web").label("app", "web").ageSeconds(10).containers(restarts(2)).build(),
          pod("db").label("app", "db").ageSeconds(10).containers(restarts(2)).build(),
          pod("sys").ns("kube-system").label("app", "api").ageSeconds(10).containers(restarts(2)).build()))
          .containsExactly(d("web", TMR));
    }

    private static ContainerStatus restarts(int count) {
      return PodFixtures.restarted("c" + count, ContainerStatus.Kind.MAIN, count);
    }
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** DefaultEvictor behaviour, through a PodLifeTime rule that wants every pod older than a minute. */
  @Nested
  class DefaultEvictorArgs {
    static final String AGE = "maxPodLifeTimeSeconds: 60";

    @Test
    void localStoragePodsAreProtectedByDefault() {
      PodRecord local = pod("local").ageSeconds(120).localStorage().build();
      PodRecord plain = pod("plain").ageSeconds(120).build();
      assertThat(decided(evicting("", PLT, AGE), local, plain)).containsExactly(d("plain", PLT));
      assertThat(decided(evicting("podProtections: {defaultDisabled: [PodsWithLocalStorage]}", PLT, AGE), local, plain))
          .containsExactlyInAnyOrder(d("local", PLT), d("plain", PLT));
      assertThat(decided(evicting("evictLocalStoragePods: true", PLT, AGE), local))
          .containsExactly(d("local", PLT));
    }

    @Test
    void daemonSetPodsAreProtectedByDefault() {
      PodRecord ds = pod("ds").ageSeconds(120).ownedBy("DaemonSet", "agent").build();
      assertThat(decided(evicting("", PLT, AGE), ds)).isEmpty();
      assertThat(decided(evicting("podProtections: {defaultDisabled: [DaemonSetPods]}", PLT, AGE), ds))
          .containsExactly(d("ds", PLT));
      assertThat(decided(evicting("evictDaemonSetPods: true", PLT, AGE), ds)).containsExactly(d("ds", PLT));
    }

    @Test
    void systemCriticalPriorityIsProtectedByDefault() {
      assertThat(decided(evicting("", PLT, AGE),
          pod("critical").ageSeconds(120).priority(2_000_000_000).build(),
          pod("node-critical").ageSeconds(120).priority(2_000_001_000).build(),
          pod("just-below").ageSeconds(120).priority(1_999_999_999).build(),
          pod("no-priority").ageSeconds(120).build()))
          .containsExactlyInAnyOrder(d("just-below", PLT), d("no-priority", PLT));
    }

    @Test
    void systemCriticalPodsAreEvictableWhenTheProtectionIsDisabled() {
      assertThat(decided(evicting("podProtections: {defaultDisabled: [SystemCriticalPods]}", PLT, AGE),
          pod("critical").ageSeconds(120).priority(2_000_000_000).build()))
          .containsExactly(d("critical", PLT));
    }

    @Test
    void priorityThresholdValueProtectsAtAndAbove() {
      assertThat(decided(evicting("priorityThreshold: {value: 1000}", PLT, AGE),
          pod("at").ageSeconds(120).priority(1000).build(),
          pod("above").ageSeconds(120).priority(5000).build(),
          pod("below").ageSeconds(120).priority(999).build(),
          pod("no-priority").ageSeconds(120).build()))
          .containsExactlyInAnyOrder(d("below", PLT), d("no-priority", PLT));
    }

    @Test
    void priorityThresholdNameIsResolvedFromThePriorityClass() {
      ClusterSnapshot snapshot = ClusterSnapshot.of(List.of(
              pod("at").ageSeconds(120).priority(500).build(),
              pod("below").ageSeconds(120).priority(499).build()),
          List.of(), twoNodes(), List.of(), List.of(), Map.of("batch-high", 500));
      assertThat(decided(evicting("priorityThreshold: {name: batch-high}", PLT, AGE), snapshot))
          .containsExactly(d("below", PLT));
    }

    /**
     * Upstream refuses a threshold above 2e9 (utils/priority.go) and does not start, so nothing is evicted (v0.32.2
     * logged it and protected every pod of priority >= 0). Named by a PriorityClass whose value is above that, every
     * pod is protected here, also one without a priority.
     */
    @Test
    void aNamedThresholdAboveSystemCriticalProtectsEveryPod() {
      ClusterSnapshot snapshot = ClusterSnapshot.of(List.of(
              pod("cluster-critical").ageSeconds(120).priority(2_000_000_000).build(),
              pod("normal").ageSeconds(120).priority(0).build(),
              pod("no-priority").ageSeconds(120).build()),
          List.of(), twoNodes(), List.of(), List.of(), Map.of("system-node-critical", 2_000_001_000));
      assertThat(decided(evicting("priorityThreshold: {name: system-node-critical}", PLT, AGE), snapshot)).isEmpty();
    }

    @Test
    void priorityThresholdIsIgnoredWhenSystemCriticalPodsIsDisabled() {
      String evictor = """
          podProtections: {defaultDisabled: [SystemCriticalPods]}
          priorityThreshold: {value: 1000}
          """;
      assertThat(decided(evicting(evictor, PLT, AGE),
          pod("high").ageSeconds(120).priority(5000).build(),
          pod("critical").ageSeconds(120).priority(2_000_000_000).build()))
          .containsExactlyInAnyOrder(d("high", PLT), d("critical", PLT));
    }

    @Test
    void barePodsAreProtectedByDefault() {
      assertThat(decided(evicting("", RFP, "minPodLifetimeSeconds: 0"),
          pod("bare-failed").bare().ageSeconds(120).phase("Failed").build(),
          pod("owned-failed").ageSeconds(120).phase("Failed").build()))
          .containsExactly(d("owned-failed", RFP));
      assertThat(decided(evicting("", PLT, AGE), pod("bare-running").bare().ageSeconds(120).build())).isEmpty();
    }

    @Test
    void failedBarePodsAreEvictableWithFailedBarePodsDisabled() {
      PodRecord bareFailed = pod("bare-failed").bare().ageSeconds(120).phase("Failed").build();
      PodRecord bareRunning = pod("bare-running").bare().ageSeconds(120).build();
      String plt = "maxPodLifeTimeSeconds: 60\nstates: [Failed, Running]";
      assertThat(decided(evicting("podProtections: {defaultDisabled: [FailedBarePods]}", PLT, plt), bareFailed, bareRunning))
          .containsExactly(d("bare-failed", PLT));
      assertThat(decided(evicting("podProtections: {defaultDisabled: [FailedBarePods]}", RFP, "minPodLifetimeSeconds: 0"),
          bareFailed)).containsExactly(d("bare-failed", RFP));
    }

    @Test
    void deprecatedEvictFailedBarePodsDisablesTheProtection() {
      assertThat(decided(evicting("evictFailedBarePods: true", RFP, "minPodLifetimeSeconds: 0"),
          pod("bare-failed").bare().ageSeconds(120).phase("Failed").build()))
          .containsExactly(d("bare-failed", RFP));
    }

    @Test
    void bareSucceededPodsAreNeverEvictableWithoutTheEvictAnnotation() {
      String evictor = "podProtections: {defaultDisabled: [FailedBarePods]}";
      assertThat(decided(evicting(evictor, PLT, "states: [Succeeded]"),
          pod("bare-done").bare().ageSeconds(120).phase("Succeeded").containers(terminated("main", "Completed", 0)).build(),
          pod("bare-done-annotated").bare().ageSeconds(120).phase("Succeeded")
              .annotation(PodRecord.EVICT_ANNOTATION, "true").containers(terminated("main", "Completed", 0)).build()))
          .containsExactly(d("bare-done-annotated", PLT));
    }

    /**
     * Any value, even "false", bypasses every protection (issue #1659), but not the mirror, static and terminating
     * checks: unlike upstream, those pods are never touched.
     */
    @Test
    void evictAnnotationBypassesProtectionsButNotMirrorStaticOrTerminating() {
      String evict = PodRecord.EVICT_ANNOTATION;
      assertThat(decided(evicting("minPodAge: 1h\nlabelSelector: {matchLabels: {evictable: \"yes\"}}", PLT, AGE),
          pod("local").ageSeconds(120).localStorage().annotation(evict, "false").build(),
          pod("daemon").ageSeconds(120).ownedBy("DaemonSet", "d").annotation(evict, "").build(),
          pod("critical").ageSeconds(120).priority(2_000_000_000).annotation(evict, "true").build(),
          pod("bare").ageSeconds(120).bare().annotation(evict, "true").build(),
          pod("mirror").ageSeconds(120).annotation(PodRecord.MIRROR_ANNOTATION, "x").annotation(evict, "true").build(),
          pod("static").ageSeconds(120).annotation(PodRecord.CONFIG_SOURCE_ANNOTATION, "file").annotation(evict, "true").build(),
          pod("terminating").ageSeconds(120).terminating().annotation(evict, "true").build(),
          pod("not-annotated").ageSeconds(120).build()))
          .containsExactlyInAnyOrder(d("local", PLT), d("daemon", PLT), d("critical", PLT), d("bare", PLT));
    }

    /** Upstream's PreEvictionFilter ignores the evict annotation: a pod with nowhere to go stays. */
    @Test
    void evictAnnotationDoesNotBypassNodeFit() {
      PodRecord annotated = pod("annotated").on("node-a").ageSeconds(120).annotation(PodRecord.EVICT_ANNOTATION, "true").build();
      List<NodeRecord> noRoom = List.of(node("node-a").build(), node("node-b").unschedulable().build());
      assertThat(decided(evicting("nodeFit: true", PLT, AGE), noRoom, annotated)).isEmpty();
      assertThat(decided(evicting("nodeFit: true", PLT, AGE), twoNodes(), annotated)).containsExactly(d("annotated", PLT));
    }

    @Test
    void preferNoEvictionProtectsOnlyUnderMandatory() {
      PodRecord annotated = pod("annotated").ageSeconds(120)
          .annotation(PodRecord.PREFER_NO_EVICTION_ANNOTATION, "").build();
      PodRecord plain = pod("plain").ageSeconds(120).build();
      assertThat(decided(evicting("noEvictionPolicy: Mandatory", PLT, AGE), annotated, plain))
          .containsExactly(d("plain", PLT));
      assertThat(decided(evicting("noEvictionPolicy: Preferred", PLT, AGE), annotated, plain))
          .containsExactlyInAnyOrder(d("annotated", PLT), d("plain", PLT));
      assertThat(decided(evicting("", PLT, AGE), annotated, plain))
          .containsExactlyInAnyOrder(d("annotated", PLT), d("plain", PLT));
    }

    @Test
    void mirrorStaticAndTerminatingPodsAreNeverEvicted() {
      String everythingOff = """
          podProtections:
            defaultDisabled: [PodsWithLocalStorage, DaemonSetPods, SystemCriticalPods, FailedBarePods]
          """;
      assertThat(decided(evicting(everythingOff, PLT, AGE),
          pod("mirror").ageSeconds(120).annotation(PodRecord.MIRROR_ANNOTATION, "abc").build(),
          pod("static").ageSeconds(120).annotation(PodRecord.CONFIG_SOURCE_ANNOTATION, "file").build(),
          pod("from-api").ageSeconds(120).annotation(PodRecord.CONFIG_SOURCE_ANNOTATION, "api").build(),
          pod("terminating").ageSeconds(120).terminating().build()))
          .containsExactly(d("from-api", PLT));
    }

    @Test
    void podsWithResourceClaimsAreProtectedWhenExtraEnabled() {
      PodRecord claiming = pod("claiming").ageSeconds(120).resourceClaim().build();
      PodRecord without = pod("without").ageSeconds(120).build();
      assertThat(decided(evicting("", PLT, AGE), claiming, without))
          .containsExactlyInAnyOrder(d("claiming", PLT), d("without", PLT));
      assertThat(decided(evicting("podProtections: {extraEnabled: [PodsWithResourceClaims]}", PLT, AGE), claiming, without))
          .containsExactly(d("without", PLT));
    }

    @Test
    void podsWithPvcAreProtectedWhenExtraEnabled() {
      PodRecord withPvc = pod("with-pvc").ageSeconds(120).pvc("data").build();
      PodRecord without = pod("without").ageSeconds(120).build();
      assertThat(decided(evicting("", PLT, AGE), withPvc, without))
          .containsExactlyInAnyOrder(d("with-pvc", PLT), d("without", PLT));
      assertThat(decided(evicting("podProtections: {extraEnabled: [PodsWithPVC]}", PLT, AGE), withPvc, without))
          .containsExactly(d("without", PLT));
      assertThat(decided(evicting("ignorePvcPods: true", PLT, AGE), withPvc, without))
          .containsExactly(d("without", PLT));
    }

    @Test
    void protectedStorageClassesRestrictThePvcProtection() {
      String evictor = """
          podProtections:
            extraEnabled: [PodsWithPVC]
            config:
              PodsWithPVC:
                protectedStorageClasses: [{name: fast}]
          """;
      ClusterSnapshot snapshot = ClusterSnapshot.of(List.of(
              pod("fast").ageSeconds(120).pvc("fast-claim").build(),
              pod("standard").ageSeconds(120).pvc("standard-claim").build(),
              pod("mixed").ageSeconds(120).pvc("standard-claim").pvc("fast-claim").build(),
              pod("missing-claim").ageSeconds(120).pvc("nowhere").build(),
              pod("no-class").ageSeconds(120).pvc("classless").build()),
          List.of(), twoNodes(), List.of(),
          List.of(new PvcRecord("default", "fast-claim", "fast"), new PvcRecord("default", "standard-claim", "standard"),
              new PvcRecord("default", "classless", "")),
          Map.of());
      assertThat(decided(evicting(evictor, PLT, AGE), snapshot)).containsExactly(d("standard", PLT));
    }

    @Test
    void podsWithoutPdbAreProtectedWhenExtraEnabled() {
      ClusterSnapshot snapshot = ClusterSnapshot.of(List.of(
              pod("covered").ageSeconds(120).label("app", "web").build(),
              pod("uncovered").ageSeconds(120).label("app", "db").build(),
              pod("other-ns").ns("team").ageSeconds(120).label("app", "web").build()),
          List.of(), twoNodes(),
          List.of(new PdbRecord("default", "web-pdb", new LabelSelector(Map.of("app", "web"), List.of()))),
          List.of(), Map.of());
      assertThat(decided(evicting("podProtections: {extraEnabled: [PodsWithoutPDB]}", PLT, AGE), snapshot))
          .containsExactly(d("covered", PLT));
      assertThat(decided(evicting("", PLT, AGE), snapshot)).hasSize(3);
    }

    @Test
    void minReplicasProtectsPodsOfOwnersWithFewerPods() {
      assertThat(decided(evicting("minReplicas: 3", PLT, AGE),
          pod("small-1").ageSeconds(120).ownedBy("ReplicaSet", "small").build(),
          pod("small-2").ageSeconds(120).ownedBy("ReplicaSet", "small").build(),
          pod("big-1").ageSeconds(120).ownedBy("ReplicaSet", "big").build(),
          pod("big-2").ageSeconds(120).ownedBy("ReplicaSet", "big").build(),
          // counted although finished (any phase counts); not itself a candidate of an age-only rule
          pod("big-3").ageSeconds(120).ownedBy("ReplicaSet", "big").phase("Succeeded").build()))
          .containsExactlyInAnyOrder(d("big-1", PLT), d("big-2", PLT));
    }

    @Test
    void minPodAgeCountsFromStartTime() {
      assertThat(decided(evicting("minPodAge: 10m", PLT, AGE),
          pod("started-long-ago").ageSeconds(7200).startedAgo(Duration.ofMinutes(30)).build(),
          pod("started-exactly").ageSeconds(7200).startedAgo(Duration.ofMinutes(10)).build(),
          pod("started-recently").ageSeconds(7200).startedAgo(Duration.ofMinutes(9)).build(),
          pod("never-started").ageSeconds(7200).build()))
          .containsExactlyInAnyOrder(d("started-long-ago", PLT), d("started-exactly", PLT));
    }

    @Test
    void evictorLabelSelector() {
      assertThat(decided(evicting("labelSelector: {matchLabels: {evictable: \"true\"}}", PLT, AGE),
          pod("yes").ageSeconds(120).label("evictable", "true").build(),
          pod("no").ageSeconds(120).build()))
          .containsExactly(d("yes", PLT));
    }

    @Test
    void evictorNamespaceLabelSelector() {
      ClusterSnapshot snapshot = ClusterSnapshot.of(List.of(
              pod("dev-pod").ns("dev").ageSeconds(120).build(),
              pod("prod-pod").ns("prod").ageSeconds(120).build(),
              pod("unknown-ns-pod").ns("elsewhere").ageSeconds(120).build()),
          List.of(PodFixtures.namespace("dev", Map.of("env", "dev")), PodFixtures.namespace("prod", Map.of("env", "prod"))),
          twoNodes());
      assertThat(decided(evicting("namespaceLabelSelector: {matchLabels: {env: dev}}", PLT, AGE), snapshot))
          .containsExactly("dev/dev-pod " + PLT);
    }

    /**
     * Upstream checks namespaceLabelSelector in PreEvictionFilter, which the evict annotation does not lift. (Before,
     * it was checked with the protections the annotation lifts, and an annotated pod of another namespace went.)
     */
    @Test
    void theEvictAnnotationDoesNotLiftTheNamespaceLabelSelector() {
      ClusterSnapshot snapshot = ClusterSnapshot.of(List.of(
              pod("dev-pod").ns("dev").ageSeconds(120).build(),
              pod("annotated").ns("prod").ageSeconds(120).annotation(PodRecord.EVICT_ANNOTATION, "true").build()),
          List.of(PodFixtures.namespace("dev", Map.of("env", "dev")), PodFixtures.namespace("prod", Map.of("env", "prod"))),
          twoNodes());
      assertThat(decided(evicting("namespaceLabelSelector: {matchLabels: {env: dev}}", PLT, AGE), snapshot))
          .containsExactly("dev/dev-pod " + PLT);
    }

    @Test
    void nodeFitProtectsAPodThatFitsNoOtherReadyNode() {
      PodRecord p = pod("p").on("node-a").ageSeconds(120).build();
      List<NodeRecord> noRoom = List.of(node("node-a").build(), node("node-b").notReady().build(),
          node("node-c").unschedulable().build());
      assertThat(decided(evicting("nodeFit: true", PLT, AGE), noRoom, p)).isEmpty();
      assertThat(decided(evicting("", PLT, AGE), noRoom, p)).containsExactly(d("p", PLT));
      List<NodeRecord> withRoom = List.of(node("node-a").build(), node("node-b").notReady().build(), node("node-d").build());
      assertThat(decided(evicting("nodeFit: true", PLT, AGE), withRoom, p)).containsExactly(d("p", PLT));
    }

    @Test
    void nodeFitChecksTaintsAgainstTolerations() {
      List<NodeRecord> nodes = List.of(node("node-a").build(),
          node("node-b").taint("dedicated", "gpu", "NoSchedule").taint("soft", "x", "PreferNoSchedule").build());
      assertThat(decided(evicting("nodeFit: true", PLT, AGE), nodes,
          pod("intolerant").on("node-a").ageSeconds(120).build(),
          pod("tolerant").on("node-a").ageSeconds(120).tolerates("dedicated", "gpu", "NoSchedule").build()))
          .containsExactly(d("tolerant", PLT));
    }

    @Test
    void nodeFitChecksTheNodeSelector() {
      List<NodeRecord> nodes = List.of(node("node-a").label("disk", "ssd").build(), node("node-b").label("disk", "hdd").build());
      assertThat(decided(evicting("nodeFit: true", PLT, AGE), nodes,
          pod("wants-ssd").on("node-a").ageSeconds(120).nodeSelector(Map.of("disk", "ssd")).build(),
          pod("wants-hdd").on("node-a").ageSeconds(120).nodeSelector(Map.of("disk", "hdd")).build()))
          .containsExactly(d("wants-hdd", PLT));
    }

    @Test
    void nodeFitChecksFreeCpu() {
      List<NodeRecord> nodes = List.of(node("node-a").build(), node("node-b").cpu(1000).build());
      assertThat(decided(evicting("nodeFit: true", PLT, AGE), nodes,
          pod("resident").on("node-b").ageSeconds(1).requests("cpu", 600).build(),
          pod("too-big").on("node-a").ageSeconds(120).requests("cpu", 500).build(),
          pod("fits").on("node-a").ageSeconds(120).requests("cpu", 400).build()))
          .containsExactly(d("fits", PLT));
    }

    @Test
    void nodeFitCountsPodSlots() {
      List<NodeRecord> nodes = List.of(node("node-a").build(), node("node-b").podSlots(2).build());
      PodRecord p = pod("p").on("node-a").ageSeconds(120).build();
      PodRecord resident = pod("resident").on("node-b").ageSeconds(1).build();
      assertThat(decided(evicting("nodeFit: true", PLT, AGE), nodes, p, resident)).containsExactly(d("p", PLT));
      PodRecord second = pod("second").on("node-b").ageSeconds(1).build();
      assertThat(decided(evicting("nodeFit: true", PLT, AGE), nodes, p, resident, second)).as("node-b is full").isEmpty();
      PodRecord finished = pod("finished").on("node-b").ageSeconds(1).phase("Succeeded").build();
      assertThat(decided(evicting("nodeFit: true", PLT, AGE), nodes, p, resident, finished)).as("a finished pod holds no slot")
          .containsExactly(d("p", PLT));
    }

    @Test
    void nodeFitOnlyConsidersNodesMatchingTheEvictorNodeSelector() {
      List<NodeRecord> nodes = List.of(node("node-a").build(), node("node-b").label("pool", "reserved").build());
      PodRecord p = pod("p").on("node-a").ageSeconds(120).build();
      assertThat(decided(evicting("nodeFit: true\nnodeSelector: pool!=reserved", PLT, AGE), nodes, p)).isEmpty();
      assertThat(decided(evicting("nodeFit: true\nnodeSelector: pool=reserved", PLT, AGE), nodes, p))
          .containsExactly(d("p", PLT));
    }
  }

  // ---------------------------------------------------------------------------------------------------------------

  @Nested
  class Limits {
    @Test
    void perNode() {
      assertThat(decided(policy("maxNoOfPodsToEvictPerNode: 1", "", PLT, "maxPodLifeTimeSeconds: 60"),
          pod("a-old").on("node-a").ageSeconds(400).build(),
          pod("a-new").on("node-a").ageSeconds(300).build(),
          pod("b-old").on("node-b").ageSeconds(200).build(),
          pod("b-new").on("node-b").ageSeconds(100).build()))
          .containsExactly(d("a-old", PLT), d("b-old", PLT));
    }

    @Test
    void perNamespace() {
      assertThat(decided(policy("maxNoOfPodsToEvictPerNamespace: 2", "", PLT, "maxPodLifeTimeSeconds: 60"),
          pod("x1").ns("x").ageSeconds(500).build(),
          pod("x2").ns("x").on("node-b").ageSeconds(400).build(),
          pod("x3").ns("x").ageSeconds(300).build(),
          pod("y1").ns("y").ageSeconds(200).build()))
          .containsExactly("x/x1 " + PLT, "x/x2 " + PLT, "y/y1 " + PLT);
    }

    @Test
    void total() {
      assertThat(decided(policy("maxNoOfPodsToEvictTotal: 2", "", RFP, "minPodLifetimeSeconds: 0"),
          pod("a1").on("node-a").ageSeconds(10).phase("Failed").build(),
          pod("a2").on("node-a").ageSeconds(10).phase("Failed").build(),
          pod("b1").on("node-b").ageSeconds(10).phase("Failed").build()))
          .containsExactly(d("a1", RFP), d("a2", RFP));
    }

    @Test
    void zeroMeansNone() {
      assertThat(decided(policy("maxNoOfPodsToEvictPerNode: 0", "", PLT, "maxPodLifeTimeSeconds: 60"),
          pod("p").ageSeconds(120).build()))
          .isEmpty();
    }

    /** Counters are shared across profiles and strategies; a pod is decided once, by the first strategy. */
    @Test
    void limitsAreSharedAcrossProfilesAndAPodIsDecidedOnce() {
      String yaml = """
          apiVersion: descheduler/v1alpha2
          kind: DeschedulerPolicy
          maxNoOfPodsToEvictTotal: 2
          profiles:
            - name: first
              pluginConfig:
                - {name: RemoveFailedPods, args: {minPodLifetimeSeconds: 0}}
              plugins: {deschedule: {enabled: [RemoveFailedPods]}}
            - name: second
              pluginConfig:
                - {name: PodLifeTime, args: {maxPodLifeTimeSeconds: 60, states: [Failed, Running]}}
              plugins: {deschedule: {enabled: [PodLifeTime]}}
          """;
      assertThat(decided(yaml,
          pod("failed").ageSeconds(120).phase("Failed").build(),
          pod("old-running").ageSeconds(500).build(),
          pod("newer-running").ageSeconds(300).build()))
          .containsExactly(d("failed", RFP), d("old-running", PLT));
    }
  }

  /**
   * Upstream skips its whole cycle below two Ready nodes; here only the node-aware strategies wait for two, and the
   * pod-by-pod ones collect pods on a single-node cluster too (README "Upstream strategies", docs/migration.md).
   */
  @Test
  void onASingleNodeClusterOnlyTheNodeAwareStrategiesAreSkipped() {
    String yaml = """
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerPolicy
        profiles:
          - name: p
            pluginConfig:
              - {name: PodLifeTime, args: {maxPodLifeTimeSeconds: 60}}
              - {name: LowNodeUtilization, args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}}
            plugins:
              deschedule: {enabled: [PodLifeTime]}
              balance: {enabled: [LowNodeUtilization]}
        """;
    var snapshot = ClusterSnapshot.of(List.of(pod("old").ageSeconds(120).build()), List.of(), List.of(node("node-a").build()));
    PassResult result = new PolicyEvaluator(PolicyLoader.parse(yaml, "test.yaml"))
        .pass(snapshot, NOW, new io.podsweeper.safety.RemovalBudget(io.podsweeper.policy.Limits.DEFAULTS), true);
    assertThat(result.decisions()).extracting(x -> x.podKey() + " " + x.strategy()).containsExactly(d("old", PLT));
    assertThat(result.skipped()).hasValueSatisfying(why -> assertThat(why).contains("1 Ready node(s)"));
  }
}
