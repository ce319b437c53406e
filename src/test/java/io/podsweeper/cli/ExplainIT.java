package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.PodCleanupPolicies;
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
@ExtendWith({ApiServerExtension.class, PodCleanupPolicies.class})
class ExplainIT {
  /** A file policy with nothing for the tests' namespaces: what acts there, a PodCleanupPolicy decided. */
  private static final String NOTHING_HERE = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      rules: [{name: nothing, namespaces: {include: [no-such-namespace]}, states: [Failed], maxAgeAfterFinish: 1h}]
      """;

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

  @Test
  void explainAgreesWithTheServiceInAPodCleanupPolicyNamespace(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("team-explain");
    PodCleanupPolicies.clusterPolicy(client, "minMaxAge: 1h\n  allowTerminated: true");
    PodCleanupPolicies.apply(client, ns, "cleanup", "states: [Failed]\n      maxAgeAfterFinish: 1h");
    TestPods.failed(client, ns, "done", Instant.now().minus(Duration.ofHours(2)));
    Path file = Files.writeString(dir.resolve("policy.yaml"), NOTHING_HERE);

    CliRun explain = CliRun.of("explain", ns + "/done", "--policy", file.toString(), "--kubeconfig", server.kubeconfig().toString());

    assertThat(explain.exitCode()).as(explain.err()).isZero();
    assertThat(explain.out())
        .contains("rule nothing: namespace " + ns + " is not in include [no-such-namespace]")
        .contains("profile PodCleanupPolicy " + ns + "/cleanup: no profile-wide protection")
        .containsPattern("rule cleanup/failed: due since \\S+: Failed, finished 2h(\\d+s)? ago; rule cleanup/failed allows 1h after finish")
        .contains("verdict: delete now, by PodLifeTime (rule cleanup/failed)");
    try (RunningService service = RunningService.start(server, NOTHING_HERE)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> client.pods().inNamespace(ns).withName("done").get() == null);
      assertThat(service.decision(ns, "done").get("rule").asText()).isEqualTo("cleanup/failed");
    }
  }

  @Test
  void explainNamesTheDisruptionBudgetThatRefusesTheEvictionTheServiceThenSees(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("explain-pdb");
    Pod pod = TestPods.create(client, ns, "api", "node-a", Map.of("app", "api"));
    TestPods.setStatus(client, pod, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 7)));
    TestPods.forbidDisruption(client, ns, "api");
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: crashloop, namespaces: {include: [%s]}, states: [CrashLoopBackOff]}]
        """.formatted(ns);
    Path file = Files.writeString(dir.resolve("policy.yaml"), policy);

    CliRun explain = CliRun.of("explain", ns + "/api", "--policy", file.toString(), "--kubeconfig", server.kubeconfig().toString());

    assertThat(explain.out()).contains("PodDisruptionBudget api covers it: allows no disruption now (status.disruptionsAllowed 0);"
            + " a refused eviction is retried with backoff 5s doubling to 5m")
        .contains("verdict: evict now, by PodLifeTime (rule crashloop)")
        .contains("but PodDisruptionBudget api refuses it now, so it is retried with backoff until the budget allows a disruption");
    try (RunningService service = RunningService.start(server, policy)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> service.result(ns, "api").equals("pdb-refused"));
      assertThat(client.pods().inNamespace(ns).withName("api").get()).isNotNull();
    }
  }
}
