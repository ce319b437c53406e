package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.podsweeper.app.Service;
import io.podsweeper.kube.MigrationJobs;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.Manifests;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Koordinator's PodMigrationJobs carried out by Podsweeper on the real API server, with Koordinator's own CRDs
 * (src/test/resources/crds): the test plays koord-scheduler by writing the Reservation's status. The audit log is the
 * witness of what was sent. The Reservation CRD is installed only from the fourth test on: the third shows a job
 * without it.
 */
@ExtendWith(ApiServerExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MigrationJobIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "migration-jobs-admin-token";
  private static final ResourceDefinitionContext JOBS = context("PodMigrationJob", "podmigrationjobs");
  private static final ResourceDefinitionContext RESERVATIONS = context("Reservation", "reservations");
  private static final List<HasMetadata> crds = new ArrayList<>();

  @BeforeAll
  static void installJobCrd(TestApiServer server) throws Exception {
    install(server.client(), "/crds/podmigrationjobs.scheduling.koordinator.sh.yaml", "podmigrationjobs");
  }

  @AfterAll
  static void removeCrds(TestApiServer server) {
    // Other tests' Koordinator policies must not find PodMigrationJobs served.
    KubernetesClient client = server.client();
    crds.forEach(crd -> client.resource(crd).delete());
    await().atMost(Duration.ofSeconds(30)).until(() -> Optional.ofNullable(client.getApiResources(MigrationJobs.API_VERSION))
        .map(l -> l.getResources().isEmpty()).orElse(true));
  }

  /** koord-descheduler's default: the MigrationController is the evict plugin, so an eviction becomes a job. */
  /**
   * Each test pod is its ReplicaSet's only one, which Koordinator's expected-replicas check keeps: these tests are about
   * the jobs, so the check is skipped.
   */
  private static String koordinatorPolicy(String ns, long maxLifeSeconds, String migrationArgs) {
    String args = migrationArgs.equals("{}") ? "{skipCheckExpectedReplicas: true}"
        : migrationArgs.replaceFirst("^\\{", "{skipCheckExpectedReplicas: true, ");
    return """
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerConfiguration
        deschedulingInterval: 1s
        profiles:
          - name: koord
            plugins:
              deschedule: {enabled: [{name: PodLifeTime}]}
            pluginConfig:
              - name: PodLifeTime
                args: {maxPodLifeTimeSeconds: %d, namespaces: {include: [%s]}}
              - name: MigrationController
                args: %s
        """.formatted(maxLifeSeconds, ns, args);
  }

  @Test
  @Order(1)
  void anEvictionTheKoordinatorPolicyAdmitsBecomesAJobThatEvicts(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("pmj-policy");
    String node = readyNode(client);
    TestPods.setStatus(client, TestPods.create(client, ns, "old", node, Map.of()), "Running", null, List.of());
    try (RunningService service = RunningService.start(server, koordinatorPolicy(ns, 1, "{defaultJobMode: EvictDirectly}"))) {
      JsonNode job = await().atMost(Duration.ofSeconds(20)).until(() -> jobFor(client, ns, "old"),
          j -> j.isPresent() && j.get().path("status").path("phase").asText().equals("Succeeded")).get();

      assertThat(job.path("metadata").path("annotations").path(MigrationJobs.CREATED_BY_ANNOTATION).asText()).isEqualTo("podsweeper");
      assertThat(job.path("metadata").path("annotations").path(MigrationJobs.EVICT_TRIGGER_ANNOTATION).asText()).isEqualTo("PodLifeTime");
      assertThat(job.path("metadata").path("annotations").path(MigrationJobs.PROFILE_ANNOTATION).asText()).isEqualTo("koord");
      assertThat(job.path("spec").path("mode").asText()).isEqualTo("EvictDirectly");
      assertThat(job.path("spec").path("ttl").asText()).isEqualTo("5m0s");
      assertThat(job.path("status").path("status").asText()).isEqualTo("Complete");
      assertThat(job.path("status").path("message").asText()).isEqualTo("Pod \"" + ns + "/old\" has been evicted");
      assertThat(condition(job, "Eviction")).isEqualTo("True/EvictComplete");
      assertThat(server.removalRequests(ns)).singleElement()
          .satisfies(e -> assertThat(e.verb() + " " + e.subresource()).isEqualTo("create eviction"));
      assertThat(eventReasons(client, job)).contains("Evicting", "EvictComplete", "Complete");
      assertThat(service.metric("podsweeper_removals_total", "result=\"background\"", "namespace=\"" + ns + "\"")).isEqualTo(1.0);
      assertThat(service.metric("podsweeper_removals_total", "result=\"success\"", "namespace=\"" + ns + "\"", "action=\"evict\""))
          .isEqualTo(1.0);
      await().atMost(Duration.ofSeconds(5)).until(() -> service.metric("podsweeper_migration_jobs", "phase=\"Succeeded\"") == 1.0);
      assertThat(service.metric("podsweeper_migration_jobs", "phase=\"Aborted\"")).isZero();
    } finally {
      client.nodes().withName(node).delete();
    }
  }

  @Test
  @Order(2)
  void aHandMadeJobIsCarriedOutWithTheEvictionPolicyAndAProtectedPodIsRefused(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("pmj-hand");
    TestPods.create(client, ns, "move-me", "node-a", Map.of());
    client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("bare").withNamespace(ns).endMetadata()
        .withNewSpec().withNodeName("node-a").addNewContainer().withName("main").withImage("busybox:1.36").endContainer()
        .withTerminationGracePeriodSeconds(0L).endSpec().build()).create();
    String policy = koordinatorPolicy(ns, 86_400, "{defaultJobMode: EvictDirectly, evictionPolicy: Delete}");
    try (RunningService service = RunningService.start(server, policy)) {
      String moved = createJob(client, ns, "move-me", Map.of());
      String refused = createJob(client, ns, "bare", Map.of());

      JsonNode done = await().atMost(Duration.ofSeconds(15)).until(() -> job(client, moved), j -> phase(j).equals("Succeeded"));
      assertThat(done.path("spec").path("podRef").path("uid").asText()).isNotEmpty();
      JsonNode forbidden = await().atMost(Duration.ofSeconds(10)).until(() -> job(client, refused), j -> phase(j).equals("Failed"));
      assertThat(forbidden.path("status").path("reason").asText()).isEqualTo("ForbiddenMigratePod");
      assertThat(forbidden.path("status").path("message").asText()).contains("bare").contains("does not meet the requirements");
      // evictionPolicy Delete: a DELETE, not an eviction; nothing for the protected pod.
      assertThat(server.removalRequests(ns)).singleElement().satisfies(e -> {
        assertThat(e.verb()).isEqualTo("delete");
        assertThat(e.name()).isEqualTo("move-me");
      });
      assertThat(client.pods().inNamespace(ns).withName("bare").get()).isNotNull();
      assertThat(eventReasons(client, forbidden)).contains("ForbiddenMigratePod");
    }
  }

  @Test
  @Order(3)
  void reservationFirstWithoutTheReservationCrdFailsSayingSoAndEvictsNothing(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("pmj-nores");
    TestPods.create(client, ns, "stay", "node-a", Map.of());
    try (RunningService service = RunningService.start(server, koordinatorPolicy(ns, 86_400, "{}"))) {
      String name = createJob(client, ns, "stay", Map.of());

      JsonNode failed = await().atMost(Duration.ofSeconds(10)).until(() -> job(client, name), j -> phase(j).equals("Failed"));
      assertThat(failed.path("status").path("reason").asText()).isEqualTo("FailedCreateReservation");
      assertThat(failed.path("status").path("message").asText()).contains("does not serve").contains("Reservation CRD is not installed");
      assertThat(condition(failed, "ReservationCreated")).isEqualTo("False/FailedCreateReservation");
      assertThat(server.removalRequests(ns)).isEmpty();
      assertThat(client.pods().inNamespace(ns).withName("stay").get()).isNotNull();
    }
  }

  @Test
  @Order(4)
  void reservationFirstEvictsOnlyOnceKoordSchedulerHasScheduledTheReservationAndSucceedsOnceTheReplacementIsReady(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    install(client, "/crds/reservations.scheduling.koordinator.sh.yaml", "reservations");
    String ns = server.newNamespace("pmj-res");
    TestPods.create(client, ns, "web", "node-a", Map.of());
    try (RunningService service = RunningService.start(server, koordinatorPolicy(ns, 86_400, "{}"))) {
      String name = createJob(client, ns, "web", Map.of());
      String reservation = reservationOf(client, name);
      JsonNode r = JSON.valueToTree(client.genericKubernetesResources(RESERVATIONS).withName(reservation).get());
      assertThat(r.path("spec").path("template").path("spec").has("nodeName")).isFalse();
      assertThat(r.path("spec").path("owners").path(0).path("controller").path("name").asText()).isEqualTo("rs-web");
      Thread.sleep(2000);
      assertThat(server.removalRequests(ns)).isEmpty();
      assertThat(phase(job(client, name))).isEqualTo("Running");

      schedule(client, reservation, "node-b");

      await().atMost(Duration.ofSeconds(10)).until(() -> server.removalRequests(ns).size() == 1);
      // Plays the kubelet too: the replacement takes the Reservation but is not Ready yet; the job waits for it.
      TestPods.create(client, ns, "web-new", "node-b", Map.of());
      bind(client, reservation, ns, "web-new");
      JsonNode waiting = await().atMost(Duration.ofSeconds(10)).until(() -> job(client, name),
          j -> condition(j, "BoundPodReady").equals("False/WaitForBoundPodReady"));
      assertThat(phase(waiting)).isEqualTo("Running");
      assertThat(condition(waiting, "ReservationBound")).startsWith("True");
      assertThat(waiting.path("status").path("podRef").path("name").asText()).isEqualTo("web-new");
      Thread.sleep(1500);
      assertThat(phase(job(client, name))).isEqualTo("Running");

      io.fabric8.kubernetes.api.model.Pod replacement = client.pods().inNamespace(ns).withName("web-new").get();
      replacement.getStatus().setPhase("Running");
      replacement.getStatus().setConditions(List.of(new io.fabric8.kubernetes.api.model.PodConditionBuilder().withType("Ready")
          .withStatus("True").build()));
      client.pods().inNamespace(ns).resource(replacement).updateStatus();
      JsonNode done = await().atMost(Duration.ofSeconds(10)).until(() -> job(client, name), j -> phase(j).equals("Succeeded"));
      assertThat(done.path("status").path("nodeName").asText()).isEqualTo("node-b");
      assertThat(done.path("status").path("podRef").path("name").asText()).isEqualTo("web-new");
      assertThat(condition(done, "ReservationScheduled")).startsWith("True");
      assertThat(condition(done, "BoundPodReady")).startsWith("True");
      assertThat(condition(done, "PodBoundReservation")).startsWith("True");
      assertThat(eventReasons(client, done)).contains("ReservationCreated", "ReservationScheduled", "Evicting", "EvictComplete",
          "PodBoundReservation", "WaitForBoundPodReady", "BoundPodReady", "Complete");
    }
  }

  @Test
  @Order(5)
  void theKillSwitchHoldsAJobWaitingForItsReservationUntilResumed(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("pmj-pause");
    TestPods.create(client, ns, "held", "node-a", Map.of());
    try (RunningService service = RunningService.start(server, koordinatorPolicy(ns, 86_400, "{}"),
        Service.Options.local(0).withAdminToken(TOKEN))) {
      String name = createJob(client, ns, "held", Map.of());
      String reservation = reservationOf(client, name);

      assertThat(service.post("/api/v1/pause", TOKEN)).isEqualTo(200);
      schedule(client, reservation, "node-b");

      JsonNode held = await().atMost(Duration.ofSeconds(10)).until(() -> job(client, name),
          j -> j.path("status").path("message").asText().startsWith("held: removals are paused"));
      Thread.sleep(2000);
      assertThat(server.removalRequests(ns)).isEmpty();
      assertThat(phase(job(client, name))).isEqualTo("Running");
      assertThat(phase(held)).isEqualTo("Running");

      assertThat(service.post("/api/v1/resume", TOKEN)).isEqualTo(200);
      await().atMost(Duration.ofSeconds(10)).until(() -> server.removalRequests(ns).size() == 1);
    }
  }

  /**
   * As the Deployment's ServiceAccount with the base RBAC and manifests/koordinator/migration-jobs-rbac.yaml: a job
   * the policy makes and a hand-made ReservationFirst one, both soft evictions (the pod patched, nothing removed).
   */
  @Test
  @Order(6)
  void runsAsTheServiceAccountWithTheMigrationJobsRbac(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    List<HasMetadata> optIn = grantMigrationJobsRbac(client);
    String ns = server.newNamespace("pmj-sa");
    String node = readyNode(client);
    TestPods.setStatus(client, TestPods.create(client, ns, "old", node, Map.of()), "Running", null, List.of());
    // Another namespace: two evictions of two pods in one namespace would trip the blast-radius guard.
    String other = server.newNamespace("pmj-sa-web");
    TestPods.create(client, other, "web", "node-a", Map.of());
    Config identity = Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT);
    String policy = koordinatorPolicy(ns, 1, "{defaultJobMode: EvictDirectly, evictionPolicy: SoftEviction}");
    try (RunningService service = RunningService.start(identity, policy)) {
      String handMade = createJob(client, other, "web", Map.of("mode", "ReservationFirst"));
      schedule(client, reservationOf(client, handMade), "node-b");

      for (String key : List.of(ns + "/old", other + "/web")) {
        String[] pod = key.split("/");
        await().atMost(Duration.ofSeconds(15)).until(() -> jobFor(client, pod[0], pod[1]),
            j -> j.isPresent() && condition(j.get(), "Eviction").equals("False/Evicting"));
        assertThat(client.pods().inNamespace(pod[0]).withName(pod[1]).get().getMetadata().getAnnotations())
            .containsKey(MigrationJobs.SOFT_EVICTION_ANNOTATION);
        assertThat(server.removalRequests(pod[0])).isEmpty();
      }
      assertThat(server.audit()).noneMatch(e -> e.user().equals(Manifests.user(Manifests.SERVICE_ACCOUNT)) && e.code() == 403);
      // The soft-evicted pod stays, still due: its job in progress holds it; no second job, nothing for the guard to stop.
      Thread.sleep(2000);
      assertThat(service.metric("podsweeper_paused")).isZero();
      assertThat(client.genericKubernetesResources(JOBS).list().getItems().stream()
          .filter(j -> JSON.valueToTree(j).path("spec").path("podRef").path("name").asText().equals("old")
              && JSON.valueToTree(j).path("spec").path("podRef").path("namespace").asText().equals(ns))).hasSize(1);
    } finally {
      client.nodes().withName(node).delete();
      optIn.forEach(o -> client.resource(o).delete());
    }
  }

  /**
   * A job this service made, met by another process (a restart, a failover): the job's annotations name the profile
   * that decided, so its rule judges it again, not the evictor's protections as for a hand-made job. The pod is not
   * due (a day's lifetime), so the job is refused and nothing is sent; judged as hand-made, the pod would go.
   */
  @Test
  @Order(7)
  void aJobAnotherProcessMadeIsJudgedByItsRuleNotAsAHandMadeJob(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("pmj-made");
    String node = readyNode(client);
    TestPods.setStatus(client, TestPods.create(client, ns, "young", node, Map.of()), "Running", null, List.of());
    List<HasMetadata> optIn = grantMigrationJobsRbac(client);
    try (RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT),
        koordinatorPolicy(ns, 86_400, "{defaultJobMode: EvictDirectly}"))) {
      String made = createJob(client, ns, "young", Map.of(), Map.of(MigrationJobs.CREATED_BY_ANNOTATION, MigrationJobs.CREATOR,
          MigrationJobs.EVICT_TRIGGER_ANNOTATION, "PodLifeTime", MigrationJobs.PROFILE_ANNOTATION, "koord"));

      JsonNode refused = await().atMost(Duration.ofSeconds(15)).until(() -> job(client, made), j -> phase(j).equals("Failed"));
      assertThat(refused.path("status").path("reason").asText()).isEqualTo("ForbiddenMigratePod");
      assertThat(refused.path("status").path("message").asText()).contains("no rule wants the pod now");
      assertThat(server.removalRequests(ns)).isEmpty();
      assertThat(client.pods().inNamespace(ns).withName("young").get()).isNotNull();
      assertThat(server.audit()).noneMatch(e -> e.user().equals(Manifests.user(Manifests.SERVICE_ACCOUNT)) && e.code() == 403);
    } finally {
      client.nodes().withName(node).delete();
      optIn.forEach(o -> client.resource(o).delete());
    }
  }

  /**
   * A job deleted while it waits (here for its Reservation, which no scheduler places) has ended: its pod is no longer
   * held for it, and a later pass makes a new job for the pod, still due. (Before, the pod stayed held, never moved
   * again, until the service restarted.)
   */
  @Test
  @Order(8)
  void aJobDeletedWhileItWaitsLetsItsPodBeMovedAgain(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    install(client, "/crds/reservations.scheduling.koordinator.sh.yaml", "reservations");
    String ns = server.newNamespace("pmj-deleted");
    String node = readyNode(client);
    TestPods.setStatus(client, TestPods.create(client, ns, "old", node, Map.of()), "Running", null, List.of());
    List<HasMetadata> optIn = grantMigrationJobsRbac(client);
    try (RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT),
        koordinatorPolicy(ns, 1, "{}"))) {
      String first = await().atMost(Duration.ofSeconds(20)).until(() -> jobFor(client, ns, "old"), Optional::isPresent).get()
          .path("metadata").path("name").asText();
      reservationOf(client, first); // ReservationFirst: it waits for koord-scheduler, which never comes

      client.genericKubernetesResources(JOBS).withName(first).delete();

      await().atMost(Duration.ofSeconds(30)).until(() -> jobFor(client, ns, "old").map(j -> j.path("metadata").path("name").asText()),
          name -> name.isPresent() && !name.get().equals(first));
      assertThat(server.removalRequests(ns)).isEmpty();
      assertThat(server.audit()).noneMatch(e -> e.user().equals(Manifests.user(Manifests.SERVICE_ACCOUNT)) && e.code() == 403);
    } finally {
      client.nodes().withName(node).delete();
      optIn.forEach(o -> client.resource(o).delete());
    }
  }

  /**
   * The Deployment's ServiceAccount with the base RBAC and manifests/koordinator/migration-jobs-rbac.yaml, as an
   * operator who opts in applies them; returns the opt-in's objects, for the test to delete (they grant get and patch
   * on pods: ManifestsIT, on the same server, proves the base RBAC denies them).
   */
  private static List<HasMetadata> grantMigrationJobsRbac(KubernetesClient client) throws IOException {
    if (client.namespaces().withName(Manifests.NAMESPACE).get() == null) {
      client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(Manifests.NAMESPACE).endMetadata().build()).create();
    }
    for (Path file : List.of(Manifests.BASE.resolve("rbac.yaml"), Manifests.BASE.resolve("koordinator/migration-jobs-rbac.yaml"))) {
      try (InputStream in = Files.newInputStream(file)) {
        client.load(in).items().forEach(o -> client.resource(o).fieldManager("podsweeper-pmj-it").forceConflicts().serverSideApply());
      }
    }
    try (InputStream in = Files.newInputStream(Manifests.BASE.resolve("koordinator/migration-jobs-rbac.yaml"))) {
      return client.load(in).items();
    }
  }

  /** koord-descheduler's profiles act on pods of Ready nodes only. */
  private static String readyNode(KubernetesClient client) {
    String node = "ready-" + UUID.randomUUID().toString().substring(0, 6);
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build()).create();
    client.nodes().withName(node).editStatus(n -> new NodeBuilder(n).withNewStatus()
        .addToConditions(new NodeConditionBuilder().withType("Ready").withStatus("True").build()).endStatus().build());
    return node;
  }

  private static void install(KubernetesClient client, String resource, String plural) throws Exception {
    try (InputStream in = MigrationJobIT.class.getResourceAsStream(resource)) {
      List<HasMetadata> items = client.load(in).items();
      items.forEach(crd -> client.resource(crd).fieldManager("podsweeper-pmj-it").forceConflicts().serverSideApply());
      crds.addAll(items);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> Optional.ofNullable(client.getApiResources(MigrationJobs.API_VERSION))
        .map(l -> l.getResources().stream().anyMatch(r -> r.getName().equals(plural))).orElse(false));
  }

  /** A job as a user writes it: the pod by namespace and name only. */
  private static String createJob(KubernetesClient client, String ns, String pod, Map<String, Object> spec) {
    return createJob(client, ns, pod, spec, Map.of());
  }

  private static String createJob(KubernetesClient client, String ns, String pod, Map<String, Object> spec, Map<String, String> annotations) {
    String name = "move-" + pod + "-" + UUID.randomUUID().toString().substring(0, 6);
    GenericKubernetesResource job = new GenericKubernetesResourceBuilder().withApiVersion(MigrationJobs.API_VERSION)
        .withKind(MigrationJobs.KIND).withNewMetadata().withName(name).withAnnotations(annotations).endMetadata().build();
    Map<String, Object> all = new java.util.HashMap<>(spec);
    all.put("podRef", Map.of("namespace", ns, "name", pod));
    job.setAdditionalProperty("spec", all);
    client.genericKubernetesResources(JOBS).resource(job).create();
    return name;
  }

  /** The Reservation Podsweeper made for a ReservationFirst job, once the job names it. */
  private static String reservationOf(KubernetesClient client, String job) {
    return await().atMost(Duration.ofSeconds(10)).until(() -> job(client, job),
        j -> j.path("spec").path("reservationOptions").path("reservationRef").hasNonNull("name"))
        .path("spec").path("reservationOptions").path("reservationRef").path("name").asText();
  }

  /** Plays koord-scheduler: the Reservation is Available on {@code node}, condition Scheduled True. */
  private static void schedule(KubernetesClient client, String reservation, String node) {
    GenericKubernetesResource r = client.genericKubernetesResources(RESERVATIONS).withName(reservation).get();
    r.setAdditionalProperty("status", Map.of("phase", "Available", "nodeName", node,
        "conditions", List.of(Map.of("type", "Scheduled", "status", "True", "reason", "Scheduled"))));
    client.genericKubernetesResources(RESERVATIONS).resource(r).updateStatus();
  }

  /** Plays koord-scheduler again: the replacement pod took the reserved room. */
  private static void bind(KubernetesClient client, String reservation, String ns, String pod) {
    GenericKubernetesResource r = client.genericKubernetesResources(RESERVATIONS).withName(reservation).get();
    @SuppressWarnings("unchecked")
    Map<String, Object> status = new java.util.HashMap<>((Map<String, Object>) r.getAdditionalProperties().get("status"));
    status.put("currentOwners", List.of(Map.of("namespace", ns, "name", pod, "uid", UUID.randomUUID().toString())));
    r.setAdditionalProperty("status", status);
    client.genericKubernetesResources(RESERVATIONS).resource(r).updateStatus();
  }

  private static Optional<JsonNode> jobFor(KubernetesClient client, String ns, String pod) {
    return client.genericKubernetesResources(JOBS).list().getItems().stream().map(j -> (JsonNode) JSON.valueToTree(j))
        .filter(j -> j.path("spec").path("podRef").path("namespace").asText().equals(ns)
            && j.path("spec").path("podRef").path("name").asText().equals(pod))
        .findFirst();
  }

  private static JsonNode job(KubernetesClient client, String name) {
    return JSON.valueToTree(client.genericKubernetesResources(JOBS).withName(name).get());
  }

  private static String phase(JsonNode job) {
    return job.path("status").path("phase").asText();
  }

  private static String condition(JsonNode job, String type) {
    for (JsonNode c : job.path("status").path("conditions")) {
      if (c.path("type").asText().equals(type)) {
        return c.path("status").asText() + "/" + c.path("reason").asText();
      }
    }
    return "";
  }

  private static List<String> eventReasons(KubernetesClient client, JsonNode job) {
    String uid = job.path("metadata").path("uid").asText();
    return await().atMost(Duration.ofSeconds(5)).until(() -> client.v1().events().inNamespace("default").list().getItems().stream()
        .filter(e -> uid.equals(e.getInvolvedObject().getUid())).map(io.fabric8.kubernetes.api.model.Event::getReason).toList(),
        l -> !l.isEmpty());
  }

  private static ResourceDefinitionContext context(String kind, String plural) {
    return new ResourceDefinitionContext.Builder().withGroup("scheduling.koordinator.sh").withVersion("v1alpha1").withKind(kind)
        .withPlural(plural).withNamespaced(false).build();
  }
}
