package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.engine.Service;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * The cache is fit to act on only when it holds what the API server holds: all of the initial list by the time the
 * service reports synced. See docs/reliability.md.
 */
@ExtendWith(ApiServerExtension.class)
class CacheCurrencyIT {
  @Test
  void whenTheServiceIsSyncedItHasEveryPod(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("startup");
    createPods(client, ns, 400);
    int inCluster = client.pods().inAnyNamespace().list().getItems().size();
    Logger serviceLog = (Logger) LoggerFactory.getLogger(Service.class);
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    serviceLog.addAppender(logged);
    try (RunningService service = RunningService.start(server, """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: none, namespaces: {include: [nowhere]}, states: [Failed], maxAgeAfterFinish: 1h}]
        """)) {
      ILoggingEvent synced = logged.list.stream().filter(e -> e.getMessage().startsWith("informers synced")).findFirst().orElseThrow();
      assertThat(synced.getArgumentArray()[0]).as(synced.getFormattedMessage()).isEqualTo(inCluster);
      assertThat(service.status("/readyz")).isEqualTo(200);
      assertThat(service.metric("podsweeper_informer_cache_objects", "resource=\"pods\"")).isEqualTo(inCluster);
    } finally {
      serviceLog.detachAppender(logged);
      client.pods().inNamespace(ns).delete();
    }
  }

  private static void createPods(KubernetesClient client, String ns, int count) throws InterruptedException {
    ExecutorService creators = Executors.newFixedThreadPool(8);
    for (int i = 0; i < count; i++) {
      String name = "p" + i;
      creators.execute(() -> TestPods.create(client, ns, name, "node-a", Map.of()));
    }
    creators.shutdown();
    assertThat(creators.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
    assertThat(client.pods().inNamespace(ns).list().getItems()).hasSize(count);
  }
}
