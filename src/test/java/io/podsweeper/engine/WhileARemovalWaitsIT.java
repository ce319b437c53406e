package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.app.Service;
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
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The last check before a send, against a real API server, with its audit log as the witness: a removal waiting for its turn on a
 * slow rate is not sent once the kill switch is thrown. (Protection and reload while node-aware decisions wait:
 * {@code BalanceIT}; the unit-level cases: {@code WhileARemovalWaitsTest}.)
 */
@ExtendWith(ApiServerExtension.class)
class WhileARemovalWaitsIT {

  @Test
  void noRequestAfterThePauseWhileARemovalWaitsOnTheRate(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("pause-waiting");
    client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("podsweeper-control").endMetadata()
        .withData(Map.of("paused", "false")).build()).create();
    for (int i = 0; i < 4; i++) {
      TestPods.failed(client, ns, "job-" + i, Instant.now().minusSeconds(3600));
    }
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        limits: {perSecond: 0.2}
        rules:
          - name: failed
            namespaces: {include: [%s]}
            states: [Failed]
        """.formatted(ns);
    try (RunningService service = RunningService.start(server, policy, Service.Options.local(0).withControl(ns, "podsweeper-control"))) {
      // The first goes at once; the next waits 5 s for the rate.
      await().atMost(Duration.ofSeconds(10)).until(() -> server.removalRequests(ns).size() == 1);
      client.configMaps().inNamespace(ns).withName("podsweeper-control").edit(cm -> new ConfigMapBuilder(cm).addToData("paused", "true").build());
      Instant paused = Instant.now();
      await().atMost(Duration.ofSeconds(5)).until(() -> service.metric("podsweeper_paused") == 1.0);
      await().during(Duration.ofSeconds(12)).atMost(Duration.ofSeconds(15)).until(() -> server.removalRequests(ns).size() == 1);
      assertThat(server.removalRequests(ns)).allSatisfy(r -> assertThat(r.received()).isBefore(paused));
      assertThat(client.pods().inNamespace(ns).list().getItems()).hasSize(3);
    }
  }

  /**
   * An edited policy is no way past the rate. The first removal spends the rate's one token (0.2/s); a reload that
   * changes another limit must not hand out a fresh one, so the audit log shows the next request its 5 s later.
   */
  @Test
  void aReloadIsNoWayPastTheRate(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("reload-rate");
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        limits: {perSecond: 0.2%s}
        rules:
          - name: failed
            namespaces: {include: [%s]}
            states: [Failed]
        """;
    Path file = dir.resolve("policy.yaml");
    try (RunningService service = startedOnFile(server, file, policy.formatted("", ns))) {
      TestPods.failed(client, ns, "first", Instant.now().minusSeconds(3600));
      await().atMost(Duration.ofSeconds(10)).until(() -> server.removalRequests(ns).size() == 1);
      Files.writeString(file, policy.formatted(", maxPerNode: 50", ns));
      await().atMost(Duration.ofSeconds(5)).until(() -> service.metric("podsweeper_policy_reloads_total", "result=\"applied\"") == 1.0);
      // The file's policy is composed with the namespaced ones and in force within a second (NamespacedPolicies). The
      // second pod comes after that: one already waiting would spend a fresh token on its way out, unseen.
      Thread.sleep(1500);
      TestPods.failed(client, ns, "second", Instant.now().minusSeconds(3600));
      await().atMost(Duration.ofSeconds(10)).until(() -> server.removalRequests(ns).size() == 2);
      List<TestApiServer.AuditEvent> requests = server.removalRequests(ns);
      assertThat(Duration.between(requests.get(0).received(), requests.get(1).received())).isGreaterThan(Duration.ofMillis(4500));
    }
  }

  /** A dry-run runs the whole path, the request included (dryRun=All): it reports the refusal the live run then meets. */
  @Test
  void aDryRunReportsThePdbRefusalTheLiveRunThenMeets(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("dry-pdb");
    Pod pod = TestPods.create(client, ns, "web", "node-a", Map.of("app", "web"));
    TestPods.setStatus(client, pod, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 4)));
    TestPods.forbidDisruption(client, ns, "web");
    String rules = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        dryRun: %s
        rules:
          - name: crashloop
            namespaces: {include: [%s]}
            states: [CrashLoopBackOff]
        """;
    Path file = dir.resolve("policy.yaml");
    try (RunningService service = startedOnFile(server, file, rules.formatted("true", ns))) {
      await().atMost(Duration.ofSeconds(10)).until(() -> service.result(ns, "web").equals("pdb-would-refuse"));
      assertThat(client.pods().inNamespace(ns).withName("web").get()).isNotNull();
      Files.writeString(file, rules.formatted("false", ns));
      await().atMost(Duration.ofSeconds(10)).until(() -> service.result(ns, "web").equals("pdb-refused"));
      assertThat(service.metric("podsweeper_removals_total", "result=\"pdb-would-refuse\"", "namespace=\"" + ns + "\"")).isEqualTo(1.0);
    }
  }

  /** A dry-run backlog is counted once per pod through full passes and a reload, not again each time. */
  @Test
  void aDryRunBacklogIsCountedOncePerPod(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("dry-backlog");
    for (int i = 0; i < 6; i++) {
      TestPods.failed(client, ns, "job-" + i, Instant.now().minusSeconds(3600));
    }
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        dryRun: true
        fullPassInterval: 1s
        rules:
          - name: failed
            namespaces: {include: [%s]}
            states: [Failed]
        %s""";
    Path file = dir.resolve("policy.yaml");
    try (RunningService service = startedOnFile(server, file, policy.formatted(ns, ""))) {
      String dryRuns = "result=\"dry-run\"";
      await().atMost(Duration.ofSeconds(10)).until(() -> service.metric("podsweeper_removals_total", dryRuns, "namespace=\"" + ns + "\"") == 6.0);
      // Passes every second, and a reload that adds a rule about other pods.
      Files.writeString(file, policy.formatted(ns, "  - {name: other, states: [Succeeded]}\n"));
      await().atMost(Duration.ofSeconds(5)).until(() -> service.metric("podsweeper_policy_reloads_total", "result=\"applied\"") == 1.0);
      Thread.sleep(3000);
      assertThat(service.metric("podsweeper_removals_total", dryRuns, "namespace=\"" + ns + "\"")).isEqualTo(6.0);
      assertThat(client.pods().inNamespace(ns).list().getItems()).hasSize(6);
    }
  }

  /** The service started on a policy file, written first, that it reloads when it changes (looked at every 200 ms). */
  private static RunningService startedOnFile(TestApiServer server, Path file, String policy) throws Exception {
    Files.writeString(file, policy);
    return RunningService.start(server, policy, Service.Options.local(0).withPolicyFile(file, UnaryOperator.identity(), Duration.ofMillis(200)));
  }
}
