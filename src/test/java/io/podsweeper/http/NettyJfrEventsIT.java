package io.podsweeper.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.PodsweeperProcess;
import io.podsweeper.testing.TestApiServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged service does not start JFR's machinery for Netty's allocator events ({@link HttpApi} turns them off
 * before Vert.x loads Netty), and an operator's -Dio.netty.jfr.enabled=true still turns them on. Witness: the classes
 * the running JVM has loaded (jcmd VM.class_hierarchy) after its HTTP server has answered.
 */
@ExtendWith(ApiServerExtension.class)
class NettyJfrEventsIT {
  private static final String EVENT_CLASS = "io.netty.buffer.AllocateChunkEvent";

  @Test
  void nettysJfrEventsAreOff(TestApiServer server, @TempDir Path dir) throws Exception {
    assertThat(loadedClassesOfARun(server, dir, Map.of())).doesNotContain(EVENT_CLASS);
  }

  @Test
  void anOperatorCanTurnThemOn(TestApiServer server, @TempDir Path dir) throws Exception {
    // The control: the same witness sees the events when they are on.
    assertThat(loadedClassesOfARun(server, dir, Map.of("JAVA_TOOL_OPTIONS", "-Dio.netty.jfr.enabled=true"))).contains(EVENT_CLASS);
  }

  private static String loadedClassesOfARun(TestApiServer server, Path dir, Map<String, String> environment) throws Exception {
    Path policy = PodsweeperProcess.idlePolicy(dir);
    int port = PodsweeperProcess.freePort();
    Process run = PodsweeperProcess.start(dir.resolve("run.log"), environment, "run", "--policy", policy.toString(),
        "--kubeconfig", server.kubeconfig().toString(), "--http-host", "127.0.0.1", "--http-port", String.valueOf(port),
        "--probe-port", "0", "--dry-run", "--control-configmap", "");
    try {
      HttpClient http = HttpClient.newHttpClient();
      HttpRequest metrics = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build();
      // Netty allocates its first chunk for the first response.
      await().atMost(Duration.ofSeconds(60)).ignoreExceptions()
          .until(() -> http.send(metrics, HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
      Process jcmd = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
          String.valueOf(run.pid()), "VM.class_hierarchy")).redirectErrorStream(true).start();
      String classes = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(jcmd.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(classes).as("jcmd answered").contains("java.lang.Object");
      return classes;
    } finally {
      run.destroy();
      run.waitFor();
    }
  }
}
