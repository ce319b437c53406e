package io.podsweeper.strategy;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.policy.PolicyLoader;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The bundled example of each policy format, planned on the bundled snapshot: exactly these decisions. */
class ExamplesPlanTest {
  private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
    "config/policy.yaml | batch/nightly-etl-29450000-5gkw8 PodLifeTime delete, default/report-generator-8x2kd PodLifeTime evict,"
        + " web/api-5d4c8b9f7-zt6rn PodLifeTime evict, ci-frontend/build-1841-x7k2p PodLifeTime delete,"
        + " ci-backend/test-977-2mzq4 PodLifeTime delete",
    // Upstream cannot see the unscheduled pod, protects bare pods, and takes failures by reason.
    "config/examples/descheduler-v1alpha2.yaml | web/api-5d4c8b9f7-zt6rn PodLifeTime evict, web/worker-84c6d5-fp7tq PodLifeTime evict,"
        + " batch/reindex-7fd9c-bh2xn RemoveFailedPods delete, ci-backend/test-977-2mzq4 RemoveFailedPods delete,"
        + " ci-frontend/build-1841-x7k2p RemoveFailedPods delete, ci-frontend/build-1852-q9d8w RemoveFailedPods delete",
    "config/examples/descheduler-v1alpha1.yaml | web/api-5d4c8b9f7-zt6rn PodLifeTime evict, web/worker-84c6d5-fp7tq PodLifeTime evict,"
        + " batch/reindex-7fd9c-bh2xn RemoveFailedPods delete, ci-backend/test-977-2mzq4 RemoveFailedPods delete,"
        + " ci-frontend/build-1841-x7k2p RemoveFailedPods delete, ci-frontend/build-1852-q9d8w RemoveFailedPods delete",
    // Koordinator's expected-replicas check keeps the worker (its ReplicaSet's only pod) and the failed pods (Jobs', or
    // a ReplicaSet's with one pod running).
    "config/examples/koordinator.yaml | web/api-5d4c8b9f7-zt6rn PodLifeTime evict",
  })
  void plansTheExample(String policyFile, String expected) {
    ClusterSnapshot snapshot = SnapshotReader.read(Path.of("config/examples/snapshot.yaml"));
    List<Decision> decisions = new PolicyEvaluator(PolicyLoader.load(Path.of(policyFile))).plan(snapshot, NOW);
    assertThat(decisions).extracting(d -> d.podKey() + " " + d.strategy() + " " + d.action().wireName())
        .containsExactly(expected.split(",\\s*"));
  }

  /** The anti-affinity fragmentation example: HighNodeUtilization empties node-2 for the Pending cache replica. */
  @org.junit.jupiter.api.Test
  void defragmentsForTheAntiAffinityExample() {
    ClusterSnapshot snapshot = SnapshotReader.read(Path.of("config/examples/anti-affinity-fragmentation-snapshot.yaml"));
    var policy = PolicyLoader.load(Path.of("config/examples/anti-affinity-fragmentation-policy.yaml"));
    List<Decision> decisions = new PolicyEvaluator(policy).plan(snapshot, NOW);
    assertThat(decisions).extracting(d -> d.podKey() + " " + d.node())
        .containsExactly("shop/worker-5b8c-p7 node-2", "shop/worker-5b8c-q9 node-2", "shop/api-6c4d-r8 node-3");
    // Converted to the native format, the policy decides the same.
    var converted = io.podsweeper.policy.PolicyLoader.parse(io.podsweeper.policy.NativePolicyWriter.write(policy), "converted");
    assertThat(converted.profiles()).isEqualTo(policy.profiles());
    assertThat(new PolicyEvaluator(converted).plan(snapshot, NOW)).isEqualTo(decisions);
  }

  /** The LowNodeLoad example: the hot node sheds its lowest-priority pod, then its largest; stale and missing skip. */
  @org.junit.jupiter.api.Test
  void balancesMeasuredLoadForTheLowNodeLoadExample() {
    ClusterSnapshot snapshot = SnapshotReader.read(Path.of("config/examples/lownodeload-snapshot.yaml"));
    var policy = PolicyLoader.load(Path.of("config/examples/koordinator-lownodeload.yaml"));
    PassResult result = new PolicyEvaluator(policy).pass(snapshot, NOW, new io.podsweeper.safety.RemovalBudget(policy.limits()), true);
    assertThat(result.decisions()).extracting(d -> d.podKey() + " " + d.node())
        .containsExactly("batch/report-74d1-z9 node-1", "shop/api-6f7d-x1 node-1");
    assertThat(result.decisions().get(0).reason()).startsWith("node node-1 is overloaded (cpu 94% > 75%, memory 45% vs 80%;");
    assertThat(result.notes()).containsExactly(
        "koord-descheduler/LowNodeLoad: node node-3 skipped: its NodeMetric measurement of 2026-01-01T11:55:00Z is 300s old,"
            + " not newer than nodeMetricExpirationSeconds 180",
        "koord-descheduler/LowNodeLoad: node node-4 skipped: no measured usage (no NodeMetric or metrics.k8s.io measurement)");
    // Converted to the native format, the policy decides the same.
    var converted = io.podsweeper.policy.PolicyLoader.parse(io.podsweeper.policy.NativePolicyWriter.write(policy), "converted");
    assertThat(converted.profiles()).isEqualTo(policy.profiles());
    assertThat(new PolicyEvaluator(converted).plan(snapshot, NOW)).isEqualTo(result.decisions());
  }
}
