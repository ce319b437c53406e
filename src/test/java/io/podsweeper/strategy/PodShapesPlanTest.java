package io.podsweeper.strategy;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.policy.PolicyLoader;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Plans on pods as a Kubernetes 1.30 API server returns them ({@code src/test/resources/snapshots/k8s-1.30-pod-shapes-snapshot.yaml},
 * read as {@code plan --snapshot} reads it), each test naming the Kubernetes version and the field it relies on. The
 * project's test API server is 1.20: it drops these fields, so these semantics are tested here, on snapshots
 * (docs/testing.md).
 */
class PodShapesPlanTest {
  private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");
  static final Path SNAPSHOT = Path.of("src/test/resources/snapshots/k8s-1.30-pod-shapes-snapshot.yaml");
  private static final ClusterSnapshot CLUSTER = SnapshotReader.read(SNAPSHOT);
  private static final PolicyEvaluator POLICY = new PolicyEvaluator(PolicyLoader.load(Path.of("src/test/resources/snapshots/pod-shapes-policy.yaml")));

  private static PolicyEvaluator policy(String yaml) {
    return new PolicyEvaluator(PolicyLoader.parse(yaml, "test"));
  }

  /** An upstream profile "restarts" of RemovePodsHavingTooManyRestarts with these args. */
  private static PolicyEvaluator tooManyRestarts(String args) {
    return policy("""
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerPolicy
        profiles:
          - name: restarts
            pluginConfig:
              - {name: RemovePodsHavingTooManyRestarts, args: {%s}}
            plugins: {deschedule: {enabled: [RemovePodsHavingTooManyRestarts]}}
        """.formatted(args));
  }

  private static PodRecord pod(String key) {
    return CLUSTER.pods().stream().filter(p -> p.key().equals(key)).findFirst().orElseThrow();
  }

  private static List<String> plan(PolicyEvaluator policy) {
    return policy.plan(CLUSTER, NOW).stream().map(d -> d.podKey() + " " + d.action().wireName() + " " + d.rule()).toList();
  }

  private static String reasonFor(PolicyEvaluator policy, String key) {
    return policy.plan(CLUSTER, NOW).stream().filter(d -> d.podKey().equals(key)).findFirst().orElseThrow().reason();
  }

  @Test
  void theWholeSnapshotPlansToTheseDecisions() {
    assertThat(plan(POLICY)).containsExactlyInAnyOrder(
        "web/api-5d4c8b9f7-s1dcr evict crash-loops",
        "web/worker-84c6d5-m1grt evict init-crash-loops",
        "web/api-5d4c8b9f7-ev1ct delete kubelet-ended",
        "batch/nightly-29450000-sh7dn delete kubelet-ended",
        "batch/report-29450040-0rphn delete podgc-leftovers",
        "batch/etl-topology-8k2mz evict gated-too-long");
  }

  /** Kubernetes 1.27+ (GA 1.30) {@code spec.schedulingGates}, with the API server's PodScheduled=False, reason SchedulingGated. */
  @Test
  void k8s127SchedulingGatesHoldAPodFromEveryRuleThatDoesNotOptIn() {
    PodRecord queued = pod("batch/train-queued");
    assertThat(queued.schedulingGates()).containsExactly("kueue.x-k8s.io/admission");
    // The docs' "Pending > 12h", as config/policy.yaml has it: the 20 h old pod Kueue holds stays.
    PolicyEvaluator suggested = new PolicyEvaluator(PolicyLoader.load(Path.of("config/policy.yaml")));
    assertThat(suggested.evaluate(queued, CLUSTER)).isEmpty();
    assertThat(suggested.explain(queued, CLUSTER, NOW)).contains(
        "pod: Pending, held by scheduling gates kueue.x-k8s.io/admission (spec.schedulingGates): held back on purpose, not stuck;"
            + " a rule removes it only with evict: [SchedulingGatedPods], and counts its age from its creation, as it has been held since",
        "    rule pending-too-long: selects it, but it is protected: a bare pod (no controller recreates it) and held by scheduling"
            + " gates kueue.x-k8s.io/admission (held back on purpose, not stuck); a rule evicts it only with evict: [BarePods,"
            + " SchedulingGatedPods]")
        .last().isEqualTo("verdict: never, as the pod is now");
    // A rule that opts in counts from creation; the bare one also needs BarePods.
    assertThat(POLICY.evaluate(queued, CLUSTER)).isEmpty();
    PolicyEvaluator both = policy("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: queued-for-long, states: [Pending], maxAge: 16h, evict: [SchedulingGatedPods, BarePods]}]
        """);
    assertThat(both.evaluate(queued, CLUSTER)).hasValueSatisfying(v -> assertThat(v.dueAt()).isEqualTo(queued.creationTimestamp().plusSeconds(16 * 3600)));
    assertThat(reasonFor(both, "batch/train-queued"))
        .isEqualTo("Pending: held by scheduling gates kueue.x-k8s.io/admission, age 20h; rule queued-for-long allows 16h");
    assertThat(reasonFor(POLICY, "batch/etl-topology-8k2mz"))
        .isEqualTo("Pending: held by scheduling gates kueue.x-k8s.io/topology, age 20h; rule gated-too-long allows 16h");
  }

  /** Kubernetes 1.29+ native sidecars: {@code spec.initContainers[].restartPolicy: Always}, its status in initContainerStatuses. */
  @Test
  void k8s129NativeSidecarsCountAsLongRunningContainers() {
    PodRecord api = pod("web/api-5d4c8b9f7-s1dcr");
    // States: a rule for CrashLoopBackOff without includingInitContainers catches the sidecar, and says so.
    assertThat(reasonFor(POLICY, api.key())).isEqualTo("CrashLoopBackOff (sidecar istio-proxy), age 3d; rule crash-loops allows 2h");
    assertThat(POLICY.explain(api, CLUSTER, NOW)).contains("pod: native sidecar istio-proxy (an init container with restartPolicy Always):"
            + " counted as a long-running container, for states and restarts alike",
        "    rule pending-too-long: state Running (sidecar istio-proxy CrashLoopBackOff) is not one of [Pending]");
    // Restarts: upstream's TooManyRestarts counts the sidecar's 412 without includingInitContainers (upstream would not).
    PolicyEvaluator restarts = tooManyRestarts("podRestartThreshold: 50");
    assertThat(plan(restarts)).containsExactly("web/api-5d4c8b9f7-s1dcr evict restarts");
    assertThat(reasonFor(restarts, api.key())).isEqualTo("412 restarts >= threshold 50");
    // CEL's view: the sidecar is among containerStatuses, marked sidecar.
    PolicyEvaluator cel = policy("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: sidecar-restarts, maxAge: 1h,
                 match: "pod.status.containerStatuses.exists(c, c.sidecar && c.restartCount > 100) && pod.status.initContainerStatuses.size() == 0"}]
        """);
    assertThat(plan(cel)).containsExactly("web/api-5d4c8b9f7-s1dcr evict sidecar-restarts");
  }

  /** An ordinary init container ({@code restartPolicy} unset) in CrashLoopBackOff: counted only with includingInitContainers. */
  @Test
  void ordinaryInitContainersCountOnlyWithIncludingInitContainers() {
    PodRecord worker = pod("web/worker-84c6d5-m1grt");
    assertThat(POLICY.explain(worker, CLUSTER, NOW)).contains(
        "    rule crash-loops: state Pending (container worker PodInitializing) is not one of [CrashLoopBackOff];"
            + " init container migrate CrashLoopBackOff counts only with includingInitContainers: true",
        "    rule init-crash-loops: due since 2026-01-01T08:00:00Z: CrashLoopBackOff (init container migrate), age 6h;"
            + " rule init-crash-loops allows 2h");
    // The same switch as upstream's, in both directions: upstream's TooManyRestarts counts the init container's 71 with it.
    PolicyEvaluator restarts = tooManyRestarts("podRestartThreshold: 50, includingInitContainers: true");
    assertThat(plan(restarts)).containsExactlyInAnyOrder("web/api-5d4c8b9f7-s1dcr evict restarts", "web/worker-84c6d5-m1grt evict restarts");
  }

  /**
   * Kubernetes 1.26+ (GA 1.31) {@code status.conditions[type=DisruptionTarget].reason} and the kubelet's
   * {@code status.reason: Evicted}: the kubelet's node-pressure eviction, told from the other evictors.
   */
  @Test
  void k8s126DisruptionTargetAndTheKubeletsEvictionAreShownAndSelectable() {
    assertThat(reasonFor(POLICY, "web/api-5d4c8b9f7-ev1ct")).isEqualTo(
        "Failed, ended by TerminationByKubelet and KubeletEviction, finished 7h59m30s ago; rule kubelet-ended allows 6h after finish");
    assertThat(POLICY.explain(pod("web/api-5d4c8b9f7-ev1ct"), CLUSTER, NOW)).first().isEqualTo("pod: endedBy TerminationByKubelet:"
        + " terminated by the kubelet (DisruptionTarget condition); endedBy KubeletEviction: evicted by the kubelet (status.reason Evicted)");
    assertThat(reasonFor(POLICY, "batch/report-29450040-0rphn")).isEqualTo(
        "Failed, ended by DeletionByPodGC, finished 3h ago (DisruptionTarget condition); rule podgc-leftovers allows 1h after finish");
    assertThat(POLICY.explain(pod("batch/report-29450040-0rphn"), CLUSTER, NOW))
        .contains("    rule kubelet-ended: ended by [DeletionByPodGC], none of endedBy [KubeletEviction, NodeShutdown]");
    // Preempted, drained, tainted away: each shows its evictor, and is terminating, which no rule touches.
    assertThat(List.of("batch/backfill-29450100-pr3mp", "web/api-5d4c8b9f7-dr41n", "web/cache-0"))
        .extracting(key -> POLICY.explain(pod(key), CLUSTER, NOW).get(0))
        .containsExactly("pod: endedBy PreemptionByScheduler: preempted by the scheduler (DisruptionTarget condition)",
            "pod: endedBy EvictionByEvictionAPI: evicted through the Eviction API (DisruptionTarget condition)",
            "pod: endedBy DeletionByTaintManager: deleted by the taint manager for a NoExecute taint (DisruptionTarget condition)");
    PolicyEvaluator preempted = policy("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: preempted, states: [Failed, Running], endedBy: [PreemptionByScheduler, EvictionByEvictionAPI, DeletionByTaintManager]}]
        """);
    assertThat(plan(preempted)).isEmpty();
    assertThat(preempted.explain(pod("batch/backfill-29450100-pr3mp"), CLUSTER, NOW)).contains("profile rules: protected: already terminating");
  }

  /**
   * Kubernetes 1.22+ graceful node shutdown: {@code status.reason: Terminated} with {@code status.message} "Pod was
   * terminated in response to imminent node shutdown."; 1.26+ adds DisruptionTarget, reason TerminationByKubelet.
   */
  @Test
  void k8s122GracefulNodeShutdownIsToldFromANodePressureEviction() {
    assertThat(reasonFor(POLICY, "batch/nightly-29450000-sh7dn")).isEqualTo(
        "Failed, ended by TerminationByKubelet and NodeShutdown, finished 9h29m31s ago; rule kubelet-ended allows 6h after finish");
    PolicyEvaluator shutdownOnly = policy("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: node-shutdown, states: [Failed], endedBy: [NodeShutdown], maxAgeAfterFinish: 1h}]
        """);
    assertThat(plan(shutdownOnly)).containsExactly("batch/nightly-29450000-sh7dn delete node-shutdown");
    PolicyEvaluator byKubelet = policy("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: by-kubelet, states: [Failed], endedBy: [TerminationByKubelet], maxAgeAfterFinish: 1h}]
        """);
    assertThat(plan(byKubelet)).containsExactlyInAnyOrder("web/api-5d4c8b9f7-ev1ct delete by-kubelet",
        "batch/nightly-29450000-sh7dn delete by-kubelet");
  }
}
