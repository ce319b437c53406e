package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.Manifests;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A person with read access only runs a live {@code plan} and {@code explain}, as themselves: without a binding the
 * command names the read that was refused, for whom, and the one command that grants ClusterRole podsweeper-viewer;
 * with it both work; and each of the role's rules is needed (without any one, that read is the one refused).
 */
@ExtendWith(ApiServerExtension.class)
class ViewerIT {
  private static final String POLICY = Manifests.PROJECT.resolve("config/policy.yaml").toString();
  /** The viewer role's rules for reads only a policy with measured-usage strategies makes (and falls back without). */
  private static final List<String> OPTIONAL = List.of("slo.koordinator.sh", "metrics.k8s.io");

  private static String namespace;

  @BeforeAll
  static void applyTheBase(TestApiServer server) throws Exception {
    Manifests.applyBase(server);
    namespace = server.newNamespace("viewer");
    Pod failed = TestPods.create(server.client(), namespace, "failed", "node-a", Map.of());
    TestPods.setStatus(server.client(), failed, "Failed", null, List.of(TestPods.terminated("Error", 1, Instant.now().minus(Duration.ofHours(2)))));
  }

  @Test
  void withoutTheViewerRoleTheCommandSaysWhichReadIsMissingForWhomAndHowToGrantIt(TestApiServer server, @TempDir Path dir) throws Exception {
    Path alice = Manifests.kubeconfig(server, Manifests.userConfig(server, "alice", "developers"), dir.resolve("kubeconfig"));
    for (String command : List.of("plan", "explain")) {
      CliRun run = command.equals("plan") ? plan(alice) : explain(alice);
      assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
      assertThat(run.err().lines().filter(l -> l.startsWith("error: "))).as(command).containsExactly(
          "error: cannot get clusterpodcleanuppolicies.podsweeper.io: forbidden for alice — plan and explain read the cluster as you;"
              + " ClusterRole podsweeper-viewer (manifests/rbac.yaml) grants what they read:"
              + " kubectl create clusterrolebinding podsweeper-viewer-alice --clusterrole=podsweeper-viewer --user=alice");
    }
  }

  @Test
  void withTheViewerRolePlanAndExplainWork(TestApiServer server, @TempDir Path dir) throws Exception {
    bind(server.client(), "podsweeper-viewer", "bob");
    Path bob = Manifests.kubeconfig(server, Manifests.userConfig(server, "bob"), dir.resolve("kubeconfig"));
    await().atMost(Duration.ofSeconds(10)).until(() -> plan(bob).exitCode() == 0);
    CliRun explain = explain(bob);
    assertThat(explain.exitCode()).as(explain.err()).isZero();
    assertThat(explain.out()).contains(namespace + "/failed");
  }

  @Test
  void everyRequiredRuleOfTheViewerRoleIsNeeded(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient admin = server.client();
    ClusterRole viewer = admin.rbac().clusterRoles().withName("podsweeper-viewer").require();
    List<PolicyRule> rules = viewer.getRules();
    for (int i = 0; i < rules.size(); i++) {
      PolicyRule left = rules.get(i);
      if (OPTIONAL.contains(left.getApiGroups().get(0))) {
        continue;
      }
      String user = "viewer-without-" + i;
      List<PolicyRule> others = new ArrayList<>(rules);
      others.remove(i);
      admin.rbac().clusterRoles().resource(new ClusterRoleBuilder().withNewMetadata().withName(user).endMetadata().withRules(others).build())
          .serverSideApply();
      bind(admin, user, user);
      Path kubeconfig = Manifests.kubeconfig(server, Manifests.userConfig(server, user), dir.resolve(user));
      // One of the rule's resources is the read refused (the first the command makes).
      String refused = "cannot " + left.getVerbs().get(0) + " (" + String.join("|", left.getResources()) + ")";
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        CliRun run = plan(kubeconfig);
        assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
        assertThat(run.err()).as("without " + left).containsPattern("error: " + refused + "[a-z0-9.]*: forbidden for " + user + " — ");
      });
    }
  }

  private static void bind(KubernetesClient admin, String clusterRole, String user) {
    admin.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata().withName(clusterRole + "-" + user).endMetadata()
        .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", clusterRole)
        .addNewSubject().withApiGroup("rbac.authorization.k8s.io").withKind("User").withName(user).endSubject().build()).serverSideApply();
  }

  private static CliRun plan(Path kubeconfig) {
    return CliRun.of("plan", "--policy", POLICY, "--kubeconfig", kubeconfig.toString());
  }

  private static CliRun explain(Path kubeconfig) {
    return CliRun.of("explain", namespace + "/failed", "--policy", POLICY, "--kubeconfig", kubeconfig.toString());
  }
}
