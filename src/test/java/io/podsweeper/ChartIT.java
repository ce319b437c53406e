package io.podsweeper;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Release;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.AsDeployed;
import io.podsweeper.testing.Chart;
import io.podsweeper.testing.Manifests;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Helm chart installed and upgraded by Helm itself (helm-java) on the real API server, under a release name of its
 * own ("sweeper", so every name is derived: sweeper-podsweeper). Its Deployment then runs as its pod would
 * ({@link AsDeployed}: the chart's arguments, its mounted policy and token, its ServiceAccount's permissions only), and
 * the audit log witnesses what it removes. The promise of the kustomize base holds: {@code helm upgrade} keeps a
 * pause and a policy edited in place, whatever the values say.
 */
@ExtendWith(ApiServerExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ChartIT {
  private static final String RELEASE = "sweeper";
  private static final String FULLNAME = "sweeper-podsweeper";
  private static String namespace;
  /** Where the policy of the values removes: the test's pods. */
  private static String workloads;
  private static Path values;

  @BeforeAll
  static void install(TestApiServer server, @TempDir Path dir) throws Exception {
    namespace = server.newNamespace("helm");
    workloads = server.newNamespace("helm-workloads");
    values = Files.writeString(dir.resolve("values.yaml"), valuesRemovingFailedPodsIn(workloads, "1h"));
    Release release = Chart.install(server, RELEASE, namespace, values);
    assertThat(release.getStatus()).isEqualTo("deployed");
  }

  @Test
  @Order(1)
  void theReleaseHoldsTheBasesObjectsUnderItsOwnNames(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    assertThat(admin.apps().deployments().inNamespace(namespace).withName(FULLNAME).get().getSpec().getTemplate().getSpec()
        .getServiceAccountName()).isEqualTo(FULLNAME);
    assertThat(admin.rbac().clusterRoles().withName(FULLNAME + "-viewer").get()).isNotNull();
    assertThat(admin.rbac().roles().inNamespace(namespace).withName(FULLNAME).get().getRules())
        .flatExtracting(r -> r.getResourceNames()).contains(FULLNAME + "-control", FULLNAME + "-control-guard", FULLNAME + "-policy");
    // Created once by the install, as manifests/install/ is: the kill switch without a `paused` key, a random token.
    assertThat(admin.configMaps().inNamespace(namespace).withName(FULLNAME + "-control").get().getData()).isNullOrEmpty();
    // The values' policy, whole: not merged into the default one (which is in dry-run).
    assertThat(admin.configMaps().inNamespace(namespace).withName(FULLNAME + "-policy").get().getData().get("policy.yaml"))
        .contains(workloads).doesNotContain("dryRun").doesNotContain("ci-failed");
    assertThat(Manifests.adminToken(server, namespace, FULLNAME + "-admin-token")).hasSizeGreaterThanOrEqualTo(32);
    // The test server is Kubernetes 1.20: no policy/v1, so no PodDisruptionBudget (and the install did not fail on one).
    assertThat(admin.policy().v1beta1().podDisruptionBudget().inNamespace(namespace).list().getItems()).isEmpty();
  }

  @Test
  @Order(2)
  void itsDeploymentRemovesADuePodAsTheChartsServiceAccount(TestApiServer server, @TempDir Path dir) throws Exception {
    Pod failed = failedTwoHoursAgo(server, "failed");
    try (AsDeployed pod = AsDeployed.start(server, namespace, FULLNAME, FULLNAME + "-0", dir)) {
      pod.awaitReady(Duration.ofSeconds(60));
      pod.awaitUntil(Duration.ofSeconds(60), "the removal of failed", () -> server.client().pods().inNamespace(workloads).withName("failed").get() == null);
      assertThat(server.removalRequests(workloads)).singleElement().satisfies(request -> {
        assertThat(request.name()).isEqualTo(failed.getMetadata().getName());
        assertThat(request.verb()).isEqualTo("delete");
        assertThat(request.user()).isEqualTo("system:serviceaccount:" + namespace + ":" + FULLNAME);
        assertThat(request.code()).isEqualTo(200);
      });
      // The chart's admin token reads the decisions.
      var decisions = pod.get("/api/v1/decisions", Manifests.adminToken(server, namespace, FULLNAME + "-admin-token"));
      assertThat(decisions.statusCode()).isEqualTo(200);
      assertThat(decisions.body()).contains("\"name\":\"failed\"");
    }
  }

  /**
   * An operator pauses and edits the policy in place; {@code helm upgrade} (a new image tag, and values whose policy
   * says otherwise) keeps both, says so, and the replica its rollout starts removes nothing until "false" resumes.
   */
  @Test
  @Order(3)
  void helmUpgradeDuringAPauseKeepsThePauseAndThePolicyEdit(TestApiServer server, @TempDir Path dir) throws Exception {
    Manifests.setPaused(server, namespace, FULLNAME + "-control", "true");
    String edited = Manifests.editPolicy(server, namespace, FULLNAME + "-policy", p -> p.replace("maxAgeAfterFinish: 1h", "maxAgeAfterFinish: 90m"));
    Files.writeString(values, valuesRemovingFailedPodsIn(workloads, "5h"));

    Release upgraded = Chart.upgrade(server, RELEASE, namespace, values, Map.of("image.tag", "0.1.1"));
    assertThat(upgraded.getStatus()).isEqualTo("deployed");
    assertThat(upgraded.getRevision()).isEqualTo("2");
    assertThat(upgraded.getOutput()).contains("differs from the values' `policy` and is kept as it is");
    KubernetesClient admin = server.client();
    assertThat(admin.apps().deployments().inNamespace(namespace).withName(FULLNAME).get().getSpec().getTemplate().getSpec()
        .getContainers().get(0).getImage()).endsWith(":0.1.1");
    assertThat(admin.configMaps().inNamespace(namespace).withName(FULLNAME + "-control").get().getData()).containsEntry("paused", "true");
    assertThat(admin.configMaps().inNamespace(namespace).withName(FULLNAME + "-policy").get().getData()).containsEntry("policy.yaml", edited);

    failedTwoHoursAgo(server, "failed-during-pause");
    try (AsDeployed pod = AsDeployed.start(server, namespace, FULLNAME, FULLNAME + "-1", dir)) {
      pod.awaitReady(Duration.ofSeconds(60));
      assertThat(pod.get("/metrics", null).body()).contains("podsweeper_paused 1.0");
      // Held, not removed (the edited policy's 90m has long passed for a pod that failed 2h ago).
      Thread.sleep(3000);
      assertThat(server.removalRequests(workloads)).noneMatch(r -> r.name().equals("failed-during-pause"));
      Manifests.setPaused(server, namespace, FULLNAME + "-control", "false");
      pod.awaitUntil(Duration.ofSeconds(30), "the removal after the resume",
          () -> admin.pods().inNamespace(workloads).withName("failed-during-pause").get() == null);
    }
  }

  private static Pod failedTwoHoursAgo(TestApiServer server, String name) {
    Pod pod = TestPods.create(server.client(), workloads, name, "node-a", Map.of());
    TestPods.setStatus(server.client(), pod, "Failed", null, List.of(TestPods.terminated("Error", 1, Instant.now().minus(Duration.ofHours(2)))));
    return pod;
  }

  private static String valuesRemovingFailedPodsIn(String namespace, String after) {
    return """
        policy:
          apiVersion: podsweeper.io/v1alpha1
          kind: PodSweeperPolicy
          rules:
            - name: failed
              namespaces: {include: [%s]}
              states: [Failed]
              maxAgeAfterFinish: %s
        """.formatted(namespace, after);
  }
}
