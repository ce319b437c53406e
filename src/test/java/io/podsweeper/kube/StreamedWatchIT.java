package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager;
import io.fabric8.kubernetes.client.dsl.internal.BaseOperation;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.Manifests;
import io.podsweeper.testing.PodsweeperProcess;
import io.podsweeper.testing.TestApiServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Watches as client-go makes them ({@link StreamedWatch}): streams of the one HTTP/2 connection to the API server, which
 * count as watching from the server's answer, quiet or not, and read what the server sends in any script.
 */
@ExtendWith(ApiServerExtension.class)
class StreamedWatchIT {
  private static final String REASON = "Wartung – nicht löschen ✓ 🚧";

  /**
   * The packaged service, ready (every informer listed and watching, the kill switch's too), holds one TCP connection to
   * the API server. With fabric8's WebSocket watches it held eight: one per watch, and one for everything else.
   */
  @Test
  void theReadyServiceHoldsOneConnectionToTheApiServer(TestApiServer server, @TempDir Path dir) throws Exception {
    String ns = server.newNamespace("one-connection");
    server.client().configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("podsweeper-control")
        .endMetadata().build()).create();
    Path policy = PodsweeperProcess.idlePolicy(dir);
    int port = PodsweeperProcess.freePort();
    Process run = PodsweeperProcess.start(dir.resolve("run.log"), "run", "--policy", policy.toString(),
        "--kubeconfig", server.kubeconfig().toString(), "--http-host", "127.0.0.1", "--http-port", String.valueOf(port),
        "--probe-port", "0", "--namespace", ns);
    try {
      HttpClient http = HttpClient.newHttpClient();
      HttpRequest ready = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz")).build();
      await().atMost(Duration.ofSeconds(60)).ignoreExceptions()
          .until(() -> http.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
      int apiServerPort = URI.create(server.config().getMasterUrl()).getPort();
      assertThat(connections(run.pid(), apiServerPort)).as("TCP connections of the service to the API server").isEqualTo(1);
    } finally {
      run.destroy();
      run.waitFor();
    }
  }

  /** A watch of something that never changes counts as watching, and what it then hears is read as the server wrote it. */
  @Test
  void aQuietWatchIsWatchingAndReadsEveryScript(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    String ns = server.newNamespace("streamed");
    List<String> heard = new CopyOnWriteArrayList<>();
    AbstractWatchManager<ConfigMap> watch = StreamedWatch.of(
        (BaseOperation<ConfigMap, ?, ?>) admin.configMaps().inNamespace(ns).withName("control"), new ListOptions(), new Watcher<>() {
          @Override
          public void eventReceived(Action action, ConfigMap resource) {
            heard.add(action + " " + resource.getData().get("reason"));
          }

          @Override
          public void onClose(WatcherException cause) {
            heard.add("closed: " + cause);
          }
        }).get(30, TimeUnit.SECONDS);
    try {
      Thread.sleep(3000);
      assertThat(watch.isWatching()).as("watching, with nothing heard for 3 s").isTrue();
      assertThat(heard).isEmpty();

      admin.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("control").endMetadata()
          .withData(Map.of("reason", REASON)).build()).create();
      await().atMost(Duration.ofSeconds(10)).until(() -> !heard.isEmpty());
      assertThat(heard).containsExactly("ADDED " + REASON);
    } finally {
      watch.close();
    }
    assertThat(watch.isWatching()).as("closed").isFalse();
  }

  /** The server refuses the first request: the watch fails at once and is not tried again by itself. */
  @Test
  void aRefusedWatchFailsAndIsNotRetried(TestApiServer server) throws Exception {
    String ns = server.newNamespace("refused");
    String user = "nobody-" + ns;
    try (KubernetesClient nobody = new KubernetesClientBuilder().withConfig(Manifests.userConfig(server, user)).build()) {
      Instant before = Instant.now();
      CompletableFuture<AbstractWatchManager<ConfigMap>> opened = StreamedWatch.of(
          (BaseOperation<ConfigMap, ?, ?>) nobody.configMaps().inNamespace(ns), new ListOptions(), new Watcher<>() {
            @Override
            public void eventReceived(Action action, ConfigMap resource) {}

            @Override
            public void onClose(WatcherException cause) {}
          });
      ExecutionException failed = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> opened.get(30, TimeUnit.SECONDS));
      assertThat(failed.getCause()).isInstanceOf(KubernetesClientException.class);
      assertThat(((KubernetesClientException) failed.getCause()).getCode()).isEqualTo(403);
      Thread.sleep(3000);
      // A watch is logged at two stages (its answer started, and completed), both with the time it was received.
      List<Instant> watches = server.audit().stream()
          .filter(e -> e.received().isAfter(before) && e.user().equals(user) && e.verb().equals("watch"))
          .map(TestApiServer.AuditEvent::received).distinct().toList();
      assertThat(watches).as("watch requests of %s", user).hasSize(1);
    }
  }

  /** Established TCP connections of process {@code pid} to {@code port} on loopback, from /proc. */
  private static long connections(long pid, int port) throws IOException {
    Set<String> sockets = new HashSet<>();
    try (var fds = Files.list(Path.of("/proc", String.valueOf(pid), "fd"))) {
      for (Path fd : fds.toList()) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith("socket:[")) {
            sockets.add(target.substring(8, target.length() - 1));
          }
        } catch (IOException closedMeanwhile) {
          // a descriptor closed while listed
        }
      }
    }
    String remote = String.format(":%04X", port);
    long count = 0;
    for (String table : List.of("tcp", "tcp6")) {
      for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "net", table)).stream().skip(1).toList()) {
        String[] f = line.trim().split("\\s+");
        if (f[2].endsWith(remote) && f[3].equals("01") && sockets.contains(f[9])) {
          count++;
        }
      }
    }
    return count;
  }
}
