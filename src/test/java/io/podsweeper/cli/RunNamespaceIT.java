package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.PodsweeperProcess;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code podsweeper run} finds the kill switch's namespace without {@code --namespace} or {@code $POD_NAMESPACE}: from
 * the kubeconfig's context, as a laptop runs it; without any, it runs only in dry-run (the refusal is in MainTest).
 */
@ExtendWith(ApiServerExtension.class)
class RunNamespaceIT {

  @Test
  void theKubeconfigContextsNamespaceHoldsTheKillSwitch(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient admin = server.client();
    String ns = server.newNamespace("ctx");
    admin.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("podsweeper-control").endMetadata()
        .withData(Map.of("paused", "true")).build()).create();
    TestPods.setStatus(admin, TestPods.create(admin, ns, "a", "node-a", Map.of()), "Running", null,
        List.of(TestPods.waiting("CrashLoopBackOff", 4)));
    Path log = dir.resolve("run.log");
    Process run = PodsweeperProcess.start(log, "run", "--policy", crashloopPolicy(dir, ns, false).toString(),
        "--kubeconfig", kubeconfigWithNamespace(server, dir, ns).toString(), "--http-port", "0", "--probe-port", "0", "--http-host", "127.0.0.1");
    try {
      await().atMost(Duration.ofSeconds(30)).until(() -> Files.readString(log).contains("informers synced"));
      assertThat(Files.readString(log)).contains("removals PAUSED");
      Thread.sleep(3000);
      assertThat(server.removalRequests(ns)).isEmpty();
      admin.configMaps().inNamespace(ns).withName("podsweeper-control").edit(cm -> {
        cm.getData().put("paused", "false");
        return cm;
      });
      await().atMost(Duration.ofSeconds(15)).until(() -> admin.pods().inNamespace(ns).withName("a").get() == null);
    } finally {
      run.destroy();
      run.waitFor();
    }
  }

  /**
   * Issue 41's newcomer: the kubeconfig's context says one namespace, the deployment's paused kill switch lives in
   * another. The log names the one this process obeys, where its namespace came from, and that it does not exist.
   */
  @Test
  void itNamesTheKillSwitchItObeysAndWarnsWhenItDoesNotExist(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient admin = server.client();
    String deployed = server.newNamespace("deployed");
    String context = server.newNamespace("context");
    admin.configMaps().inNamespace(deployed).resource(new ConfigMapBuilder().withNewMetadata().withName("podsweeper-control").endMetadata()
        .withData(Map.of("paused", "true")).build()).create();
    Path log = dir.resolve("run.log");
    Process run = PodsweeperProcess.start(log, "run", "--policy", crashloopPolicy(dir, context, true).toString(),
        "--kubeconfig", kubeconfigWithNamespace(server, dir, context).toString(), "--http-port", "0", "--probe-port", "0", "--http-host", "127.0.0.1");
    try {
      await().atMost(Duration.ofSeconds(30)).until(() -> Files.readString(log).contains("informers synced"));
      assertThat(Files.readString(log))
          .contains("the kill switch is configmap " + context + "/podsweeper-control (namespace from the kubeconfig context test)")
          .contains("WARN", "the kill switch's configmap " + context + "/podsweeper-control does not exist");
    } finally {
      run.destroy();
      run.waitFor();
    }
  }

  @Test
  void withoutANamespaceOnlyADryRunRunsAndItSaysTheKillSwitchIsOff(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient admin = server.client();
    String ns = server.newNamespace("nons");
    TestPods.setStatus(admin, TestPods.create(admin, ns, "a", "node-a", Map.of()), "Running", null,
        List.of(TestPods.waiting("CrashLoopBackOff", 4)));
    Path log = dir.resolve("run.log");
    // The policy says dryRun: true; the test kubeconfig's context names no namespace.
    Process run = PodsweeperProcess.start(log, "run", "--policy", crashloopPolicy(dir, ns, true).toString(),
        "--kubeconfig", server.kubeconfig().toString(), "--http-port", "0", "--probe-port", "0", "--http-host", "127.0.0.1");
    try {
      await().atMost(Duration.ofSeconds(30)).until(() -> Files.readString(log).contains("informers synced"));
      assertThat(Files.readString(log)).contains("the kill switch is OFF: no namespace for configmap podsweeper-control");
      Thread.sleep(3000);
      assertThat(run.isAlive()).isTrue();
      assertThat(server.removalRequests(ns)).isEmpty();
    } finally {
      run.destroy();
      run.waitFor();
    }
  }

  private static Path kubeconfigWithNamespace(TestApiServer server, Path dir, String ns) throws Exception {
    String kubeconfig = Files.readString(server.kubeconfig());
    String withNamespace = kubeconfig.replace("context: {cluster: test, user: admin}", "context: {cluster: test, user: admin, namespace: " + ns + "}");
    assertThat(withNamespace).isNotEqualTo(kubeconfig);
    return Files.writeString(dir.resolve("kubeconfig"), withNamespace);
  }

  private static Path crashloopPolicy(Path dir, String ns, boolean dryRun) throws Exception {
    return Files.writeString(dir.resolve("policy.yaml"), """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        dryRun: %s
        rules:
          - name: crashloop
            namespaces: {include: [%s]}
            states: [CrashLoopBackOff]
            maxAge: 1s
        """.formatted(dryRun, ns));
  }
}
