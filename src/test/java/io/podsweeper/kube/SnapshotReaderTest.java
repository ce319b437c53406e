package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.policy.PolicyException;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Measured usage objects in a snapshot become the nodes' {@link NodeUsage}, in millicores and bytes; PodDisruptionBudgets
 * keep the disruptions their status allowed when the snapshot was taken.
 */
class SnapshotReaderTest {
  private static final String POD = """
      - apiVersion: v1
        kind: Pod
        metadata: {name: web-1, namespace: shop, creationTimestamp: "2026-01-01T00:00:00Z"}
        spec: {nodeName: n2, containers: [{name: main, image: nginx}]}
      """;

  @Test
  void aNodeMetricIsSystemUsagePlusItsPods() {
    ClusterSnapshot snapshot = SnapshotReader.parse("""
        apiVersion: v1
        kind: List
        items:
        - apiVersion: slo.koordinator.sh/v1alpha1
          kind: NodeMetric
          metadata: {name: n1}
          status:
            updateTime: "2026-01-01T11:59:30Z"
            nodeMetric:
              nodeUsage: {resources: {cpu: "9", memory: 9Gi}}
              systemUsage: {resources: {cpu: 500m, memory: 1Gi}}
            podsMetric:
            - {namespace: shop, name: web-0, podUsage: {resources: {cpu: 1500m, memory: 2Gi}}}
            - {namespace: shop, name: api-0, podUsage: {resources: {cpu: "1", memory: 512Mi}}}
        """, "test");
    // Koordinator adds the parts up; nodeUsage is not read.
    NodeUsage usage = measured(snapshot, "n1", 3000, (3L << 30) + (512L << 20), "2026-01-01T11:59:30Z", "NodeMetric");
    assertThat(usage.pod("shop/web-0")).contains(Map.of("cpu", 1500L, "memory", 2L << 30));
  }

  @Test
  void metricsServerNodeMetricsGetTheirPodsFromPodMetrics() {
    ClusterSnapshot snapshot = SnapshotReader.parse("""
        apiVersion: v1
        kind: List
        items:
        - apiVersion: metrics.k8s.io/v1beta1
          kind: NodeMetrics
          metadata: {name: n2}
          timestamp: "2026-01-01T11:59:45Z"
          window: 20s
          usage: {cpu: 2500000000n, memory: 4194304Ki}
        - apiVersion: metrics.k8s.io/v1beta1
          kind: PodMetrics
          metadata: {name: web-1, namespace: shop}
          timestamp: "2026-01-01T11:59:45Z"
          window: 20s
          containers:
          - {name: main, usage: {cpu: 700m, memory: 100Mi}}
          - {name: sidecar, usage: {cpu: 100m, memory: 28Mi}}
        """ + POD, "test");
    NodeUsage usage = measured(snapshot, "n2", 2500, 4L << 30, "2026-01-01T11:59:45Z", "metrics.k8s.io");
    assertThat(usage.pod("shop/web-1")).contains(Map.of("cpu", 800L, "memory", 128L << 20));
  }

  private static NodeUsage measured(ClusterSnapshot snapshot, String node, long cpu, long memory, String at, String source) {
    NodeUsage usage = snapshot.nodeUsage(node).orElseThrow();
    assertThat(usage.usage()).containsExactlyInAnyOrderEntriesOf(Map.of("cpu", cpu, "memory", memory));
    assertThat(usage.measuredAt()).isEqualTo(Instant.parse(at));
    assertThat(usage.source()).isEqualTo(source);
    return usage;
  }

  @Test
  void aNodeMetricKoordletHasNotFilledInMeasuresNothing() {
    ClusterSnapshot snapshot = SnapshotReader.parse("""
        apiVersion: slo.koordinator.sh/v1alpha1
        kind: NodeMetric
        metadata: {name: n1}
        status: {}
        """, "test");
    assertThat(snapshot.nodeUsage("n1")).isEmpty();
  }

  @Test
  void aUsageKindOfAnotherApiIsRefused() {
    assertThatThrownBy(() -> SnapshotReader.parse("apiVersion: example.com/v1\nkind: NodeMetrics\nmetadata: {name: n1}\n", "test"))
        .isInstanceOf(PolicyException.class).hasMessageContaining("must be apiVersion metrics.k8s.io/v1beta1");
  }

  @Test
  void aPodDisruptionBudgetKeepsItsStatusOfEitherApiVersion() {
    ClusterSnapshot snapshot = SnapshotReader.parse("""
        apiVersion: v1
        kind: List
        items:
        - apiVersion: policy/v1
          kind: PodDisruptionBudget
          metadata: {name: web, namespace: shop}
          spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
          status: {disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1}
        - apiVersion: policy/v1beta1
          kind: PodDisruptionBudget
          metadata: {name: api, namespace: shop}
          spec: {minAvailable: 1, selector: {matchLabels: {app: api}}}
          status: {disruptionsAllowed: 2}
        - apiVersion: policy/v1
          kind: PodDisruptionBudget
          metadata: {name: new, namespace: shop}
          spec: {minAvailable: 1, selector: {matchLabels: {app: new}}}
        """, "test");
    assertThat(snapshot.pdbs("shop")).extracting(p -> p.name() + " " + p.disruptionsAllowed())
        .containsExactly("web OptionalInt[0]", "api OptionalInt[2]", "new OptionalInt.empty");
  }
}
