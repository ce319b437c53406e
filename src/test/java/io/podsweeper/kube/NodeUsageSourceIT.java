package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.TestApiServer;
import java.io.InputStream;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * LowNodeLoad's metrics-server source against the real API server: NodeMetrics and PodMetrics listed over
 * metrics.k8s.io/v1beta1 become a node's measured usage with its pods' shares. (The NodeMetric source runs in
 * BalanceIT.)
 */
@ExtendWith(ApiServerExtension.class)
class NodeUsageSourceIT {

  @Test
  void readsNodeAndPodUsageFromMetricsK8sIo(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    List<HasMetadata> crds;
    try (InputStream in = NodeUsageSourceIT.class.getResourceAsStream("/crds/metrics.k8s.io.yaml")) {
      crds = client.load(in).items();
    }
    crds.forEach(crd -> client.resource(crd).fieldManager("podsweeper-it").forceConflicts().serverSideApply());
    try {
      await().atMost(Duration.ofSeconds(10)).until(() -> Optional.ofNullable(client.getApiResources(NodeUsages.METRICS_API))
          .map(r -> r.getResources().size() >= 2).orElse(false));
      String ns = server.newNamespace("usage");
      String node = "measured-" + UUID.randomUUID().toString().substring(0, 6);
      Instant at = Instant.now().truncatedTo(ChronoUnit.SECONDS);
      create(client, NodeUsages.NODE_METRICS, null, node, Map.of("timestamp", at.toString(), "window", "20s",
          "usage", Map.of("cpu", "1500m", "memory", "2Gi")));
      create(client, NodeUsages.POD_METRICS, ns, "web", Map.of("timestamp", at.toString(), "window", "20s",
          "containers", List.of(Map.of("name", "main", "usage", Map.of("cpu", "300m", "memory", "256Mi")),
              Map.of("name", "sidecar", "usage", Map.of("cpu", "50m", "memory", "64Mi")))));

      List<NodeUsage> read = NodeUsageSource.metricsApi(client, pod -> pod.equals(ns + "/web") ? Optional.of(node) : Optional.empty());

      NodeUsage usage = read.stream().filter(u -> u.node().equals(node)).findFirst().orElseThrow();
      assertThat(usage.usage()).containsEntry("cpu", 1500L).containsEntry("memory", 2L << 30);
      assertThat(usage.measuredAt()).isEqualTo(at);
      assertThat(usage.source()).isEqualTo("metrics.k8s.io");
      assertThat(usage.pod(ns + "/web")).hasValue(Map.of("cpu", 350L, "memory", 320L << 20));
    } finally {
      crds.forEach(crd -> client.resource(crd).delete());
    }
  }

  private static void create(KubernetesClient client, String kind, String namespace, String name, Map<String, Object> fields) {
    GenericKubernetesResource r = new GenericKubernetesResourceBuilder().withApiVersion(NodeUsages.METRICS_API).withKind(kind)
        .withNewMetadata().withName(name).withNamespace(namespace).endMetadata().build();
    fields.forEach(r::setAdditionalProperty);
    var api = client.genericKubernetesResources(NodeUsages.METRICS_API, kind);
    (namespace == null ? api.resource(r) : api.inNamespace(namespace).resource(r)).create();
  }
}
