package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.podsweeper.app.Service;
import io.podsweeper.kube.ControlConfigMap;
import io.podsweeper.kube.KubeClients;
import io.podsweeper.kube.Leadership;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.Manifests;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The kill switch as deployed: replicas authenticated as the manifests' ServiceAccount, the control ConfigMap in
 * namespace {@code podsweeper} under the shipped Role. The API server's audit log witnesses what was sent: no
 * removal after a pause was answered, and who wrote the ConfigMap.
 */
@ExtendWith(ApiServerExtension.class)
class KillSwitchIT {
  private static final String NS = Manifests.NAMESPACE;
  private static final String TOKEN = "kill-switch-admin-token-0123456789";
  private static final Leadership.Timing FAST = new Leadership.Timing(Duration.ofSeconds(3), Duration.ofSeconds(2), Duration.ofMillis(500));

  @BeforeAll
  static void applyTheBase(TestApiServer server) throws Exception {
    Manifests.applyBase(server);
  }

  @Test
  void aPauseWithTheConfigMapDeletedCreatesItAndStopsEveryReplica(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    admin.configMaps().inNamespace(NS).withName(Manifests.CONTROL).delete();
    String ns = server.newNamespace("ks-two");
    Config asDeployed = Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT);
    String lease = "ks-" + UUID.randomUUID().toString().substring(0, 8);
    List<RunningService> replicas = new ArrayList<>();
    try {
      for (String id : List.of("replica-1", "replica-2")) {
        replicas.add(RunningService.start(asDeployed, crashloopPolicy(ns), Service.Options.local(0)
            .withControl(NS, Manifests.CONTROL).withAdminToken(TOKEN)
            .withLeaderElection(new Service.Options.LeaderElection(NS, lease, id, FAST))));
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> replicas.stream().mapToDouble(r -> r.metric("podsweeper_leader")).sum() == 1.0);
      RunningService leader = replicas.stream().filter(r -> r.metric("podsweeper_leader") == 1.0).findFirst().orElseThrow();
      RunningService follower = replicas.stream().filter(r -> r != leader).findFirst().orElseThrow();
      crashing(admin, ns, "before");
      await().atMost(Duration.ofSeconds(10)).until(() -> gone(admin, ns, "before"));

      // The pause goes to the follower, which removes nothing itself: only the ConfigMap can stop the leader.
      Instant asked = Instant.now();
      HttpResponse<String> answer = follower.postForAnswer("/api/v1/pause", TOKEN);
      Instant answered = Instant.now();
      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(server.audit()).anySatisfy(e -> {
        assertThat(e.resource() + " " + e.verb() + " " + e.namespace() + "/" + e.name())
            .isEqualTo("configmaps create " + NS + "/" + Manifests.CONTROL);
        assertThat(e.user()).isEqualTo(Manifests.user(Manifests.SERVICE_ACCOUNT));
        assertThat(e.code()).isEqualTo(201);
        assertThat(e.received()).isBetween(asked, answered);
      });
      assertThat(Manifests.control(server).getData()).containsEntry("paused", "true")
          .containsEntry("reason", "paused through the admin API");
      for (RunningService replica : replicas) {
        await().atMost(Duration.ofSeconds(5)).until(() -> replica.metric("podsweeper_paused") == 1.0);
      }

      for (int i = 0; i < 5; i++) {
        crashing(admin, ns, "after-" + i);
      }
      for (int i = 0; i < 5; i++) {
        String name = "after-" + i;
        await().atMost(Duration.ofSeconds(10)).until(() -> leader.result(ns, name).equals("paused"));
      }
      Thread.sleep(2000);
      assertThat(server.removalRequests(ns)).allSatisfy(e -> assertThat(e.received()).isBefore(answered));
      assertThat(admin.pods().inNamespace(ns).list().getItems()).hasSize(5);

      assertThat(follower.post("/api/v1/resume", TOKEN)).isEqualTo(200);
      await().atMost(Duration.ofSeconds(15)).until(() -> admin.pods().inNamespace(ns).list().getItems().isEmpty());
    } finally {
      replicas.forEach(RunningService::close);
    }
  }

  @Test
  void aPauseThatCannotBeWrittenAnswersAnErrorAndStillStopsThisReplica(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    admin.configMaps().inNamespace(NS).withName(Manifests.CONTROL).delete();
    String ns = server.newNamespace("ks-403");
    // 0.1.0's Role could not create the ConfigMap: the shipped permissions without that one rule.
    String sa = "podsweeper-no-create";
    grantShippedRolesWithout(admin, sa, "configmaps", "create");
    // The guard's window ConfigMap exists already (it is kept before every eviction, and without create it could not
    // be made): this test is about the kill switch's.
    admin.configMaps().inNamespace(NS).resource(new io.fabric8.kubernetes.api.model.ConfigMapBuilder().withNewMetadata()
        .withName(Manifests.CONTROL + "-guard").endMetadata().build()).createOr(c -> c.update());
    try (RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, sa), crashloopPolicy(ns),
        Service.Options.local(0).withControl(NS, Manifests.CONTROL).withAdminToken(TOKEN))) {
      crashing(admin, ns, "before");
      await().atMost(Duration.ofSeconds(10)).until(() -> gone(admin, ns, "before"));

      HttpResponse<String> pause = service.postForAnswer("/api/v1/pause", TOKEN);
      Instant answered = Instant.now();
      assertThat(pause.statusCode()).isEqualTo(503);
      assertThat(pause.body()).doesNotContain("\n")
          .startsWith("paused this replica only, the other replicas were not reached: cannot write configmap "
              + NS + "/" + Manifests.CONTROL + ": 403 ")
          .contains("cannot create resource \"configmaps\"");
      assertThat(Manifests.control(server)).isNull();
      // Safety first: this replica is paused all the same.
      assertThat(service.metric("podsweeper_paused")).isEqualTo(1.0);
      crashing(admin, ns, "after");
      await().atMost(Duration.ofSeconds(10)).until(() -> service.result(ns, "after").equals("paused"));

      // A resume that cannot be written for every replica resumes nothing.
      HttpResponse<String> resume = service.postForAnswer("/api/v1/resume", TOKEN);
      assertThat(resume.statusCode()).isEqualTo(503);
      assertThat(resume.body()).startsWith("not resumed: cannot write configmap " + NS + "/" + Manifests.CONTROL + ": 403 ");
      assertThat(service.metric("podsweeper_paused")).isEqualTo(1.0);
      Thread.sleep(2000);
      assertThat(gone(admin, ns, "after")).isFalse();
      assertThat(server.removalRequests(ns)).allSatisfy(e -> assertThat(e.received()).isBefore(answered));
    }
  }

  @Test
  void deletingTheConfigMapOrItsPausedKeyDoesNotResume(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    Manifests.reinstall(server);
    String ns = server.newNamespace("ks-del");
    try (RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT),
        crashloopPolicy(ns), Service.Options.local(0).withControl(NS, Manifests.CONTROL))) {
      Manifests.kubectl(server, "-n", NS, "patch", "configmap", Manifests.CONTROL, "--type", "merge", "-p",
          "{\"data\":{\"paused\":\"true\",\"reason\":\"freeze\"}}");
      await().atMost(Duration.ofSeconds(5)).until(() -> service.metric("podsweeper_paused") == 1.0);

      // Deleted: still paused, and the replica writes the state back (as the ServiceAccount) for restarts to find.
      Instant deleted = Instant.now();
      Manifests.kubectl(server, "-n", NS, "delete", "configmap", Manifests.CONTROL);
      await().atMost(Duration.ofSeconds(10)).until(() -> isPaused(Manifests.control(server)));
      assertThat(Manifests.control(server).getData()).containsEntry("reason", "freeze");
      assertThat(server.audit()).anySatisfy(e -> {
        assertThat(e.resource() + " " + e.verb() + " " + e.name()).isEqualTo("configmaps create " + Manifests.CONTROL);
        assertThat(e.user()).isEqualTo(Manifests.user(Manifests.SERVICE_ACCOUNT));
        assertThat(e.received()).isAfter(deleted);
      });
      crashing(admin, ns, "a");
      await().atMost(Duration.ofSeconds(10)).until(() -> service.result(ns, "a").equals("paused"));

      // An update that drops the key (a replace, an apply of a manifest without it) is not a resume either.
      admin.configMaps().inNamespace(NS).withName(Manifests.CONTROL).edit(cm -> {
        cm.setData(Map.of("note", "replaced"));
        return cm;
      });
      await().atMost(Duration.ofSeconds(10)).until(() -> isPaused(Manifests.control(server)));
      assertThat(service.metric("podsweeper_paused")).isEqualTo(1.0);
      Thread.sleep(2000);
      assertThat(server.removalRequests(ns)).isEmpty();

      // Only an explicit "false" resumes.
      Manifests.kubectl(server, "-n", NS, "patch", "configmap", Manifests.CONTROL, "--type", "merge", "-p",
          "{\"data\":{\"paused\":\"false\"}}");
      await().atMost(Duration.ofSeconds(10)).until(() -> gone(admin, ns, "a"));
    }
  }

  /**
   * A watch that resumes after a break replays old states. Replayed here through a real watch from an old
   * resourceVersion, as the ServiceAccount: the guard's pause, an operator's resume (its old reason still there), the
   * operator's new pause. The replica's answer to the resume (clear the old reason) must not undo the new pause:
   * written only over the version it answers, the server refuses it (409), and the ConfigMap stays paused.
   */
  @Test
  void aReplayedResumeDoesNotUndoALaterPause(TestApiServer server) throws Exception {
    Manifests.reinstall(server);
    String from = Manifests.control(server).getMetadata().getResourceVersion();
    for (String data : List.of("{\"paused\":\"evictions\",\"reason\":\"blast-radius guard: test\"}", "{\"paused\":\"false\"}",
        "{\"paused\":\"true\",\"reason\":\"freeze\"}")) {
      Manifests.kubectl(server, "-n", NS, "patch", "configmap", Manifests.CONTROL, "--type", "merge", "-p", "{\"data\":" + data + "}");
    }
    Instant replayed = Instant.now();
    KillSwitch replica;
    List<String> seen = new CopyOnWriteArrayList<>();
    try (KubeClients clients = new KubeClients(new KubernetesClientBuilder().withConfig(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT)).build())) {
      KubernetesClient asDeployed = clients.main();
      ControlConfigMap store = new ControlConfigMap(clients, NS, Manifests.CONTROL);
      replica = new KillSwitch(new Metrics(), store::write);
      try (Watch replay = asDeployed.configMaps().inNamespace(NS).withName(Manifests.CONTROL)
          .watch(new ListOptionsBuilder().withResourceVersion(from).build(), new Watcher<ConfigMap>() {
            @Override
            public void eventReceived(Action action, ConfigMap cm) {
              Map<String, String> data = cm.getData();
              replica.observed(Optional.ofNullable(data.get("paused")), data.getOrDefault("reason", ""), cm.getMetadata().getResourceVersion());
              seen.add(data.get("paused"));
            }

            @Override
            public void onClose(WatcherException cause) {}
          })) {
        await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() >= 3);
        Thread.sleep(1000); // anything the replica's answers made would be replayed too
      }
    }
    assertThat(seen).containsExactly("evictions", "false", "true");
    assertThat(Manifests.control(server).getData()).containsEntry("paused", "true").containsEntry("reason", "freeze");
    assertThat(replica.paused()).isTrue();
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(server.audit())
        .filteredOn(e -> e.received().isAfter(replayed) && e.resource().equals("configmaps") && e.verb().equals("patch"))
        .singleElement().satisfies(e -> {
          assertThat(e.user()).isEqualTo(Manifests.user(Manifests.SERVICE_ACCOUNT));
          assertThat(e.code()).isEqualTo(409);
        }));
  }

  /**
   * The informer stores a change before it tells the kill switch, on another thread. A pause the ConfigMap's informer
   * holds but the kill switch has yet to take must not count as watched, or the final check would pass on the state
   * before the pause. The observer is held here at the pause until the test has looked.
   */
  @Test
  void aPauseCountsAsWatchedOnlyOnceTheKillSwitchHasTakenIt(TestApiServer server) throws Exception {
    Manifests.reinstall(server);
    CountDownLatch taking = new CountDownLatch(1);
    CountDownLatch taken = new CountDownLatch(1);
    try (KubeClients clients = new KubeClients(new KubernetesClientBuilder().withConfig(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT)).build());
        ControlConfigMap store = new ControlConfigMap(clients, NS, Manifests.CONTROL)) {
      store.start((paused, reason, version) -> {
        if (paused.equals(Optional.of("true"))) {
          taking.countDown();
          awaitQuietly(taken);
        }
      }, () -> {});
      await().atMost(Duration.ofSeconds(10)).until(store::isWatching);

      Manifests.kubectl(server, "-n", NS, "patch", "configmap", Manifests.CONTROL, "--type", "merge", "-p", "{\"data\":{\"paused\":\"true\"}}");
      assertThat(taking.await(10, TimeUnit.SECONDS)).as("the pause reached the observer").isTrue();
      assertThat(store.isWatching()).as("watched while the kill switch has yet to take the pause").isFalse();
      taken.countDown();
      await().atMost(Duration.ofSeconds(10)).until(store::isWatching);
    } finally {
      taken.countDown();
    }
  }

  /**
   * A watch that resumes is "watching" as soon as it is open, before the server has replayed a pause written while
   * this replica was cut off. So after a break the ConfigMap is listed again before it is watched again: the first
   * request for it after its connections are cut is a list, never a watch from where the last one was.
   */
  @Test
  void afterABreakTheKillSwitchListsBeforeItWatches(TestApiServer server) throws Exception {
    Manifests.reinstall(server);
    String user = Manifests.user(Manifests.SERVICE_ACCOUNT);
    try (KubeClients clients = new KubeClients(new KubernetesClientBuilder().withConfig(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT)).build());
        ControlConfigMap store = new ControlConfigMap(clients, NS, Manifests.CONTROL)) {
      store.start((paused, reason, version) -> {}, () -> {});
      await().atMost(Duration.ofSeconds(10)).until(store::isWatching);
      // Past the first 2 s of the watch: fabric8 treats an earlier end as 410 Gone and lists again whatever is asked.
      Thread.sleep(3000);

      // The API server's audit log is the witness (scripts/test-apiserver.sh logs reads of ConfigMaps too). It logs a
      // watch only once the watch has ended, so the reads are looked at after the store has stopped.
      Instant cut = Instant.now();
      server.cutConnections();
      await().atMost(Duration.ofSeconds(30)).until(store::isWatching);
      store.close();
      await().atMost(Duration.ofSeconds(10)).until(() -> controlReadsAfter(server, user, cut), reads -> reads.contains("watch"));
      assertThat(controlReadsAfter(server, user, cut)).as("the requests for the ConfigMap after the break").startsWith("list");
    }
  }

  /** The verbs of {@code user}'s reads of ConfigMaps in the service's namespace received after {@code after}, in order. */
  private static List<String> controlReadsAfter(TestApiServer server, String user, Instant after) {
    return server.audit().stream()
        .filter(e -> e.received().isAfter(after) && e.user().equals(user) && e.resource().equals("configmaps") && e.namespace().equals(NS)
            && (e.verb().equals("list") || e.verb().equals("watch")))
        .map(TestApiServer.AuditEvent::verb).toList();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** ServiceAccount {@code podsweeper/NAME} with the shipped ClusterRole, and the shipped Role less one verb on one resource. */
  private static void grantShippedRolesWithout(KubernetesClient admin, String sa, String resource, String verb) {
    List<PolicyRule> rules = new ArrayList<>();
    for (PolicyRule rule : admin.rbac().roles().inNamespace(NS).withName("podsweeper").get().getRules()) {
      if (rule.getResources().contains(resource)) {
        rule.setVerbs(rule.getVerbs().stream().filter(v -> !v.equals(verb)).toList());
      }
      if (!rule.getVerbs().isEmpty()) {
        rules.add(rule);
      }
    }
    admin.serviceAccounts().inNamespace(NS).resource(new ServiceAccountBuilder().withNewMetadata().withName(sa).endMetadata().build())
        .serverSideApply();
    admin.rbac().roles().inNamespace(NS).resource(new RoleBuilder().withNewMetadata().withName(sa).endMetadata().withRules(rules).build())
        .serverSideApply();
    admin.rbac().roleBindings().inNamespace(NS).resource(new RoleBindingBuilder().withNewMetadata().withName(sa).endMetadata()
        .withNewRoleRef("rbac.authorization.k8s.io", "Role", sa)
        .addNewSubject().withKind("ServiceAccount").withName(sa).withNamespace(NS).endSubject().build()).serverSideApply();
    admin.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata().withName(sa).endMetadata()
        .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", "podsweeper")
        .addNewSubject().withKind("ServiceAccount").withName(sa).withNamespace(NS).endSubject().build()).serverSideApply();
  }

  private static boolean isPaused(ConfigMap cm) {
    return cm != null && cm.getData() != null && "true".equals(cm.getData().get("paused"));
  }

  private static void crashing(KubernetesClient client, String ns, String name) {
    TestPods.setStatus(client, TestPods.create(client, ns, name, "node-a", Map.of()), "Running", null,
        List.of(TestPods.waiting("CrashLoopBackOff", 4)));
  }

  private static boolean gone(KubernetesClient client, String ns, String name) {
    return client.pods().inNamespace(ns).withName(name).get() == null;
  }

  /** Crash-looping pods of {@code ns} go after 1 s; the blast-radius guard is lifted (its own trip pauses too). */
  private static String crashloopPolicy(String ns) {
    return """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        guard: {maxNamespaceShare: 1.0, maxClusterShare: 1.0}
        rules:
          - name: crashloop
            namespaces: {include: [%s]}
            states: [CrashLoopBackOff]
            maxAge: 1s
        """.formatted(ns);
  }
}
