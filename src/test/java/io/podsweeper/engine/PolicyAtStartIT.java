package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.app.Service;
import io.podsweeper.policy.Policy;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica that starts while its policy file holds an invalid edit (run --wait-for-valid-policy, as the Deployment
 * runs it) stays up, not ready, removes nothing, and starts working once the file is fixed.
 */
@ExtendWith(ApiServerExtension.class)
class PolicyAtStartIT {

  @Test
  void anInvalidPolicyAtStartRemovesNothingUntilItIsFixed(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("bad-start");
    Pod pod = TestPods.create(client, ns, "job", "node-a", Map.of());
    TestPods.setStatus(client, pod, "Failed", null, List.of(TestPods.terminated("Error", 1, Instant.now().minusSeconds(3600))));
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules: [{name: failed, states: [Faild]}]\n");
    Service service = new Service(server.config(), Policy.removingNothing(file.toString()), Clock.systemUTC(),
        Service.Options.local(0).withPolicyFile(file, UnaryOperator.identity(), Duration.ofMillis(200)));
    service.waitForValidPolicy("rules[0].states[0]: unknown state \"Faild\"");
    try (RunningService running = RunningService.of(service)) {
      service.start();
      assertThat(running.status("/readyz")).isEqualTo(503);
      assertThat(running.status("/healthz")).isEqualTo(200);
      Thread.sleep(1500);
      assertThat(client.pods().inNamespace(ns).withName("job").get()).isNotNull();
      assertThat(running.metric("podsweeper_policy_reloads_total", "result=\"rejected\"")).isEqualTo(1.0);

      Files.writeString(file, """
          apiVersion: podsweeper.io/v1alpha1
          kind: PodSweeperPolicy
          rules:
            - name: failed
              namespaces: {include: [%s]}
              states: [Failed]
          """.formatted(ns));
      await().atMost(Duration.ofSeconds(10)).until(() -> running.status("/readyz") == 200);
      await().atMost(Duration.ofSeconds(10)).until(() -> client.pods().inNamespace(ns).withName("job").get() == null);
    }
  }
}
