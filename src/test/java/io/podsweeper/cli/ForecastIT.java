package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The forecast (the service's endpoint, and {@code plan --within} on the live cluster) says what {@code run} then does. */
@ExtendWith({ApiServerExtension.class, PodCleanupPolicies.class})
class ForecastIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final KubernetesClient client;

  ForecastIT(KubernetesClient client) {
    this.client = client;
  }

  @Test
  void theServiceRemovesExactlyTheForecastPodsAtTheForecastTimes(TestApiServer server) throws Exception {
    String ns = server.newNamespace("forecast");
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: failed, namespaces: {include: [%s]}, states: [Failed], maxAgeAfterFinish: 1h}]
        """.formatted(ns);
    try (RunningService service = RunningService.start(server, policy)) {
      // Finish times have whole seconds, as the API server keeps them; each pod's hour runs out 2 s after the last's.
      Instant hourAgo = Instant.now().truncatedTo(ChronoUnit.SECONDS).minus(Duration.ofHours(1));
      for (int i = 0; i < 4; i++) {
        TestPods.failed(client, ns, "due-" + i, hourAgo.plusSeconds(8 + 2 * i));
      }
      TestPods.failed(client, ns, "in-ten-minutes", hourAgo.plus(Duration.ofMinutes(10)));
      TestPods.setStatus(client, TestPods.create(client, ns, "succeeded", "node-a", Map.of()), "Succeeded", null,
          List.of(TestPods.terminated("Completed", 0, hourAgo.minus(Duration.ofHours(1)))));
      // Once the service's cache has every pod's status, the forecast over an hour holds all five that fail.
      await().atMost(Duration.ofSeconds(5)).until(() -> removals(service, ns, "1h").size() == 5);

      Map<String, Instant> forecast = removals(service, ns, "1m");
      assertThat(forecast).containsOnlyKeys("due-0", "due-1", "due-2", "due-3");
      assertThat(forecast.get("due-3")).isEqualTo(hourAgo.plusSeconds(14).plus(Duration.ofHours(1)));

      await().atMost(Duration.ofSeconds(30)).until(() -> server.removalRequests(ns).size() >= 4);
      Thread.sleep(1500);
      List<TestApiServer.AuditEvent> requests = server.removalRequests(ns);
      assertThat(requests).extracting(TestApiServer.AuditEvent::name).containsExactlyInAnyOrderElementsOf(forecast.keySet());
      // Never before the forecast time (the due time, whole seconds), and within 2 s after it: on a loaded 2-core
      // machine a request once reached the API server 1.009 s after its due time (while other builds ran).
      for (TestApiServer.AuditEvent request : requests) {
        Duration late = Duration.between(forecast.get(request.name()), request.received());
        assertThat(late).as("%s removed at %s, forecast at %s", request.name(), request.received(), forecast.get(request.name()))
            .isGreaterThanOrEqualTo(Duration.ZERO).isLessThanOrEqualTo(Duration.ofSeconds(2));
      }
    }
  }

  @Test
  void aMalformedOrTooLongHorizonIsABadRequestInOneLine(TestApiServer server) throws Exception {
    try (RunningService service = RunningService.start(server, """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: failed, namespaces: {include: [no-such-namespace]}, states: [Failed]}]
        """)) {
      assertThat(service.status("/api/v1/forecast?within=6hours")).isEqualTo(400);
      assertThat(service.get("/api/v1/forecast?within=6hours")).isEqualTo("within: not a duration such as 90m, 6h or 7d: \"6hours\"");
      assertThat(service.status("/api/v1/forecast?within=31d")).isEqualTo(400);
      assertThat(service.get("/api/v1/forecast?within=31d")).isEqualTo("within: 31d is longer than 30d");
      JsonNode byDefault = JSON.readTree(service.get("/api/v1/forecast"));
      assertThat(byDefault.get("within").asText()).isEqualTo("1h");
      assertThat(byDefault.get("note").asText()).contains("node-aware strategies decide per pass");
    }
  }

  @Test
  void planWithinListsAPodCleanupPolicysPods(TestApiServer server, @TempDir Path dir) throws Exception {
    String ns = server.newNamespace("team-forecast");
    PodCleanupPolicies.clusterPolicy(client, "minMaxAge: 1h\n  allowTerminated: true");
    PodCleanupPolicies.apply(client, ns, "cleanup", "states: [Failed]\n      maxAgeAfterFinish: 2h");
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    TestPods.failed(client, ns, "in-ten-minutes", now.minus(Duration.ofMinutes(110)));
    TestPods.failed(client, ns, "in-an-hour", now.minus(Duration.ofHours(1)));
    // The file policy has nothing for this namespace: whatever plan lists there, the team's policy decided.
    Path file = Files.writeString(dir.resolve("policy.yaml"), """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: elsewhere, namespaces: {include: [no-such-namespace]}, states: [Failed], maxAgeAfterFinish: 1h}]
        """);

    CliRun plan = CliRun.of("plan", "--policy", file.toString(), "--kubeconfig", server.kubeconfig().toString(),
        "--within", "30m", "--output", "json");

    assertThat(plan.exitCode()).as(plan.err()).isZero();
    List<JsonNode> removals = new ArrayList<>();
    JSON.readTree(plan.out()).get("forecast").get("removals").forEach(d -> {
      if (d.get("namespace").asText().equals(ns)) {
        removals.add(d);
      }
    });
    assertThat(removals).singleElement().satisfies(d -> {
      assertThat(d.get("name").asText()).isEqualTo("in-ten-minutes");
      assertThat(d.get("profile").asText()).isEqualTo("PodCleanupPolicy " + ns + "/cleanup");
      assertThat(d.get("rule").asText()).isEqualTo("cleanup/failed");
      assertThat(Instant.parse(d.get("dueAt").asText())).isEqualTo(now.plus(Duration.ofMinutes(10)));
    });
    CliRun table = CliRun.of("plan", "--policy", file.toString(), "--kubeconfig", server.kubeconfig().toString(), "--within", "30m");
    assertThat(table.out()).containsPattern(ns + " +in-ten-minutes +delete +PodLifeTime +cleanup/failed ").doesNotContain("in-an-hour");
  }

  /** The forecast removals of one namespace, by pod name, with when each is due. */
  private static Map<String, Instant> removals(RunningService service, String ns, String within) throws Exception {
    Map<String, Instant> removals = new TreeMap<>();
    for (JsonNode d : JSON.readTree(service.get("/api/v1/forecast?within=" + within)).get("removals")) {
      if (d.get("namespace").asText().equals(ns)) {
        removals.put(d.get("name").asText(), Instant.parse(d.get("dueAt").asText()));
      }
    }
    return removals;
  }
}
