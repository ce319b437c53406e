package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.Config;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.Manifests;
import io.podsweeper.testing.PodsweeperProcess;
import io.podsweeper.testing.TestApiServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an operator reads when {@code run} cannot work against a real API server: one line naming the server, the
 * flag or the missing permission, exit code 1, no stack trace; and during an outage one line of ours, not fabric8's
 * reconnect traces.
 */
@ExtendWith(ApiServerExtension.class)
class RunErrorsIT {

  @Test
  void aRefusedTokenNamesTheServer(TestApiServer server, @TempDir Path dir) throws Exception {
    CliRun run = run(dir, Manifests.kubeconfig(server, dir.resolve("kubeconfig"), "{token: not-the-token}"));
    assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
    assertOneLine(run, "error: the API server at " + server.config().getMasterUrl() + " refused the credentials (401 Unauthorized)"
        + " — check the user's token or certificate in --kubeconfig");
  }

  @Test
  void missingRbacNamesTheVerbTheResourceAndTheUser(TestApiServer server, @TempDir Path dir) throws Exception {
    Config nobody = Manifests.serviceAccountConfig(server, "nobody");
    CliRun run = run(dir, Manifests.kubeconfig(server, nobody, dir.resolve("kubeconfig")));
    assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
    assertOneLine(run, "error: cannot ");
    assertThat(run.err().lines().filter(l -> l.startsWith("error: "))).singleElement().asString().matches(
        "error: cannot (list|watch) [a-z.]+: forbidden for " + Manifests.user("nobody") + " — apply manifests/rbac.yaml");
    // Said once, by us: not again by each informer whose list was refused.
    assertThat(run.err().lines().filter(l -> l.contains(" ERROR ") || l.startsWith("error: "))).as(run.err()).hasSize(1);
  }

  @Test
  void aPortInUseNamesTheFlags(TestApiServer server, @TempDir Path dir) throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      String port = String.valueOf(taken.getLocalPort());
      CliRun run = CliRun.of("run", "--policy", policy(dir).toString(), "--kubeconfig", server.kubeconfig().toString(), "--dry-run",
          "--control-configmap", "", "--http-host", "127.0.0.1", "--http-port", port, "--probe-port", "0");
      assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
      assertOneLine(run, "error: cannot listen on 127.0.0.1:" + port + ": ");
      assertThat(run.err()).contains("— choose another --http-port or --http-host");
      CliRun probes = CliRun.of("run", "--policy", policy(dir).toString(), "--kubeconfig", server.kubeconfig().toString(), "--dry-run",
          "--control-configmap", "", "--http-host", "127.0.0.1", "--http-port", "0", "--probe-port", port);
      assertThat(probes.exitCode()).as(probes.err()).isEqualTo(1);
      assertOneLine(probes, "error: cannot listen on 127.0.0.1:" + port + ": ");
      assertThat(probes.err()).contains("— choose another --probe-port or --http-host");
    }
  }

  @Test
  void anOutageIsOneWarningAndOneRecoveryNotTraces(TestApiServer server, @TempDir Path dir) throws Exception {
    Path log = dir.resolve("run.log");
    Process run = PodsweeperProcess.start(log, "run", "--policy", policy(dir).toString(), "--kubeconfig", server.kubeconfig().toString(),
        "--dry-run", "--control-configmap", "", "--http-port", "0", "--probe-port", "0", "--http-host", "127.0.0.1");
    try {
      // Started: the namespaced policies listed, or said why not (the outage here is of a running service).
      await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(log).contains("NamespacedPolicies"));
      server.down();
      try {
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.readString(log).contains("holding removals"));
        Thread.sleep(15_000); // fabric8 keeps reconnecting meanwhile
      } finally {
        server.up();
      }
      await().atMost(Duration.ofSeconds(90)).until(() -> Files.readString(log).contains("removals resume"));
      String text = Files.readString(log);
      assertThat(text).doesNotContain("\tat ").doesNotContain("Exception");
      String outage = text.substring(text.indexOf("informers synced"));
      // From the outage to the recovery: our two lines, none of the client's.
      assertThat(outage.lines().skip(1).filter(l -> !l.contains("NamespacedPolicies"))).hasSize(2).satisfiesExactly(
          l -> assertThat(l).contains(" WARN ").contains("API server " + server.config().getMasterUrl()
              + " unreachable or a watch broken: the cache is not current, holding removals"),
          l -> assertThat(l).contains(" INFO ").contains("reachable again and every watch resumed: removals resume"));
    } finally {
      run.destroy();
      run.waitFor();
    }
  }

  private static CliRun run(Path dir, Path kubeconfig) throws Exception {
    return CliRun.of("run", "--policy", policy(dir).toString(), "--kubeconfig", kubeconfig.toString(), "--dry-run", "--control-configmap", "",
        "--http-host", "127.0.0.1", "--http-port", "0", "--probe-port", "0", "--sync-timeout", "30");
  }

  private static void assertOneLine(CliRun run, String start) {
    assertThat(run.err()).contains(start).doesNotContain("\tat ");
    assertThat(run.err().lines().filter(l -> l.startsWith("error: "))).singleElement().asString().startsWith(start);
  }

  private static Path policy(Path dir) throws Exception {
    return Files.writeString(dir.resolve("policy.yaml"), """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        dryRun: true
        rules: [{name: r, namespaces: {include: [no-such-namespace]}, states: [Failed]}]
        """);
  }
}
