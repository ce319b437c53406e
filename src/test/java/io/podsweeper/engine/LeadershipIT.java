package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.app.Service;
import io.podsweeper.kube.Leadership;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leader election under the faults that broke it: a leader stopped (SIGSTOP) past its lease and resumed, and the API
 * server away past the renew deadline. The witness of who sent what is the API server's audit log, where every
 * request names its replica in its user agent.
 */
@ExtendWith(ApiServerExtension.class)
class LeadershipIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Leadership.Timing FAST = new Leadership.Timing(Duration.ofSeconds(4), Duration.ofSeconds(3), Duration.ofSeconds(1));

  private static String policy(String ns, String extra) {
    return """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        %s
        rules:
          - name: failed
            namespaces: {include: [%s]}
            states: [Failed]
            maxAgeAfterFinish: 1h
        """.formatted(extra, ns);
  }

  @Test
  void aResumedLeaderSendsNothingOnceAnotherHoldsTheLease(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("fence");
    // One removal every 2 s: the leader's worker waits for its next token with due pods queued, and is stopped there.
    String slow = policy(ns, "limits: {perSecond: 0.5}");
    Process a = startProcess(server, Files.writeString(dir.resolve("policy.yaml"), slow), ns, "replica-a", dir.resolve("a.log"));
    try {
      await().atMost(Duration.ofSeconds(60)).until(() -> "replica-a".equals(holder(client, ns)));
      try (RunningService b = RunningService.start(server, slow, withLeaderElection(ns, "replica-b"))) {
        List<String> pods = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
          pods.add(failedLongAgo(client, ns, "job-" + i));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> !sentBy(server.removalRequests(ns), "replica-a").isEmpty());
        signal(a.pid(), "STOP");
        await().atMost(Duration.ofSeconds(20)).until(() -> "replica-b".equals(holder(client, ns)));
        Instant acquired = server.audit().stream()
            .filter(e -> "leases".equals(e.resource()) && ns.equals(e.namespace()) && e.code() / 100 == 2 && e.userAgent().endsWith("(replica-b)"))
            .findFirst().orElseThrow().received();
        // While replica-b works through the due pods, replica-a wakes up in the middle of a removal.
        signal(a.pid(), "CONT");
        await().atMost(Duration.ofSeconds(60)).until(() -> client.pods().inNamespace(ns).list().getItems().isEmpty());

        List<TestApiServer.AuditEvent> removals = server.removalRequests(ns);
        assertThat(sentBy(removals, "replica-a")).as("replica-a's removals after replica-b acquired the lease at %s", acquired)
            .allSatisfy(e -> assertThat(e.received()).isBefore(acquired));
        Map<String, Long> removedTimes = removals.stream().filter(e -> e.code() == 200)
            .collect(Collectors.groupingBy(TestApiServer.AuditEvent::name, Collectors.counting()));
        assertThat(removedTimes).containsOnlyKeys(pods).allSatisfy((pod, times) -> assertThat(times).as(pod).isEqualTo(1));
        assertThat(b.metric("podsweeper_leader")).isEqualTo(1.0);
      }
    } finally {
      signal(a.pid(), "CONT");
      a.destroy();
      a.waitFor();
    }
  }

  /**
   * A port-forward to the Service lands on either replica (issue 41): the follower answers with the leader's
   * decisions, forwarded to the address the leader wrote on the Lease with its holder identity.
   */
  @Test
  void aFollowerAnswersWithTheLeadersDecisions(TestApiServer server) throws Exception {
    String ns = server.newNamespace("wholeads");
    Map<String, RunningService> replicas = new LinkedHashMap<>();
    try {
      startTwoReplicas(server, ns, replicas);
      String leader = removesTheNextDuePod(server, replicas, ns, "job-0");
      String follower = replicas.keySet().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();

      Lease lease = server.client().resources(Lease.class).inNamespace(ns).withName("podsweeper").get();
      assertThat(lease.getMetadata().getAnnotations()).containsEntry(Leadership.ADDRESS_ANNOTATION,
          leader + "@127.0.0.1:" + replicas.get(leader).service().httpPort());
      JsonNode followers = JSON.readTree(replicas.get(follower).get("/api/v1/decisions"));
      assertThat(followers.get("leader").asText()).isEqualTo(leader);
      assertThat(followers.get("thisReplica").asText()).isEqualTo(leader);
      assertThat(followers.get("leading").asBoolean()).isTrue();
      assertThat(followers.get("via").asText()).isEqualTo(follower);
      assertThat(followers.get("decisions")).extracting(d -> d.get("name").asText()).containsExactly("job-0");
      JsonNode leaders = JSON.readTree(replicas.get(leader).get("/api/v1/decisions"));
      assertThat(leaders.get("leader").asText()).isEqualTo(leader);
      assertThat(leaders.get("thisReplica").asText()).isEqualTo(leader);
      assertThat(leaders.get("leading").asBoolean()).isTrue();
      assertThat(leaders.has("askTheLeader")).isFalse();
      assertThat(leaders.get("decisions")).extracting(d -> d.get("name").asText()).containsExactly("job-0");
    } finally {
      replicas.values().forEach(RunningService::close);
    }
  }

  @Test
  void leadershipComesBackAfterTheApiServerWasAwayPastTheRenewDeadline(TestApiServer server) throws Exception {
    String ns = server.newNamespace("outage");
    Map<String, RunningService> replicas = new LinkedHashMap<>();
    try {
      startTwoReplicas(server, ns, replicas);
      server.down();
      try {
        // Nobody can renew: by its own clock, the leader stops counting itself leader within the lease.
        await().atMost(FAST.leaseDuration()).until(() -> leaders(replicas) == 0);
        Thread.sleep(Duration.ofSeconds(30).toMillis());
        assertThat(replicas.values()).allSatisfy(r -> assertThat(r.status("/healthz")).isEqualTo(200));
      } finally {
        server.up();
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> leaders(replicas) == 1);
      String leader = removesTheNextDuePod(server, replicas, ns, "after-outage");
      assertThat(leaders(replicas)).isEqualTo(1);

      // And both still campaign: whichever leads now steps down, the other takes over.
      replicas.remove(leader).close();
      await().atMost(Duration.ofSeconds(10)).until(() -> leaders(replicas) == 1);
      removesTheNextDuePod(server, replicas, ns, "after-handover");
    } finally {
      replicas.values().forEach(RunningService::close);
    }
  }

  /**
   * What an operator reads of an API server outage under leader election, in the service's own log format (issue 41:
   * fabric8's elector logged 17 WARN and ERROR lines in 45 s): one WARN when it starts, one INFO when it ends, the
   * leadership it cost and won back at INFO, nothing of fabric8's. And a leader in dry-run does not say it removes pods.
   */
  @Test
  void anOutageIsOneWarningAndOneInfoAndADryRunLeaderSaysItRemovesNothing(TestApiServer server, @TempDir Path dir) throws Exception {
    String ns = server.newNamespace("quiet");
    Path log = dir.resolve("replica.log");
    Process replica = startProcess(server, Files.writeString(dir.resolve("policy.yaml"), policy(ns, "dryRun: true")), ns, "replica-q", log);
    try {
      await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(log).contains("replica-q is the leader"));
      assertThat(Files.readString(log)).contains("replica-q is the leader: dry-run, it would remove pods and removes none")
          .doesNotContain("removing pods");
      int before = Files.readAllLines(log).size();
      server.down();
      try {
        // Past the renew deadline and the lease: the elector fails every retry period meanwhile.
        Thread.sleep(Duration.ofSeconds(20).toMillis());
      } finally {
        server.up();
      }
      await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(log).contains("reachable again"));
      await().atMost(Duration.ofSeconds(30)).until(() -> Files.readString(log).lines().skip(before).anyMatch(l -> l.contains("is the leader")));
      List<String> during = Files.readAllLines(log).stream().skip(before).toList();
      List<String> warnings = during.stream().filter(l -> l.contains(" WARN ") || l.contains(" ERROR ")).toList();
      assertThat(warnings).as(String.join("\n", during)).singleElement().asString().contains("unreachable or a watch broken");
      assertThat(during).as(String.join("\n", during)).filteredOn(l -> l.contains("reachable again")).hasSize(1);
      assertThat(during).noneSatisfy(l -> assertThat(l).containsPattern("\\] i\\.f\\."));
    } finally {
      replica.destroy();
      replica.waitFor();
    }
  }

  @Test
  void aLeaderCutOffByAFrozenApiServerStopsCountingItselfLeaderWithinTheLease(TestApiServer server) throws Exception {
    String ns = server.newNamespace("frozen");
    try (RunningService replica = RunningService.start(server, policy(ns, ""), withLeaderElection(ns, "replica-f"))) {
      await().atMost(Duration.ofSeconds(15)).until(() -> replica.metric("podsweeper_leader") == 1.0);
      long apiServer = apiServerPid(server);
      signal(apiServer, "STOP");
      try {
        // Renewals hang rather than fail: fabric8 learns only when they time out, past the lease; the fence, by the clock.
        await().atMost(FAST.leaseDuration()).until(() -> replica.metric("podsweeper_leader") == 0.0);
      } finally {
        signal(apiServer, "CONT");
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> replica.metric("podsweeper_leader") == 1.0);
    }
  }

  @Test
  void aReplicaThatCannotCampaignFailsItsHealthCheck(TestApiServer server) throws Exception {
    String ns = server.newNamespace("nocampaign");
    // fabric8 refuses a retry period that its jitter could stretch past the renew deadline.
    Leadership.Timing refused = new Leadership.Timing(Duration.ofSeconds(4), Duration.ofSeconds(3), Duration.ofSeconds(2));
    try (RunningService service = RunningService.start(server, policy(ns, ""),
        Service.Options.local(0).withLeaderElection(new Service.Options.LeaderElection(ns, "podsweeper", "replica-x", refused)))) {
      await().atMost(Duration.ofSeconds(5)).until(() -> service.status("/healthz") == 503);
      assertThat(service.get("/healthz")).startsWith("leader election stopped: ").contains("renewDeadline must be greater than retryPeriod");
      assertThat(service.status("/readyz")).isEqualTo(200);
    }
  }

  /** Makes a pod due; returns the identity of the one replica that removed it, as the audit log and /metrics say. */
  private static String removesTheNextDuePod(TestApiServer server, Map<String, RunningService> replicas, String ns, String name) {
    failedLongAgo(server.client(), ns, name);
    await().atMost(Duration.ofSeconds(30)).until(() -> server.client().pods().inNamespace(ns).withName(name).get() == null);
    List<TestApiServer.AuditEvent> removals = server.removalRequests(ns).stream().filter(e -> e.name().equals(name)).toList();
    String leader = replicas.keySet().stream().filter(id -> replicas.get(id).metric("podsweeper_leader") == 1.0).findFirst().orElseThrow();
    assertThat(removals).hasSize(1).allSatisfy(e -> assertThat(e.userAgent()).endsWith("(" + leader + ")"));
    return leader;
  }

  /** Two replicas campaigning for one Lease in {@code ns}, put in {@code replicas} (the caller closes them), once one leads. */
  private static void startTwoReplicas(TestApiServer server, String ns, Map<String, RunningService> replicas) throws Exception {
    for (String id : List.of("replica-1", "replica-2")) {
      replicas.put(id, RunningService.start(server, policy(ns, ""), withLeaderElection(ns, id)));
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> leaders(replicas) == 1.0);
  }

  /** A replica on loopback, which says so on the Lease while it leads (as $POD_IP does in a pod). */
  private static Service.Options withLeaderElection(String ns, String identity) {
    return Service.Options.local(0).withLeaderElection(new Service.Options.LeaderElection(ns, "podsweeper", identity,
        Optional.of("127.0.0.1"), FAST));
  }

  private static double leaders(Map<String, RunningService> replicas) {
    return replicas.values().stream().mapToDouble(r -> r.metric("podsweeper_leader")).sum();
  }

  private static String holder(KubernetesClient client, String ns) {
    Lease lease = client.resources(Lease.class).inNamespace(ns).withName("podsweeper").get();
    return lease == null ? null : lease.getSpec().getHolderIdentity();
  }

  private static List<TestApiServer.AuditEvent> sentBy(List<TestApiServer.AuditEvent> events, String identity) {
    return events.stream().filter(e -> e.userAgent().endsWith("(" + identity + ")")).toList();
  }

  private static String failedLongAgo(KubernetesClient client, String ns, String name) {
    Pod pod = TestPods.create(client, ns, name, "node-a", Map.of());
    TestPods.setStatus(client, pod, "Failed", null, List.of(TestPods.terminated("Error", 1, Instant.now().minusSeconds(7200))));
    return name;
  }

  /** {@code podsweeper run} as a process of its own, which SIGSTOP can freeze while the test goes on. */
  private static Process startProcess(TestApiServer server, Path policy, String ns, String identity, Path log) throws IOException {
    Path jar = Path.of(System.getProperty("podsweeper.projectDir", "."), "target", "podsweeper.jar");
    return new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar.toString(), "run",
        "--policy", policy.toString(), "--kubeconfig", server.kubeconfig().toString(), "--http-port", "0", "--probe-port", "0", "--http-host", "127.0.0.1",
        "--namespace", ns, "--control-configmap", "", "--leader-elect", "--leader-elect-identity", identity,
        "--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline", "3s", "--leader-elect-retry-period", "1s")
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
  }

  private static void signal(long pid, String signal) throws IOException, InterruptedException {
    new ProcessBuilder("kill", "-" + signal, String.valueOf(pid)).inheritIO().start().waitFor();
  }

  /** The test API server's process, found by its port: SIGSTOP freezes it, so requests hang instead of failing. */
  private static long apiServerPid(TestApiServer server) {
    String port = "--secure-port " + server.config().getMasterUrl().replaceAll(".*:(\\d+)/?$", "$1") + " ";
    return ProcessHandle.allProcesses()
        .filter(p -> p.info().commandLine().map(c -> c.contains("kube-apiserver") && c.contains(port)).orElse(false))
        .findFirst().orElseThrow().pid();
  }
}
