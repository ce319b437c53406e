package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Retention by count on the real API server: exactly the newest N finished pods of each owner stay. */
@ExtendWith(ApiServerExtension.class)
class RetentionIT {

  private static void finishedPod(KubernetesClient client, String ns, String name, String job, Instant finished) {
    Pod pod = client.pods().inNamespace(ns).resource(new PodBuilder()
        .withNewMetadata().withName(name).withNamespace(ns)
        .addNewOwnerReference().withApiVersion("batch/v1").withKind("Job").withName(job).withUid(UUID.randomUUID().toString())
        .withController(true).endOwnerReference().endMetadata()
        .withNewSpec().withNodeName("node-a").addNewContainer().withName("main").withImage("busybox:1.36").endContainer().endSpec()
        .build()).create();
    TestPods.setStatus(client, pod, "Succeeded", null, List.of(TestPods.terminated("Completed", 0, finished)));
  }

  @Test
  void keepLastLeavesExactlyNPerOwner(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("retention");
    Instant t = Instant.now();
    // Five runs of CronJob "nightly" (one Job each) and four runs of Job "import", finished a minute apart.
    for (int i = 0; i < 5; i++) {
      finishedPod(client, ns, "nightly-run-" + i, "nightly-2945" + (1000 + i) + "0", t.minusSeconds(600 - 60L * i));
    }
    for (int i = 0; i < 4; i++) {
      finishedPod(client, ns, "import-run-" + i, "import", t.minusSeconds(600 - 60L * i));
    }
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules:
          - name: history
            namespaces: {include: [%s]}
            states: [Succeeded]
            keepLast: 2
        """.formatted(ns);
    try (RunningService service = RunningService.start(server, policy)) {
      await().atMost(Duration.ofSeconds(15)).until(() -> client.pods().inNamespace(ns).list().getItems().size() == 4);
      Thread.sleep(1000);
      Set<String> left = client.pods().inNamespace(ns).list().getItems().stream().map(p -> p.getMetadata().getName())
          .collect(Collectors.toSet());
      assertThat(left).containsExactlyInAnyOrder("nightly-run-3", "nightly-run-4", "import-run-2", "import-run-3");

      // A new run finishes: the oldest kept one of its owner goes, at once (not at the next full pass).
      finishedPod(client, ns, "import-run-4", "import", Instant.now());
      await().atMost(Duration.ofSeconds(10)).until(() -> client.pods().inNamespace(ns).withName("import-run-2").get() == null);
      assertThat(client.pods().inNamespace(ns).withName("import-run-3").get()).isNotNull();
      assertThat(client.pods().inNamespace(ns).withName("import-run-4").get()).isNotNull();
    }
  }
}
