package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClassBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.IgnoringListener;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * With the service's own clients, whose serialization knows only the kinds the service watches and Status ({@link
 * KubeSerialization}), every informer lists once and its watch delivers what is made afterwards: fabric8's registry of
 * every kind is not needed for any of them. (Whether an event is decoded straight into its kind, as registered, or
 * converted from a generic object, as fabric8 does for a kind it does not know, does not show here: {@link
 * KubeSerializationTest} holds that.) A watch that refused what it brought would end, and its informer list again: the
 * API server's audit log counts the lists.
 */
@ExtendWith(ApiServerExtension.class)
class KubeSerializationIT {
  @Test
  void everyInformedKindArrivesThroughItsWatch(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    String suffix = Long.toString(System.nanoTime(), 36);
    String agent = "kube-serialization-" + suffix;
    Config config = server.config();
    config.setUserAgent(agent);
    try (KubeClients clients = KubeClients.of(config); ClusterCache cache = new ClusterCache(clients, new Metrics())) {
      cache.start(new IgnoringListener()).get(60, TimeUnit.SECONDS);

      String ns = server.newNamespace("watched", Map.of("team", "a"));
      TestPods.create(admin, ns, "pod-" + suffix, "node-" + suffix, Map.of());
      admin.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-" + suffix).endMetadata().build()).create();
      admin.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder().withNewMetadata().withName("claim").endMetadata()
          .withNewSpec().addToAccessModes("ReadWriteOnce").withNewResources().addToRequests("storage", new Quantity("1Gi")).endResources().endSpec()
          .build()).create();
      admin.scheduling().v1().priorityClasses().resource(new PriorityClassBuilder().withNewMetadata().withName("class-" + suffix).endMetadata()
          .withValue(1234).build()).create();
      admin.policy().v1beta1().podDisruptionBudget().inNamespace(ns).resource(new PodDisruptionBudgetBuilder().withNewMetadata()
          .withName("budget").endMetadata().withNewSpec().withMaxUnavailable(new io.fabric8.kubernetes.api.model.IntOrString(1))
          .withNewSelector().addToMatchLabels("app", "x").endSelector().endSpec().build()).create();

      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        assertThat(cache.namespace(ns).labels()).containsEntry("team", "a");
        assertThat(cache.pod(ns + "/pod-" + suffix)).isPresent();
        assertThat(cache.node("node-" + suffix)).isPresent();
        assertThat(cache.pvc(ns, "claim")).isPresent();
        assertThat(cache.priorityClassValue("class-" + suffix)).hasValue(1234);
        assertThat(cache.pdbs(ns)).hasSize(1);
      });
      assertThat(cache.isCurrent()).as("every informer listed, watching and caught up").isTrue();
      // A watch that refused what it brought would have ended, and its informer listed again.
      Map<String, Long> lists = server.audit().stream().filter(e -> e.userAgent().equals(agent) && e.verb().equals("list"))
          .collect(Collectors.groupingBy(TestApiServer.AuditEvent::resource, Collectors.counting()));
      assertThat(lists).as("lists by resource").isEqualTo(Map.of("pods", 1L, "namespaces", 1L, "nodes", 1L, "persistentvolumeclaims", 1L,
          "priorityclasses", 1L, "poddisruptionbudgets", 1L));
    } finally {
      admin.nodes().withName("node-" + suffix).delete();
      admin.scheduling().v1().priorityClasses().withName("class-" + suffix).delete();
    }
  }
}
