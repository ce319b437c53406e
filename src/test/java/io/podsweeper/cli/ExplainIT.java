package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code explain} against a live cluster says what {@code run} then does. */
@ExtendWith(ApiServerExtension.class)
class ExplainIT {

  @Test
  void explainMatchesWhatRunDoes(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("explain");
    for (String name : List.of("due", "protected")) {
      Pod pod = TestPods.create(client, ns, name, "node-a", Map.of());
      if (name.equals("protected")) {
        client.pods().inNamespace(ns).withName(name).edit(p -> {
          p.getMetadata().setAnnotations(Map.of("podsweeper.io/protect", "true"));
          return p;
        });
      }
      TestPods.setStatus(client, client.pods().inNamespace(ns).withName(name).get(), "Failed", null,
          List.of(TestPods.terminated("Error", 1, Instant.now().minusSeconds(7200))));
    }
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules:
          - name: failed
            namespaces: {include: [%s]}
            states: [Failed]
            maxAgeAfterFinish: 1h
        """.formatted(ns);
    Path file = Files.writeString(dir.resolve("policy.yaml"), policy);

    CliRun due = CliRun.of("explain", ns + "/due", "--policy", file.toString(), "--kubeconfig", server.kubeconfig().toString());
    assertThat(due.exitCode()).as(due.err()).isZero();
    assertThat(due.out()).contains("verdict: delete now, by PodLifeTime (rule failed)");
    CliRun kept = CliRun.of("explain", ns + "/protected", "--policy", file.toString(), "--kubeconfig", server.kubeconfig().toString());
    assertThat(kept.out()).contains("protected: annotated podsweeper.io/protect").contains("verdict: never");

    try (RunningService service = RunningService.start(server, policy)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> client.pods().inNamespace(ns).withName("due").get() == null);
      Thread.sleep(1000);
      assertThat(client.pods().inNamespace(ns).withName("protected").get()).isNotNull();
    }
  }
}
