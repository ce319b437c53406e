package io.podsweeper.bench;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.PolicyEvaluator;
import io.podsweeper.strategy.Verdict;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The decision core at cluster scale (docs/benchmarks.md): a whole pass ({@code plan}, and the live full pass that
 * evaluates every cached pod) and the evaluation of one pod, as on every informer event, for 1k to 100k pods.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 1, jvmArgsAppend = "-Xmx2g")
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class PolicyBenchmark {
  /** Podsweeper's own format: states, ages, namespace globs, a namespace selector and a pod selector. */
  private static final String NATIVE = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      rules:
        - name: ci-failed
          namespaces: {include: ["ci-*"]}
          states: [Failed]
          maxAgeAfterFinish: 1h
        - name: batch-succeeded
          namespaceSelector: {matchLabels: {team: data}}
          states: [Succeeded]
          maxAgeAfterFinish: 24h
        - name: kubelet-evicted
          namespaces: {exclude: ["kube-*"]}
          states: [Evicted, OOMKilled]
          maxAgeAfterFinish: 6h
        - name: stuck-containers
          namespaces: {exclude: ["kube-system"]}
          podSelector:
            matchExpressions:
              - {key: podsweeper.io/keep, operator: DoesNotExist}
          states: [CrashLoopBackOff, ImagePullBackOff, ErrImagePull]
          maxAge: 2h
        - name: pending-too-long
          states: [Pending]
          maxAge: 12h
        - name: web-max-age
          namespaces: {include: ["web-?", "web-??"]}
          podSelector: {matchLabels: {pod-template-hash: 5d4c8b9f7}}
          maxAge: 5d
      """;

  /**
   * The native policy with one more rule whose CEL {@code match} every pod in scope reaches (no states, an age): the
   * cost of building the pod's view and evaluating the example on it, per pod.
   */
  private static final String NATIVE_MATCH = NATIVE + """
        - name: oom-loop
          namespaces: {exclude: ["kube-system"]}
          maxAge: 1h
          match: >-
            pod.status.containerStatuses.exists(c, c.restartCount > 20 && c.lastState.terminated.reason == 'OOMKilled')
            && !('podsweeper.io/keep' in pod.metadata.labels)
      """;

  /** The upstream descheduler's format: three strategies behind a DefaultEvictor, with per-node and namespace caps. */
  private static final String DESCHEDULER = """
      apiVersion: descheduler/v1alpha2
      kind: DeschedulerPolicy
      maxNoOfPodsToEvictPerNode: 10
      maxNoOfPodsToEvictPerNamespace: 50
      profiles:
        - name: cleanup
          pluginConfig:
            - name: DefaultEvictor
              args:
                podProtections: {defaultDisabled: [FailedBarePods]}
                nodeFit: %s
            - name: PodLifeTime
              args:
                maxPodLifeTimeSeconds: 7200
                states: [CrashLoopBackOff, ImagePullBackOff]
                namespaces: {exclude: [kube-system]}
            - name: RemoveFailedPods
              args:
                reasons: [Error, OOMKilled]
                excludeOwnerKinds: [DaemonSet]
                minPodLifetimeSeconds: 3600
            - name: RemovePodsHavingTooManyRestarts
              args:
                podRestartThreshold: 50
                states: [CrashLoopBackOff]
          plugins:
            deschedule:
              enabled: [PodLifeTime, RemoveFailedPods, RemovePodsHavingTooManyRestarts]
      """;

  /** {@code descheduler-nodefit} is not run by default: its cost grows with the pod count (docs/benchmarks.md). */
  private static final Map<String, String> POLICIES =
      Map.of("native", NATIVE, "native-match", NATIVE_MATCH, "descheduler", DESCHEDULER.formatted("false"), "descheduler-nodefit",
          DESCHEDULER.formatted("true"));

  @Param({"1000", "10000", "100000"})
  int pods;

  @Param({"native", "native-match", "descheduler"})
  String policy;

  private ClusterSnapshot snapshot;
  private PolicyEvaluator evaluator;
  private List<PodRecord> events;
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    snapshot = SyntheticCluster.of(pods);
    evaluator = new PolicyEvaluator(PolicyLoader.parse(POLICIES.get(policy), policy));
    // The pods whose "events" are evaluated: the same 1,000 at every size, so only the cluster around them grows.
    events = snapshot.pods().subList(0, 1000);
  }

  /** One upstream-style pass: candidates per strategy, sorted, evaluated, through the evictor and the limits. */
  @Benchmark
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  public List<Decision> plan() {
    return evaluator.plan(snapshot, SyntheticCluster.NOW);
  }

  /** The live service's safety-net pass: every cached pod evaluated once (Sweeper.fullPass). */
  @Benchmark
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  public void fullPass(Blackhole bh) {
    for (PodRecord pod : snapshot.pods()) {
      bh.consume(evaluator.evaluate(pod, snapshot));
    }
  }

  /** One pod event: what the service does when an informer reports a change. */
  @Benchmark
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public Optional<Verdict> evaluate() {
    PodRecord pod = events.get(next);
    next = next == events.size() - 1 ? 0 : next + 1;
    return evaluator.evaluate(pod, snapshot);
  }
}
