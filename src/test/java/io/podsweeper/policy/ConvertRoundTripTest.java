package io.podsweeper.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.PolicyEvaluator;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every accepted format converts to the native format without losing meaning: same model, same decisions. */
class ConvertRoundTripTest {
  private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");

  @ParameterizedTest
  @ValueSource(strings = {"config/policy.yaml", "config/examples/descheduler-v1alpha2.yaml",
      "config/examples/descheduler-v1alpha1.yaml", "config/examples/koordinator.yaml", "src/test/resources/snapshots/pod-shapes-policy.yaml"})
  void convertedPolicyMeansTheSame(String file) {
    Policy original = PolicyLoader.load(Path.of(file));
    String nativeYaml = NativePolicyWriter.write(original);
    Policy converted = PolicyLoader.parse(nativeYaml, "converted");

    assertThat(nativeYaml).startsWith("apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n");
    assertThat(converted.profiles()).isEqualTo(original.profiles());
    assertThat(converted.limits()).isEqualTo(original.limits());
    assertThat(converted.dryRun()).isEqualTo(original.dryRun());
    assertThat(converted.fullPassInterval()).isEqualTo(original.fullPassInterval());
    assertThat(converted.gracePeriodSeconds()).isEqualTo(original.gracePeriodSeconds());
    assertThat(converted.migrationJobs()).isEqualTo(original.migrationJobs());
    assertThat(converted.warnBefore()).isEqualTo(original.warnBefore());
    // Converting twice changes nothing more.
    assertThat(NativePolicyWriter.write(converted)).isEqualTo(nativeYaml);

    ClusterSnapshot snapshot = SnapshotReader.read(Path.of("config/examples/snapshot.yaml"));
    List<Decision> before = new PolicyEvaluator(original).plan(snapshot, NOW);
    List<Decision> after = new PolicyEvaluator(converted).plan(snapshot, NOW);
    assertThat(after).isEqualTo(before).isNotEmpty();
  }

  @Test
  void theWarningsLeadTimeIsWrittenBack() {
    Policy original = PolicyLoader.parse("apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nwarnBefore: 1h30m\n"
        + "rules: [{name: a, states: [Failed]}]\n", "policy.yaml");
    assertThat(PolicyLoader.parse(NativePolicyWriter.write(original), "converted").warnBefore()).isEqualTo(java.time.Duration.ofMinutes(90));
  }

  /** A Go duration upstream accepts (fractions, down to nanoseconds) is written back without losing any of it. */
  @ParameterizedTest
  @ValueSource(strings = {"0s", "1.5h", "2.5ms", "1.000000001s"})
  void minPodAgeConvertsExactly(String minPodAge) {
    Policy original = PolicyLoader.parse("""
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerPolicy
        profiles:
          - name: p
            pluginConfig:
              - {name: DefaultEvictor, args: {minPodAge: "%s"}}
              - {name: PodLifeTime, args: {maxPodLifeTimeSeconds: 60}}
            plugins: {deschedule: {enabled: [PodLifeTime]}}
        """.formatted(minPodAge), "policy.yaml");
    assertThat(PolicyLoader.parse(NativePolicyWriter.write(original), "converted").profiles()).isEqualTo(original.profiles());
  }

  /** A native rule's opt-ins to evicting protected pods are written back, and only where a rule has them. */
  @Test
  void ruleOptInsMeanTheSame() {
    Policy original = PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules:
          - {name: stuck, states: [CrashLoopBackOff], maxAge: 2h}
          - {name: stuck-add-ons, states: [CrashLoopBackOff], maxAge: 6h, evict: [BarePods, SystemCriticalPods]}
        """, "policy.yaml");
    String nativeYaml = NativePolicyWriter.write(original);
    assertThat(PolicyLoader.parse(nativeYaml, "converted").profiles()).isEqualTo(original.profiles());
    assertThat(nativeYaml).containsOnlyOnce("evict:").contains("evict:\n  - SystemCriticalPods\n  - BarePods\n");
  }

  /** The finished-pod budget is written back, defaults made explicit. */
  @Test
  void finishedPodBudgetMeansTheSame() {
    Policy original = PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        finishedPodBudget: {maxPods: 5000, maxPodsPerNamespace: 800, phases: [Failed, Succeeded]}
        rules: [{name: failed, states: [Failed], keepLast: 3}]
        """, "policy.yaml");
    String nativeYaml = NativePolicyWriter.write(original);
    assertThat(nativeYaml).contains("finishedPodBudget:\n  maxPods: 5000\n  maxPodsPerNamespace: 800\n  minRetention: 600s\n"
        + "  phases:\n  - Succeeded\n  - Failed\n");
    Policy converted = PolicyLoader.parse(nativeYaml, "converted");
    assertThat(converted.finishedPodBudgets()).isEqualTo(original.finishedPodBudgets());
    assertThat(converted.profiles()).isEqualTo(original.profiles());
  }

  /** A rule's per-pod lifetime sources and match expression are written back. */
  @Test
  void ttlFromAndMatchMeanTheSame() {
    Policy original = PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules:
          - {name: ttl, ttlFrom: [kyverno, podsweeper.io, janitor], states: [Running]}
          - {name: oom, maxAge: 1h, match: "pod.status.containerStatuses.exists(c, c.restartCount > 20)"}
        """, "policy.yaml");
    String nativeYaml = NativePolicyWriter.write(original);
    assertThat(PolicyLoader.parse(nativeYaml, "converted").profiles()).isEqualTo(original.profiles());
    assertThat(nativeYaml).contains("ttlFrom:\n  - podsweeper.io\n  - janitor\n  - kyverno\n")
        .contains("match: \"pod.status.containerStatuses.exists(c, c.restartCount > 20)\"");
  }

  /** RemovePodsViolatingTopologySpreadConstraint's args, defaulted and set, which no bundled example carries. */
  @Test
  void topologySpreadArgsMeanTheSame() {
    Policy original = PolicyLoader.parse("""
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerPolicy
        profiles:
          - name: defaults
            pluginConfig: [{name: RemovePodsViolatingTopologySpreadConstraint}]
            plugins: {balance: {enabled: [RemovePodsViolatingTopologySpreadConstraint]}}
          - name: set
            pluginConfig:
              - name: RemovePodsViolatingTopologySpreadConstraint
                args:
                  namespaces: {exclude: [kube-system]}
                  labelSelector: {matchLabels: {tier: web}}
                  constraints: [ScheduleAnyway, DoNotSchedule]
                  topologyBalanceNodeFit: false
            plugins: {balance: {enabled: [RemovePodsViolatingTopologySpreadConstraint]}}
        """, "policy.yaml");
    String nativeYaml = NativePolicyWriter.write(original);
    assertThat(PolicyLoader.parse(nativeYaml, "converted").profiles()).isEqualTo(original.profiles());
    assertThat(nativeYaml).contains("topologyBalanceNodeFit: false", "- ScheduleAnyway");
  }

  /** LowNodeLoad's thresholds on pods and extended resources, its Prod thresholds and their resources' weights. */
  @Test
  void lowNodeLoadProdAndExtendedResourceThresholdsMeanTheSame() {
    Policy original = PolicyLoader.parse("""
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerConfiguration
        profiles:
          - name: koord
            plugins: {balance: {enabled: [{name: LowNodeLoad}]}}
            pluginConfig:
              - name: LowNodeLoad
                args:
                  lowThresholds: {cpu: 30, pods: 20, example.com/foo: 10}
                  highThresholds: {cpu: 80, pods: 70, example.com/foo: 60}
                  prodLowThresholds: {cpu: 20, memory: 25.5}
                  prodHighThresholds: {cpu: 50, memory: 60}
                  resourceWeights: {example.com/foo: 3}
        """, "koordinator.yaml");
    String nativeYaml = NativePolicyWriter.write(original);
    assertThat(PolicyLoader.parse(nativeYaml, "converted").profiles()).isEqualTo(original.profiles());
    assertThat(nativeYaml).contains("prodLowThresholds:", "prodHighThresholds:", "example.com/foo: 3", "memory: 25.5");
  }

  /** LowNodeUtilization's metricsUtilization: the deprecated metricsServer flag is written as source KubernetesMetrics. */
  @Test
  void lowNodeUtilizationMetricsUtilizationMeansTheSame() {
    for (String metrics : List.of("{metricsServer: true}", "{source: KubernetesMetrics}")) {
      Policy original = PolicyLoader.parse("""
          apiVersion: descheduler/v1alpha2
          kind: DeschedulerPolicy
          metricsProviders: [{source: KubernetesMetrics}]
          profiles:
            - name: p
              pluginConfig:
                - name: LowNodeUtilization
                  args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 70}, metricsUtilization: %s}
              plugins: {balance: {enabled: [LowNodeUtilization]}}
          """.formatted(metrics), "policy.yaml");
      String nativeYaml = NativePolicyWriter.write(original);
      assertThat(PolicyLoader.parse(nativeYaml, "converted").profiles()).as(metrics).isEqualTo(original.profiles());
      assertThat(nativeYaml).contains("metricsUtilization:\n        source: KubernetesMetrics");
    }
  }
}
