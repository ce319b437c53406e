package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.IgnoringListener;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The price of a current cache, counted by the API server: the informers list from the watch cache to start, and a watch
 * that ends (fabric8's renewal, here the server's own timeout every few seconds; a cut connection) is resumed, and the
 * cache is caught up again by its watch: no list from etcd at all. The API server's audit log
 * (scripts/test-apiserver.sh logs the informers' lists with their query) is the witness; see docs/design.md.
 */
@ExtendWith(ApiServerExtension.class)
class WatchRenewalsIT {
  /** Each watch lasts this long before the server ends it; the informer resumes it. */
  private static final Duration WATCH = Duration.ofSeconds(5);
  private static final Duration STRETCH = Duration.ofSeconds(40);
  private static final List<String> KINDS = List.of("pods", "nodes", "namespaces", "persistentvolumeclaims", "poddisruptionbudgets", "priorityclasses");

  @Test
  void renewedAndCutWatchesAreResumedWithoutAListFromEtcdAndCatchUp(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    String ns = server.newNamespace("renewals");
    for (int i = 0; i < 20; i++) {
      TestPods.create(admin, ns, "p" + i, "node-a", Map.of());
    }
    String agent = "watch-renewals-" + ns;
    Config config = server.config();
    config.setUserAgent(agent);
    AtomicBoolean behindOnce = new AtomicBoolean();
    try (KubeClients clients = new KubeClients(new KubernetesClientBuilder().withConfig(config).build());
        ClusterCache cache = new ClusterCache(clients, new Metrics(), Optional.of(WATCH))) {
      cache.start(new IgnoringListener()).get(60, TimeUnit.SECONDS);
      await().atMost(Duration.ofSeconds(10)).until(cache::isCurrent);
      Instant listed = Instant.now();

      // Several renewals of every watch, while pods come, change and go, and once every connection is cut.
      long end = System.nanoTime() + STRETCH.toNanos();
      for (int i = 0; System.nanoTime() < end; i++) {
        TestPods.create(admin, ns, "new-" + i, "node-a", Map.of());
        admin.pods().inNamespace(ns).withName("p" + i).delete(); // gone after the first 20 rounds: nothing to delete
        if (i > 0) {
          String round = "r" + i;
          admin.pods().inNamespace(ns).withName("new-" + (i - 1))
              .edit(p -> new PodBuilder(p).editMetadata().addToLabels("round", round).endMetadata().build());
        }
        if (i == 10) {
          server.cutConnections();
        }
        for (int look = 0; look < 20; look++) {
          behindOnce.compareAndSet(false, !cache.isCurrent());
          Thread.sleep(100);
        }
      }

      await().atMost(Duration.ofSeconds(30)).until(cache::isCurrent);
      Map<String, String> inCluster = admin.pods().inNamespace(ns).list().getItems().stream()
          .collect(Collectors.toMap(p -> ns + "/" + p.getMetadata().getName(), p -> p.getMetadata().getResourceVersion()));
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(cache.podsInNamespace(ns).stream()
          .collect(Collectors.toMap(PodRecord::key, PodRecord::resourceVersion))).isEqualTo(inCluster));
      assertThat(behindOnce).as("behind at some renewal: a resumed watch is not current before it reaches its fence").isTrue();

      List<TestApiServer.AuditEvent> lists = server.audit().stream()
          .filter(e -> e.userAgent().equals(agent) && e.verb().equals("list")).toList();
      assertThat(lists).as("every list but the fences: one of each kind to start, from the watch cache, as client-go lists")
          .filteredOn(e -> !e.uri().contains("fieldSelector="))
          .allSatisfy(e -> {
            assertThat(e.received()).isBefore(listed);
            assertThat(e.uri()).contains("resourceVersion=0").doesNotContain("limit=");
          })
          .extracting(TestApiServer.AuditEvent::resource).containsExactlyInAnyOrderElementsOf(KINDS);
      assertThat(lists).as("every list since the start").filteredOn(e -> e.received().isAfter(listed))
          .isNotEmpty()
          .allSatisfy(e -> assertThat(e.uri()).as("a list of nothing from the watch cache: a fence")
              .contains("resourceVersion=0").contains("fieldSelector=metadata.name%3D"));
      assertThat(lists).filteredOn(e -> e.received().isAfter(listed) && e.resource().equals("pods"))
          .as("a fence of the pods at each renewal").hasSizeGreaterThanOrEqualTo((int) (STRETCH.toSeconds() / (WATCH.toSeconds() + 2)));
    } finally {
      admin.pods().inNamespace(ns).delete();
    }
  }
}
