package io.podsweeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceAttributesBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.podsweeper.engine.Sweeper;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.strategy.RoomPlan;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.AsDeployed;
import io.podsweeper.testing.LogLines;
import io.podsweeper.testing.Manifests;
import io.podsweeper.app.Service;
import io.podsweeper.kube.EventRecorder;
import io.podsweeper.kube.Leadership;
import io.podsweeper.kube.PodNominations;
import io.podsweeper.kube.PodRemover;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped kustomize base ({@code manifests/}) on a real API server with RBAC: every object is accepted by the
 * server, and the service, authenticated as the manifest's ServiceAccount with exactly the manifest's
 * permissions, syncs, deletes and evicts. Without one permission it reports the 403 and keeps running. Applied
 * again with the real {@code kubectl apply -k} (an upgrade, also from the 0.1.0 base), it keeps a pause and an
 * edited policy.
 */
@ExtendWith(ApiServerExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ManifestsIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String NS = "podsweeper";
  private static final String SA = "podsweeper";
  /** The 0.1.0 base's ConfigMaps, as that release applied them (with paused: "false"). */
  private static final Path OLD_BASE = Manifests.PROJECT.resolve("src/test/resources/old-base-0.1.0");

  private static List<HasMetadata> applied;

  @BeforeAll
  static void applyTheBase(TestApiServer server) throws Exception {
    applied = Manifests.applyBase(server);
    Manifests.reinstall(server);
  }

  @Test
  @Order(1)
  void everyObjectOfTheBaseIsAcceptedByTheServer(TestApiServer server) {
    // No ConfigMap: the policy and the kill switch are the operator's state, created once (manifests/install/), so
    // that re-applying the base never overwrites them.
    assertThat(applied.stream().map(o -> o.getKind() + "/" + o.getMetadata().getName()).collect(Collectors.toList()))
        .containsExactlyInAnyOrder(
            "Namespace/podsweeper", "ServiceAccount/podsweeper", "ClusterRole/podsweeper", "ClusterRoleBinding/podsweeper",
            "Role/podsweeper", "RoleBinding/podsweeper",
            "Deployment/podsweeper", "Service/podsweeper", "PodDisruptionBudget/podsweeper", "NetworkPolicy/podsweeper",
            "CustomResourceDefinition/podcleanuppolicies.podsweeper.io",
            "CustomResourceDefinition/clusterpodcleanuppolicies.podsweeper.io", "ClusterRole/podsweeper-cleanup-policy-editor",
            "ClusterRole/podsweeper-viewer");
    for (HasMetadata object : applied) {
      assertThat(object.getMetadata().getUid()).as(object.getKind()).isNotBlank();
    }
    // The shipped policy is valid and starts in dry-run.
    ConfigMap policy = server.client().configMaps().inNamespace(NS).withName("podsweeper-policy").get();
    Policy parsed = PolicyLoader.parse(policy.getData().get("policy.yaml"), "podsweeper-policy");
    assertThat(parsed.dryRun()).isTrue();
    // The shipped kill switch says nothing about paused: applied by mistake, it cannot resume anything.
    assertThat(Manifests.control(server).getData()).isNullOrEmpty();
    var deployment = server.client().apps().deployments().inNamespace(NS).withName("podsweeper").get();
    var container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(container.getArgs()).containsExactly(
        "run", "--policy", "/etc/podsweeper/policy.yaml", "--http-port", "8080", "--probe-port", "8081", "--log-format", "json",
        "--leader-elect", "--wait-for-valid-policy", "--control-configmap", "podsweeper-control", "--policy-configmap",
        "podsweeper-policy", "--leader-elect-lease", "podsweeper", "--admin-token-file", "/var/run/podsweeper/admin-token/token");
    // Every probe asks the probe port, which clients of the HTTP port cannot fill.
    assertThat(container.getPorts()).extracting(p -> p.getName() + "=" + p.getContainerPort())
        .containsExactlyInAnyOrder("http-metrics=8080", "probes=8081");
    assertThat(List.of(container.getStartupProbe(), container.getLivenessProbe(), container.getReadinessProbe()))
        .allSatisfy(probe -> assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("probes"));
    assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(container.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(deployment.getSpec().getTemplate().getSpec().getServiceAccountName()).isEqualTo(SA);
    // The NetworkPolicy covers the Deployment's pods, and admits only the metrics port (kubelet probes come from the node:
    // no pod reaches the probe port).
    var network = server.client().network().v1().networkPolicies().inNamespace(NS).withName("podsweeper").get().getSpec();
    assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels()).containsAllEntriesOf(network.getPodSelector().getMatchLabels());
    assertThat(network.getPolicyTypes()).containsExactly("Ingress");
    assertThat(network.getIngress()).singleElement().satisfies(rule -> {
      assertThat(rule.getPorts()).singleElement().satisfies(port -> assertThat(port.getPort().getStrVal()).isEqualTo("http-metrics"));
      assertThat(rule.getFrom()).hasSize(2);
      assertThat(rule.getFrom().get(0).getNamespaceSelector().getMatchLabels()).containsExactly(Map.entry("podsweeper.io/scrape", "true"));
      // The other replica, to which a follower forwards the decisions' requests.
      assertThat(rule.getFrom().get(1).getPodSelector().getMatchLabels()).isEqualTo(network.getPodSelector().getMatchLabels());
    });
  }

  @Test
  @Order(2)
  void theServiceAccountMayDoWhatTheCodeDoesAndNothingMore(TestApiServer server) {
    KubernetesClient admin = server.client();
    String user = "system:serviceaccount:" + NS + ":" + SA;
    // What the code does (informers, removals) and what the Deployment's flags need (lease, control ConfigMap, events).
    for (String allowed : List.of(
        "list //pods", "watch //pods", "delete //pods other", "create //pods/eviction other", "patch //pods/status other",
        "list //nodes", "watch //nodes", "list //namespaces", "watch //namespaces",
        "list policy//poddisruptionbudgets", "watch policy//poddisruptionbudgets",
        "list //persistentvolumeclaims", "watch //persistentvolumeclaims",
        "list scheduling.k8s.io//priorityclasses", "watch scheduling.k8s.io//priorityclasses",
        "create //events other", "patch //events other",
        "get coordination.k8s.io//leases podsweeper", "create coordination.k8s.io//leases podsweeper",
        "update coordination.k8s.io//leases podsweeper", "patch coordination.k8s.io//leases podsweeper",
        "get //configmaps podsweeper/podsweeper-control", "list //configmaps podsweeper/podsweeper-control",
        "watch //configmaps podsweeper/podsweeper-control",
        "patch //configmaps podsweeper/podsweeper-control", "create //configmaps podsweeper",
        "get //configmaps podsweeper/podsweeper-control-guard", "patch //configmaps podsweeper/podsweeper-control-guard",
        "get //configmaps podsweeper/podsweeper-policy",
        "get podsweeper.io//podcleanuppolicies other", "list podsweeper.io//podcleanuppolicies", "watch podsweeper.io//podcleanuppolicies",
        "list podsweeper.io//clusterpodcleanuppolicies", "watch podsweeper.io//clusterpodcleanuppolicies",
        "patch podsweeper.io//podcleanuppolicies/status other", "patch podsweeper.io//clusterpodcleanuppolicies/status",
        "list slo.koordinator.sh//nodemetrics", "watch slo.koordinator.sh//nodemetrics",
        "list metrics.k8s.io//nodes", "list metrics.k8s.io//pods",
        // EvictionRequests: server-side apply authorizes a PATCH that creates as create too.
        "create coordination.k8s.io//evictionrequests other", "patch coordination.k8s.io//evictionrequests other",
        "list coordination.k8s.io//evictionrequests", "watch coordination.k8s.io//evictionrequests")) {
      assertThat(allowed(admin, user, allowed)).as(allowed).isTrue();
    }
    for (String denied : List.of(
        "get //pods other", "update //pods other", "patch //pods other", "create //pods other", "get //events other",
        "get //secrets other", "list //secrets", "update //pods/status other",
        "delete //nodes", "patch //nodes", "delete //namespaces", "delete policy//poddisruptionbudgets other",
        "update coordination.k8s.io//leases other", "get coordination.k8s.io//leases other",
        "patch //configmaps other", "get //configmaps other", "create //configmaps other",
        // The control ConfigMap by name only, the policy only read: not the whole namespace; never deleted.
        "list //configmaps podsweeper", "watch //configmaps podsweeper",
        "patch //configmaps podsweeper/podsweeper-policy", "update //configmaps podsweeper/podsweeper-control",
        "delete //configmaps podsweeper/podsweeper-control",
        "delete coordination.k8s.io//leases podsweeper", "escalate rbac.authorization.k8s.io//clusterroles",
        // Namespaced policies: it reads them and writes their status, never their spec.
        "create podsweeper.io//podcleanuppolicies other", "update podsweeper.io//podcleanuppolicies other",
        "patch podsweeper.io//podcleanuppolicies other", "delete podsweeper.io//podcleanuppolicies other",
        "update podsweeper.io//podcleanuppolicies/status other", "create podsweeper.io//clusterpodcleanuppolicies",
        "patch podsweeper.io//clusterpodcleanuppolicies", "delete podsweeper.io//clusterpodcleanuppolicies",
        // Measured usage: read only.
        "update slo.koordinator.sh//nodemetrics", "patch slo.koordinator.sh//nodemetrics/status",
        // EvictionRequests: its own requester entry only; their status is the interceptors' and the controller's.
        "delete coordination.k8s.io//evictionrequests other", "update coordination.k8s.io//evictionrequests other",
        "patch coordination.k8s.io//evictionrequests/status other")) {
      assertThat(allowed(admin, user, denied)).as(denied).isFalse();
    }
  }

  /**
   * MakeRoom's hold on a node, as the ServiceAccount: the pending pod's nomination is written and cleared by a JSON
   * patch of pods/status, with no get of the pod (kube/PodNominations; fabric8's own patch would read it first).
   */
  @Test
  @Order(2)
  void theServiceAccountNominatesAPendingPodAndClearsTheNomination(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    String ns = server.newNamespace("mf-room");
    Pod pending = TestPods.create(admin, ns, "pending", null, Map.of());
    RoomPlan.PodRef pod = new RoomPlan.PodRef(ns, "pending", pending.getMetadata().getUid());
    try (KubernetesClient asSa = new KubernetesClientBuilder().withConfig(Manifests.serviceAccountConfig(server, SA)).build()) {
      PodNominations nominations = new PodNominations(PodRemover.create(asSa, OptionalLong::empty), new EventRecorder(asSa, "test"));

      assertThat(nominations.nominate(pod, "node-b")).isTrue();
      assertThat(nominatedNode(admin, ns)).isEqualTo("node-b");
      // Not that pod (its uid), or not the plan's node: nothing changes.
      assertThat(nominations.nominate(new RoomPlan.PodRef(ns, "pending", "another-uid"), "node-c")).isFalse();
      nominations.clear(pod, "node-c");
      assertThat(nominatedNode(admin, ns)).isEqualTo("node-b");
      nominations.clear(pod, "node-b");
      assertThat(nominatedNode(admin, ns)).isNull();
    }
  }

  private static String nominatedNode(KubernetesClient admin, String ns) {
    return admin.pods().inNamespace(ns).withName("pending").get().getStatus().getNominatedNodeName();
  }

  @Test
  @Order(3)
  void runsWithTheManifestsIdentity(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    String ns = server.newNamespace("mf");
    Pod failed = TestPods.create(admin, ns, "failed", "node-a", Map.of());
    TestPods.setStatus(admin, failed, "Failed", null, List.of(TestPods.terminated("Error", 1, Instant.now().minus(Duration.ofHours(2)))));
    Pod crashing = TestPods.create(admin, ns, "crashing", "node-a", Map.of());
    TestPods.setStatus(admin, crashing, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 5)));

    // A team's policy (the CRDs are in the base): the service must be able to write its status as the ServiceAccount.
    String team = server.newNamespace("mf-team");
    admin.resource("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodCleanupPolicy
        metadata: {name: cleanup, namespace: %s}
        spec:
          rules: [{name: failed, states: [Failed], maxAgeAfterFinish: 1h}]
        """.formatted(team)).create();

    Config identity = Manifests.serviceAccountConfig(server, SA);
    try (KubernetesClient asSa = new KubernetesClientBuilder().withConfig(identity).build()) {
      // It really is the ServiceAccount: reading a pod by name or any secret is forbidden.
      assertThat(code(() -> asSa.pods().inNamespace(ns).withName("failed").get())).isEqualTo(403);
      assertThat(code(() -> asSa.secrets().inAnyNamespace().list())).isEqualTo(403);
    }
    // As the Deployment runs it: leader election on the Lease and the kill switch in the control ConfigMap.
    Service.Options asDeployed = Service.Options.local(0).withControl("podsweeper", "podsweeper-control")
        .withLeaderElection(new Service.Options.LeaderElection("podsweeper", "podsweeper", "podsweeper-0", Leadership.Timing.DEFAULT));
    try (RunningService service = RunningService.start(identity, policy(ns), asDeployed)) {
      assertThat(service.status("/readyz")).isEqualTo(200);
      await().atMost(Duration.ofSeconds(10)).until(() -> service.metric("podsweeper_leader") == 1.0);
      // Renewals (merge patches of the Lease) go through: it stays the leader past a renew period.
      Thread.sleep(Leadership.Timing.DEFAULT.retryPeriod().toMillis() * 2);
      assertThat(service.metric("podsweeper_paused")).isZero();
      await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
        assertThat(service.result(ns, "failed")).isEqualTo("success");
        assertThat(service.result(ns, "crashing")).isEqualTo("success");
      });
      assertThat(service.decision(ns, "failed").get("action").asText()).isEqualTo("delete");
      assertThat(service.decision(ns, "crashing").get("action").asText()).isEqualTo("evict");
      await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
        assertThat(admin.pods().inNamespace(ns).withName("failed").get()).isNull();
        assertThat(admin.pods().inNamespace(ns).withName("crashing").get()).isNull();
      });
      for (String resource : List.of("pods", "nodes", "namespaces", "poddisruptionbudgets", "persistentvolumeclaims", "priorityclasses")) {
        assertThat(service.metric("podsweeper_informer_watching", "resource=\"" + resource + "\"")).as(resource).isEqualTo(1.0);
      }
      // The kill switch's ConfigMap is watched too (removals would wait otherwise); reported every 5 s.
      await().atMost(Duration.ofSeconds(10)).until(() -> service.metric("podsweeper_informer_watching", "resource=\"configmaps\"") == 1.0);
      // Its verdict on the team's policy reaches the policy's status (here: rejected, no ClusterPodCleanupPolicy allows it).
      await().atMost(Duration.ofSeconds(15)).until(() -> admin.genericKubernetesResources("podsweeper.io/v1alpha1", "PodCleanupPolicy")
          .inNamespace(team).withName("cleanup").get().getAdditionalProperties().get("status") != null);
      assertThat(admin.genericKubernetesResources("podsweeper.io/v1alpha1", "PodCleanupPolicy").inNamespace(team).withName("cleanup")
          .get().getAdditionalProperties().get("status").toString()).contains("Accepted");
    }
  }

  @Test
  @Order(4)
  void aMissingPermissionIsReportedAndNothingCrashes(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    // The manifest's ClusterRole without pods/eviction create, for a ServiceAccount of its own.
    String sa = "podsweeper-no-eviction";
    ClusterRole shipped = admin.rbac().clusterRoles().withName("podsweeper").get();
    List<PolicyRule> rules = shipped.getRules().stream().filter(r -> !r.getResources().contains("pods/eviction")).toList();
    assertThat(rules).hasSize(shipped.getRules().size() - 1);
    serviceAccountWith(admin, sa, rules);

    String ns = server.newNamespace("mf-403");
    Pod crashing = TestPods.create(admin, ns, "crashing", "node-a", Map.of());
    TestPods.setStatus(admin, crashing, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 5)));

    try (LogLines logged = LogLines.of(Sweeper.class);
        RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, sa), policy(ns))) {
      await().atMost(Duration.ofSeconds(15)).until(() -> service.decision(ns, "crashing") != null);
      JsonNode d = service.decision(ns, "crashing");
      assertThat(d.get("result").asText()).isEqualTo("error");
      assertThat(d.get("message").asText())
          .startsWith("403 ")
          .contains("system:serviceaccount:podsweeper:" + sa)
          .contains("cannot create resource \"pods/eviction\"");
      assertThat(logged.events()).anySatisfy(e -> {
        assertThat(e.getFormattedMessage()).isEqualTo("did not evict pod " + ns + "/crashing");
        assertThat(e.getKeyValuePairs()).anySatisfy(kv -> assertThat(kv.key + "=" + kv.value).isEqualTo("result=error"))
            .anySatisfy(kv -> assertThat(kv.key + "=" + kv.value).startsWith("detail=403").contains("pods/eviction"));
      });
      assertThat(service.metric("podsweeper_api_errors_total", "operation=\"evict\"", "code=\"403\"")).isGreaterThanOrEqualTo(1.0);
      assertThat(service.metric("podsweeper_removals_total", "result=\"error\"", "namespace=\"" + ns + "\"")).isGreaterThanOrEqualTo(1.0);
      // Still alive and still ready: the pod stays, and is retried with backoff.
      assertThat(service.status("/healthz")).isEqualTo(200);
      assertThat(service.status("/readyz")).isEqualTo(200);
      assertThat(admin.pods().inNamespace(ns).withName("crashing").get().getMetadata().getDeletionTimestamp()).isNull();
    }
  }

  @Test
  @Order(5)
  void reapplyingTheBaseDuringAPauseKeepsThePauseAndThePolicyEdit(TestApiServer server) throws Exception {
    Manifests.reinstall(server);
    pauseEditThePolicyAndReapplyTheBase(server);
  }

  @Test
  @Order(6)
  void upgradingFromTheOldBaseDoesNotResume(TestApiServer server) throws Exception {
    // 0.1.0 shipped both ConfigMaps in the base: applied, they carry paused: "false" in kubectl's last-applied
    // annotation, which a three-way merge would enforce again if the new base still held the key.
    Manifests.deleteInstalled(server);
    Manifests.kubectlApplyKustomization(server, OLD_BASE);
    ConfigMap control = Manifests.control(server);
    assertThat(control.getData()).containsEntry("paused", "false");
    assertThat(control.getMetadata().getAnnotations().get("kubectl.kubernetes.io/last-applied-configuration"))
        .contains("\"paused\":\"false\"");
    pauseEditThePolicyAndReapplyTheBase(server);
  }

  /**
   * As the Deployment runs it (the policy file mounted from the shipped ConfigMap, {@code --policy-configmap}): a
   * rejected edit is a Warning Event that {@code kubectl describe configmap podsweeper-policy} shows, which it does
   * only for an Event carrying the ConfigMap's uid, read under the ServiceAccount.
   */
  @Test
  @Order(7)
  void aRejectedPolicyEditShowsInKubectlDescribeOfThePolicyConfigMap(TestApiServer server, @TempDir Path dir) throws Exception {
    Manifests.reinstall(server);
    String ns = server.newNamespace("mf-reject");
    Path file = Files.writeString(dir.resolve("policy.yaml"), policy(ns));
    Service.Options asDeployed = Service.Options.local(0).withPolicyFile(file, UnaryOperator.identity(), Duration.ofMillis(200))
        .withPolicyConfigMap(NS, Manifests.POLICY);
    try (RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, SA), policy(ns), asDeployed)) {
      Files.writeString(file, "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules: [{name: x, states: [Crashloop]}]\n");
      await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
          assertThat(Manifests.kubectl(server, "-n", NS, "describe", "configmap", Manifests.POLICY))
              .contains("PodSweeperPolicyRejected").contains("unknown state \"Crashloop\""));
    }
  }

  /**
   * README's step 3 out of the box: the shipped Deployment, run as its pod would run it (its arguments, the policy and
   * the admin token's Secret mounted where it mounts them, its ServiceAccount), answers the decisions to the token that
   * README's {@code kubectl get secret} reads, and to nobody else.
   */
  @Test
  @Order(8)
  void theShippedDeploymentAnswersReadmesCurlWithTheSecretsToken(TestApiServer server, @TempDir Path dir) throws Exception {
    Manifests.reinstall(server);
    try (AsDeployed pod = AsDeployed.start(server, NS, "podsweeper", "podsweeper-readme", dir)) {
      pod.awaitReady(Duration.ofSeconds(60));
      String token = Manifests.adminToken(server, NS, Manifests.ADMIN_TOKEN);
      var decisions = pod.get("/api/v1/decisions", token);
      assertThat(decisions.statusCode()).as(decisions.body()).isEqualTo(200);
      assertThat(JSON.readTree(decisions.body()).has("decisions")).isTrue();
      assertThat(pod.get("/api/v1/decisions", null).statusCode()).isEqualTo(401);
      assertThat(pod.get("/api/v1/decisions", "not-" + token).statusCode()).isEqualTo(401);
    }
  }

  /**
   * RBAC revoked under a running replica (issue 41): once its watches end they cannot start again, and the log names
   * the API server's 403 and the read it refused, not an unreachable server; granted again, it says so once.
   */
  @Test
  @Order(9)
  void rbacRevokedUnderARunningReplicaIsLoggedAsThe403ItIs(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    String sa = "podsweeper-revoked";
    ClusterRole shipped = admin.rbac().clusterRoles().withName("podsweeper").get();
    serviceAccountWith(admin, sa, shipped.getRules());
    String ns = server.newNamespace("mf-revoked");

    try (LogLines logged = LogLines.of(Service.class);
        RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, sa), policy(ns))) {
      admin.rbac().clusterRoleBindings().withName(sa).delete();
      // Its open watches would go on until their renewal: ended now, they must list and watch again, as the revoked.
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        server.cutConnections();
        assertThat(service.status("/readyz")).isEqualTo(503);
      });
      await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(logged.events()).anySatisfy(e -> assertThat(e.getFormattedMessage())
          .contains("answered 403 Forbidden to ").containsPattern("(list|watch|get) [a-z.]+").contains("holding removals")));
      assertThat(logged.events()).noneSatisfy(e -> assertThat(e.getFormattedMessage()).contains("unreachable"));

      serviceAccountWith(admin, sa, shipped.getRules());
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(logged.events()).anySatisfy(e -> assertThat(e.getFormattedMessage())
          .contains("grants the service's reads again")));
    } finally {
      admin.rbac().clusterRoleBindings().withName(sa).delete();
    }
  }

  /** A ServiceAccount of its own in the manifests' namespace, bound to a ClusterRole of its name with {@code rules}. */
  private static ClusterRoleBinding serviceAccountWith(KubernetesClient admin, String sa, List<PolicyRule> rules) {
    admin.serviceAccounts().inNamespace(NS).resource(new ServiceAccountBuilder().withNewMetadata().withName(sa).endMetadata().build())
        .serverSideApply();
    admin.rbac().clusterRoles().resource(new ClusterRoleBuilder().withNewMetadata().withName(sa).endMetadata().withRules(rules).build())
        .serverSideApply();
    return admin.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata().withName(sa).endMetadata()
        .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", sa)
        .addNewSubject().withKind("ServiceAccount").withName(sa).withNamespace(NS).endSubject().build()).serverSideApply();
  }

  /**
   * An operator pauses and edits the policy with kubectl, then {@code kubectl apply -k manifests/} runs again (an
   * upgrade): the pause and the edit stay, and a replica started afterwards (the upgrade's rollout) removes nothing.
   */
  private static void pauseEditThePolicyAndReapplyTheBase(TestApiServer server) throws Exception {
    Manifests.setPaused(server, NS, Manifests.CONTROL, "true");
    String edited = Manifests.editPolicy(server, NS, Manifests.POLICY, p -> p.replace("fullPassInterval: 5m", "fullPassInterval: 7m"));

    String applied = Manifests.kubectlApplyKustomization(server, Manifests.BASE);
    assertThat(applied).contains("deployment.apps/podsweeper").contains("role.rbac.authorization.k8s.io/podsweeper");
    assertThat(Manifests.control(server).getData()).containsEntry("paused", "true");
    assertThat(server.client().configMaps().inNamespace(NS).withName(Manifests.POLICY).get().getData())
        .containsEntry("policy.yaml", edited);

    String ns = server.newNamespace("mf-upgrade");
    Pod failed = TestPods.create(server.client(), ns, "failed", "node-a", Map.of());
    TestPods.setStatus(server.client(), failed, "Failed", null, List.of(TestPods.terminated("Error", 1, Instant.now().minus(Duration.ofHours(2)))));
    Service.Options asDeployed = Service.Options.local(0).withControl(NS, Manifests.CONTROL);
    try (RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, SA), policy(ns), asDeployed)) {
      assertThat(service.metric("podsweeper_paused")).isEqualTo(1.0);
      await().atMost(Duration.ofSeconds(10)).until(() -> "paused".equals(service.result(ns, "failed")));
      assertThat(server.removalRequests(ns)).isEmpty();
      // Resumed only by an explicit "false"; then it removes (the replica was able to all along).
      Manifests.setPaused(server, NS, Manifests.CONTROL, "false");
      await().atMost(Duration.ofSeconds(15)).until(() -> server.client().pods().inNamespace(ns).withName("failed").get() == null);
    }
  }

  private static String policy(String namespace) {
    return """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules:
          - name: failed
            namespaces: {include: [%1$s]}
            states: [Failed]
            maxAgeAfterFinish: 1h
          - name: crashloop
            namespaces: {include: [%1$s]}
            states: [CrashLoopBackOff]
            maxAge: 1s
        """.formatted(namespace);
  }

  /** "verb group//resource[/subresource] [namespace[/name]]": may {@code user} do it? (a SubjectAccessReview) */
  private static boolean allowed(KubernetesClient admin, String user, String request) {
    String[] parts = request.split(" ");
    String[] groupResource = parts[1].split("//");
    String[] resource = groupResource[1].split("/");
    String[] object = parts.length > 2 ? parts[2].split("/") : new String[0];
    ResourceAttributesBuilder attributes = new ResourceAttributesBuilder().withVerb(parts[0]).withGroup(groupResource[0])
        .withResource(resource[0]).withSubresource(resource.length > 1 ? resource[1] : null)
        .withNamespace(object.length > 0 ? object[0] : null).withName(object.length > 1 ? object[1] : null);
    SubjectAccessReview review = admin.authorization().v1().subjectAccessReview().create(new SubjectAccessReviewBuilder()
        .withNewSpec().withUser(user).withGroups("system:serviceaccounts", "system:serviceaccounts:" + NS, "system:authenticated")
        .withResourceAttributes(attributes.build()).endSpec().build());
    return Boolean.TRUE.equals(review.getStatus().getAllowed());
  }

  private static int code(Runnable request) {
    try {
      request.run();
      return 200;
    } catch (KubernetesClientException e) {
      return e.getCode();
    }
  }
}
