package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.app.Service;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The live service against a real API server: which pods go, when, which stay, and what /metrics says. */
@ExtendWith(ApiServerExtension.class)
class SweeperIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void removesExactlyTheDuePodsAndOnTime(TestApiServer server, @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    KubernetesClient client = server.client();
    String jobs = server.newNamespace("sw-jobs");
    String other = server.newNamespace("sw-other");
    String web = server.newNamespace("sw-web");
    Instant now = Instant.now();

    Pod oldSucceeded = finished(client, jobs, "old-succeeded", "Succeeded", "Completed", now.plusSeconds(2).minus(Duration.ofHours(2)));
    Pod youngSucceeded = finished(client, jobs, "young-succeeded", "Succeeded", "Completed", now.plusSeconds(2));
    Pod oldFailed = finished(client, other, "old-failed", "Failed", "Error", now.minus(Duration.ofHours(3)));
    Pod failedNoOptIn = finished(client, web, "failed-web", "Failed", "Error", now.minus(Duration.ofHours(3)));
    Pod crashing = TestPods.create(client, web, "crashing", "node-a", Map.of("app", "api"));
    TestPods.setStatus(client, crashing, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 7)));
    Pod guarded = TestPods.create(client, web, "guarded", "node-a", Map.of("app", "guarded"));
    TestPods.setStatus(client, guarded, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 7)));
    TestPods.forbidDisruption(client, web, "guarded");

    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        fullPassInterval: 1h
        # Both running pods of the web namespace are due at once; the guard that would stop that is SafetyIT's subject.
        guard: {maxNamespaceShare: 1.0}
        rules:
          - name: jobs-succeeded
            namespaces: {include: [%s]}
            states: [Succeeded]
            maxAgeAfterFinish: 1h
          - name: other-failed
            namespaces: {include: [%s]}
            states: [Failed]
            maxAgeAfterFinish: 1h
          - name: crashloop
            namespaces: {include: [%s]}
            states: [CrashLoopBackOff]
            maxAge: 6s
        """.formatted(jobs, other, web);
    java.nio.file.Path audit = dir.resolve("audit.jsonl");
    try (RunningService service = RunningService.start(server, policy, Service.Options.local(0).withAuditLog(audit.toString()))) {
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        assertThat(exists(client, oldSucceeded)).isFalse();
        assertThat(exists(client, oldFailed)).isFalse();
      });
      // The CrashLoopBackOff pods become due 6s after creation, while the service runs: a timer, not a scan.
      Instant crashDeadline = Instant.parse(crashing.getMetadata().getCreationTimestamp()).plusSeconds(6);
      assertThat(Instant.now()).isBefore(crashDeadline);
      assertThat(client.pods().inNamespace(web).withName("crashing").get().getMetadata().getDeletionTimestamp()).isNull();
      await().atMost(Duration.ofSeconds(15)).until(() -> decision(service, web, "crashing") != null);
      JsonNode evicted = decision(service, web, "crashing");
      assertThat(evicted.get("result").asText()).isEqualTo("success");
      assertThat(evicted.get("action").asText()).isEqualTo("evict");
      assertThat(Duration.between(crashDeadline, Instant.parse(evicted.get("time").asText()))).isLessThan(Duration.ofSeconds(2));
      // The eviction went through: the pod (terminationGracePeriodSeconds 0) is gone.
      await().atMost(Duration.ofSeconds(5)).until(() -> !exists(client, crashing));

      await().atMost(Duration.ofSeconds(10)).until(() -> decision(service, web, "guarded") != null);
      assertThat(decision(service, web, "guarded").get("result").asText()).isEqualTo("pdb-refused");
      Thread.sleep(1000);
      assertThat(client.pods().inNamespace(web).withName("guarded").get().getMetadata().getDeletionTimestamp()).isNull();
      assertThat(exists(client, youngSucceeded)).isTrue();
      assertThat(exists(client, failedNoOptIn)).isTrue();

      assertThat(service.metric("podsweeper_removals_total", "result=\"success\"", "namespace=\"" + jobs + "\"", "action=\"delete\"")).isEqualTo(1.0);
      assertThat(service.metric("podsweeper_removals_total", "result=\"success\"", "namespace=\"" + other + "\"", "action=\"delete\"")).isEqualTo(1.0);
      assertThat(service.metric("podsweeper_removals_total", "result=\"success\"", "namespace=\"" + web + "\"", "action=\"evict\"")).isEqualTo(1.0);
      assertThat(service.metric("podsweeper_removals_total", "result=\"pdb-refused\"", "namespace=\"" + web + "\"")).isGreaterThanOrEqualTo(1.0);
      assertThat(service.metric("podsweeper_pdb_refusals_total", "namespace=\"" + web + "\"")).isGreaterThanOrEqualTo(1.0);
      assertThat(service.metric("descheduler_pods_evicted_total", "result=\"success\"", "namespace=\"" + jobs + "\"", "strategy=\"PodLifeTime\"",
          "profile=\"rules\"")).isEqualTo(1.0);
      assertThat(service.metric("podsweeper_terminated_pods", "namespace=\"" + jobs + "\"", "phase=\"Succeeded\"")).isEqualTo(1.0);
      assertThat(service.metric("podsweeper_terminated_pods", "namespace=\"" + web + "\"", "phase=\"Failed\"")).isEqualTo(1.0);
      assertThat(service.metric("podsweeper_pending_deadlines")).isGreaterThanOrEqualTo(1.0);
      assertThat(service.metric("podsweeper_decision_to_request_seconds_count")).isGreaterThanOrEqualTo(3.0);
      assertThat(service.status("/readyz")).isEqualTo(200);
      assertThat(service.status("/healthz")).isEqualTo(200);

      // An Event on every removal (and a Warning for the refusal), an audit line for every decision.
      await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
        assertThat(client.v1().events().inNamespace(jobs).list().getItems()).anySatisfy(e -> {
          assertThat(e.getReason()).isEqualTo("PodSweeperRemoved");
          assertThat(e.getInvolvedObject().getName()).isEqualTo("old-succeeded");
          assertThat(e.getInvolvedObject().getUid()).isEqualTo(oldSucceeded.getMetadata().getUid());
          assertThat(e.getMessage()).contains("rule jobs-succeeded");
        });
        assertThat(client.v1().events().inNamespace(web).list().getItems()).anySatisfy(e -> {
          assertThat(e.getReason()).isEqualTo("PodSweeperEvictionRefused");
          assertThat(e.getType()).isEqualTo("Warning");
        });
        assertThat(client.v1().events().inNamespace(web).list().getItems())
            .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("PodSweeperEvicted"));
      });
      List<JsonNode> lines = java.nio.file.Files.readAllLines(audit).stream().map(l -> {
        try {
          return JSON.readTree(l);
        } catch (java.io.IOException e) {
          throw new IllegalStateException(e);
        }
      }).toList();
      assertThat(lines).anySatisfy(l -> {
        assertThat(l.get("name").asText()).isEqualTo("old-failed");
        assertThat(l.get("uid").asText()).isEqualTo(oldFailed.getMetadata().getUid());
        assertThat(l.get("rule").asText()).isEqualTo("other-failed");
        assertThat(l.get("action").asText()).isEqualTo("delete");
        assertThat(l.get("result").asText()).isEqualTo("success");
        assertThat(l.get("policy").asText()).isEqualTo("test-policy");
        assertThat(l.get("dryRun").asBoolean()).isFalse();
        assertThat(l.has("time") && l.has("reason") && l.has("owner")).isTrue();
      });
      assertThat(lines).anySatisfy(l -> assertThat(l.get("result").asText()).isEqualTo("pdb-refused"));
    }
  }

  @Test
  void neverRemovesAPodRecreatedUnderTheSameName(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("sw-recreate");
    Pod first = TestPods.create(client, ns, "worker", "node-a", Map.of("generation", "first"));
    TestPods.setStatus(client, first, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 3)));
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules:
          - name: crashloop
            namespaces: {include: [%s]}
            states: [CrashLoopBackOff]
            maxAge: 5s
        """.formatted(ns);
    try (RunningService service = RunningService.start(server, policy)) {
      // Replace the pod before its deadline with a new one of the same name that is not due (younger).
      client.pods().inNamespace(ns).withName("worker").withGracePeriod(0).delete();
      await().atMost(Duration.ofSeconds(5)).until(() -> client.pods().inNamespace(ns).withName("worker").get() == null);
      Thread.sleep(2000);
      Pod second = TestPods.create(client, ns, "worker", "node-a", Map.of("generation", "second"));
      TestPods.setStatus(client, second, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 3)));
      Instant firstDeadline = Instant.parse(first.getMetadata().getCreationTimestamp()).plusSeconds(5);
      Instant secondDeadline = Instant.parse(second.getMetadata().getCreationTimestamp()).plusSeconds(5);
      assertThat(secondDeadline).isAfter(firstDeadline);
      // The first pod's deadline passes: nothing may happen to the second one until its own deadline.
      await().until(() -> Instant.now().isAfter(firstDeadline.plusSeconds(1)));
      if (Instant.now().isBefore(secondDeadline)) {
        assertThat(client.pods().inNamespace(ns).withName("worker").get().getMetadata().getDeletionTimestamp()).isNull();
      }
      await().atMost(Duration.ofSeconds(15)).until(() -> decision(service, ns, "worker") != null);
      JsonNode d = decision(service, ns, "worker");
      assertThat(d.get("uid").asText()).isEqualTo(second.getMetadata().getUid());
      assertThat(Instant.parse(d.get("time").asText())).isAfter(secondDeadline);
    }
  }

  @Test
  void dryRunRemovesNothing(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("sw-dry");
    Pod failed = finished(client, ns, "failed", "Failed", "Error", Instant.now().minus(Duration.ofHours(2)));
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        dryRun: true
        rules:
          - name: failed
            namespaces: {include: [%s]}
            states: [Failed]
        """.formatted(ns);
    try (RunningService service = RunningService.start(server, policy)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> decision(service, ns, "failed") != null);
      assertThat(decision(service, ns, "failed").get("result").asText()).isEqualTo("dry-run");
      assertThat(decision(service, ns, "failed").get("dryRun").asBoolean()).isTrue();
      assertThat(service.metric("podsweeper_removals_total", "result=\"dry-run\"", "namespace=\"" + ns + "\"")).isEqualTo(1.0);
      assertThat(service.metric("podsweeper_removals_total", "result=\"success\"", "namespace=\"" + ns + "\"")).isZero();
      assertThat(service.metric("podsweeper_dry_run")).isEqualTo(1.0);
      Thread.sleep(1000);
      assertThat(exists(client, failed)).isTrue();
    }
  }

  private static Pod finished(KubernetesClient client, String ns, String name, String phase, String reason, Instant finishedAt) {
    Pod pod = TestPods.create(client, ns, name, "node-a", Map.of());
    return TestPods.setStatus(client, pod, phase, null, List.of(TestPods.terminated(reason, "Succeeded".equals(phase) ? 0 : 1, finishedAt)));
  }

  private static boolean exists(KubernetesClient client, Pod pod) {
    Pod current = client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName()).get();
    return current != null && current.getMetadata().getUid().equals(pod.getMetadata().getUid());
  }

  private static JsonNode decision(RunningService service, String ns, String name) throws Exception {
    for (JsonNode d : JSON.readTree(service.get("/api/v1/decisions")).get("decisions")) {
      if (d.get("namespace").asText().equals(ns) && d.get("name").asText().equals(name)) {
        return d;
      }
    }
    return null;
  }
}
