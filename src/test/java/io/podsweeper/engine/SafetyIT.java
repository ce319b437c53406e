package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.app.Service;
import io.podsweeper.kube.Leadership;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Fault injection and safety switches against the real API server; see docs/reliability.md for what each proves. */
@ExtendWith(ApiServerExtension.class)
class SafetyIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static String crashloopPolicy(String ns, String maxAge, String extra) {
    return """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        %s
        rules:
          - name: crashloop
            namespaces: {include: [%s]}
            states: [CrashLoopBackOff]
            maxAge: %s
        """.formatted(extra, ns, maxAge);
  }

  private static Pod crashing(KubernetesClient client, String ns, String name) {
    Pod pod = TestPods.create(client, ns, name, "node-a", Map.of("app", "api"));
    return TestPods.setStatus(client, pod, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 4)));
  }

  private static boolean gone(KubernetesClient client, String ns, String name) {
    return client.pods().inNamespace(ns).withName(name).get() == null;
  }

  /**
   * A crash-looping pod "a" in {@code ns}, and a service whose policy is {@code file}, looked at for changes every
   * 200 ms: first a rule that wants the pod only after 24 h, so a second later it is still there, not terminating.
   */
  private static RunningService startReloadingWithAPodNotDueYet(TestApiServer server, Path file, String ns) throws Exception {
    crashing(server.client(), ns, "a");
    String policy = crashloopPolicy(ns, "24h", "");
    Files.writeString(file, policy);
    RunningService service = RunningService.start(server, policy,
        Service.Options.local(0).withPolicyFile(file, UnaryOperator.identity(), Duration.ofMillis(200)));
    try {
      Thread.sleep(1000);
      assertThat(server.client().pods().inNamespace(ns).withName("a").get().getMetadata().getDeletionTimestamp()).isNull();
    } catch (Exception | AssertionError e) {
      service.close();
      throw e;
    }
    return service;
  }

  private static Service.Options withControl(String ns, Optional<String> token) {
    Service.Options o = Service.Options.local(0).withControl(ns, "podsweeper-control");
    return token.map(o::withAdminToken).orElse(o);
  }

  private static void setPaused(KubernetesClient client, String ns, boolean paused) {
    client.configMaps().inNamespace(ns).withName("podsweeper-control")
        .edit(cm -> {
          cm.getData().put("paused", String.valueOf(paused));
          return cm;
        });
  }

  @Test
  void killSwitchStopsEveryRemovalAndResumes(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("kill");
    String token = "s3cret-admin-token-0123456789";
    try (RunningService service = RunningService.start(server, crashloopPolicy(ns, "1s", ""), withControl(ns, Optional.of(token)))) {
      // The admin API needs the token; with it, pausing writes the control ConfigMap.
      assertThat(service.post("/api/v1/pause", null)).isEqualTo(401);
      assertThat(service.post("/api/v1/pause", "wrong-token-wrong-token")).isEqualTo(401);
      assertThat(service.post("/api/v1/pause", token)).isEqualTo(200);
      await().atMost(Duration.ofSeconds(5)).until(() -> {
        ConfigMap cm = client.configMaps().inNamespace(ns).withName("podsweeper-control").get();
        return cm != null && "true".equals(cm.getData().get("paused"));
      });
      assertThat(service.metric("podsweeper_paused")).isEqualTo(1.0);

      crashing(client, ns, "a");
      await().atMost(Duration.ofSeconds(10)).until(() -> result(service, ns, "a").equals("paused"));
      Thread.sleep(1000);
      assertThat(gone(client, ns, "a")).isFalse();

      // Resuming through the ConfigMap alone (kubectl) is enough, without a restart.
      setPaused(client, ns, false);
      await().atMost(Duration.ofSeconds(10)).until(() -> gone(client, ns, "a"));
      assertThat(service.metric("podsweeper_paused")).isZero();

      setPaused(client, ns, true);
      await().atMost(Duration.ofSeconds(5)).until(() -> service.metric("podsweeper_paused") == 1.0);
      crashing(client, ns, "b");
      await().atMost(Duration.ofSeconds(10)).until(() -> result(service, ns, "b").equals("paused"));
      assertThat(service.post("/api/v1/resume", token)).isEqualTo(200);
      await().atMost(Duration.ofSeconds(10)).until(() -> gone(client, ns, "b"));
    }
  }

  @Test
  void theGuardRefusesToEmptyANamespace(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("guard");
    for (int i = 0; i < 10; i++) {
      crashing(client, ns, "p" + i);
    }
    // A typo: 1s instead of 1h. The guard allows at most half the namespace's running pods per window (the
    // cluster-wide share is lifted: this small test cluster holds little more than these pods).
    String guard = "guard: {maxNamespaceShare: 0.5, maxClusterShare: 1.0}";
    try (RunningService service = RunningService.start(server, crashloopPolicy(ns, "1s", guard), withControl(ns, Optional.empty()))) {
      await().atMost(Duration.ofSeconds(15)).until(() -> service.metric("podsweeper_guard_tripped") == 1.0);
      Thread.sleep(1500);
      // Five were admitted before the sixth tripped the guard; those still waiting for the rate or a request slot
      // then meet the pause at their final check. Never more than half goes.
      long left = client.pods().inNamespace(ns).list().getItems().size();
      assertThat(left).isBetween(5L, 9L);
      assertThat(service.metric("podsweeper_paused")).isEqualTo(1.0);
      ConfigMap cm = client.configMaps().inNamespace(ns).withName("podsweeper-control").get();
      // A share stops evictions only: finished pods would still be deleted.
      assertThat(cm.getData().get("paused")).isEqualTo("evictions");
      assertThat(cm.getData().get("reason")).contains("blast-radius guard: would evict 6 of 10 running pods in namespace " + ns);
      assertThat(client.v1().events().inNamespace(ns).list().getItems())
          .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("PodSweeperGuardTripped"));
    }
  }

  @Test
  void aValidPolicyChangeTakesEffectAndAnInvalidOneIsRejected(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("reload");
    Path file = dir.resolve("policy.yaml");
    try (RunningService service = startReloadingWithAPodNotDueYet(server, file, ns)) {
      Files.writeString(file, "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules: [{name: x, states: [Crashloop]}]\n");
      await().atMost(Duration.ofSeconds(5)).until(() -> service.metric("podsweeper_policy_reloads_total", "result=\"rejected\"") == 1.0);
      assertThat(gone(client, ns, "a")).isFalse();
      Files.writeString(file, crashloopPolicy(ns, "1s", ""));
      await().atMost(Duration.ofSeconds(10)).until(() -> gone(client, ns, "a"));
      assertThat(service.metric("podsweeper_policy_reloads_total", "result=\"applied\"")).isEqualTo(1.0);
    }
  }

  /**
   * The grace period is the policy's in force when the request is sent: after a reload to {@code gracePeriodSeconds:
   * 30}, an eviction asks for 30 s, and the pod (no kubelet here to end it) stays terminating for them. (Before, the
   * start's policy's grace period, here none, went with every request: the pod, whose own is 0, went at once.)
   */
  @Test
  void aReloadedGracePeriodGoesWithTheNextRequest(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("grace");
    Path file = dir.resolve("policy.yaml");
    // Due only under the reloaded policy, so that its removal is sent under it (a reload takes effect a moment after
    // the file is read).
    try (RunningService service = startReloadingWithAPodNotDueYet(server, file, ns)) {
      Files.writeString(file, crashloopPolicy(ns, "1s", "gracePeriodSeconds: 30"));

      await().atMost(Duration.ofSeconds(10)).until(() -> {
        Pod p = client.pods().inNamespace(ns).withName("a").get();
        return p == null || p.getMetadata().getDeletionTimestamp() != null;
      });
      Pod terminating = client.pods().inNamespace(ns).withName("a").get();
      assertThat(terminating).as("the pod, terminating for the reloaded grace period").isNotNull();
      assertThat(terminating.getMetadata().getDeletionGracePeriodSeconds()).isEqualTo(30L);
    } finally {
      client.pods().inNamespace(ns).withName("a").withGracePeriod(0).delete();
    }
  }

  @Test
  void onlyTheLeaderRemovesAndAFollowerTakesOver(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("leader");
    Leadership.Timing fast = new Leadership.Timing(Duration.ofSeconds(3), Duration.ofSeconds(2), Duration.ofMillis(500));
    List<RunningService> replicas = new ArrayList<>();
    try {
      for (String id : List.of("replica-1", "replica-2")) {
        replicas.add(RunningService.start(server, crashloopPolicy(ns, "2s", ""),
            Service.Options.local(0).withLeaderElection(new Service.Options.LeaderElection(ns, "podsweeper", id, fast))));
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> replicas.stream().mapToDouble(r -> r.metric("podsweeper_leader")).sum() == 1.0);
      RunningService leader = replicas.stream().filter(r -> r.metric("podsweeper_leader") == 1.0).findFirst().orElseThrow();
      RunningService follower = replicas.stream().filter(r -> r != leader).findFirst().orElseThrow();

      crashing(client, ns, "a");
      await().atMost(Duration.ofSeconds(10)).until(() -> gone(client, ns, "a"));
      assertThat(result(leader, ns, "a")).isEqualTo("success");
      assertThat(result(follower, ns, "a")).isEmpty();

      leader.close();
      replicas.remove(leader);
      await().atMost(Duration.ofSeconds(5)).until(() -> follower.metric("podsweeper_leader") == 1.0);
      crashing(client, ns, "b");
      await().atMost(Duration.ofSeconds(10)).until(() -> gone(client, ns, "b"));
      assertThat(result(follower, ns, "b")).isEqualTo("success");
    } finally {
      replicas.forEach(RunningService::close);
    }
  }

  @Test
  void survivesTheApiServerGoingAwayAndActsOnlyOnAFreshCache(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("outage");
    crashing(client, ns, "a");
    try (RunningService service = RunningService.start(server, crashloopPolicy(ns, "8s", ""))) {
      assertThat(service.status("/readyz")).isEqualTo(200);
      server.down();
      try {
        await().atMost(Duration.ofSeconds(20)).until(() -> service.status("/readyz") == 503);
        assertThat(service.status("/healthz")).isEqualTo(200);
        // The pod's deadline passes while the server is away: nothing is attempted from the stale cache.
        Thread.sleep(8000);
        assertThat(result(service, ns, "a")).isEmpty();
        assertThat(service.metric("podsweeper_api_errors_total")).isZero();
      } finally {
        server.up();
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> service.status("/readyz") == 200);
      await().atMost(Duration.ofSeconds(15)).until(() -> gone(client, ns, "a"));
      assertThat(result(service, ns, "a")).isEqualTo("success");
    }
  }

  private static String result(RunningService service, String ns, String name) throws Exception {
    for (JsonNode d : JSON.readTree(service.get("/api/v1/decisions")).get("decisions")) {
      if (d.get("namespace").asText().equals(ns) && d.get("name").asText().equals(name)) {
        return d.get("result").asText();
      }
    }
    return "";
  }
}
