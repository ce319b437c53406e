package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.strategy.Decision;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What PodRemover sends, against a fake API server that answers as the test needs (a real one cannot be made to fail). */
class PodRemoverTest {
  private final List<String> requests = new CopyOnWriteArrayList<>();
  private HttpServer server;
  private KubeClients clients;

  @AfterEach
  void stop() {
    if (clients != null) {
      clients.close();
    }
    if (server != null) {
      server.stop(0);
    }
  }

  /** A server that serves discovery and answers every other request with {@code code}. */
  private PodRemover removerAgainst(int code) throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", ex -> {
      ex.getRequestBody().readAllBytes();
      ex.getResponseHeaders().add("Content-Type", "application/json");
      if (ex.getRequestMethod().equals("GET") && ex.getRequestURI().getPath().equals("/api/v1")) {
        respond(ex, 200, "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"v1\",\"resources\":[]}");
        return;
      }
      requests.add(ex.getRequestMethod() + " " + ex.getRequestURI().getPath());
      respond(ex, code, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":" + code + ",\"message\":\"unavailable\"}");
    });
    server.start();
    clients = KubeClients.of(new ConfigBuilder().withMasterUrl("http://127.0.0.1:" + server.getAddress().getPort()).build());
    return PodRemover.create(clients.unretried(Optional.empty()), OptionalLong::empty);
  }

  private static void respond(HttpExchange ex, int code, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.sendResponseHeaders(code, bytes.length);
    ex.getResponseBody().write(bytes);
    ex.close();
  }

  /**
   * A soft eviction is a removal: sent once, whatever the answer, so that a pause or a lost lease after it is never
   * passed by a retry of the HTTP layer. (Before, it went through the client with fabric8's retries, and a 503 was
   * sent again and again for seconds.)
   */
  @Test
  void aSoftEvictionIsSentOnceWhenTheServerFails() throws Exception {
    PodRemover remover = removerAgainst(503);
    PodRecord pod = PodFixtures.pod("web").ns("a").on("n1").ownedBy("ReplicaSet", "rs").phase("Running")
        .container(PodFixtures.running("c")).build();

    RequestResult result = remover.softEvict(Decision.of(pod, "LowNodeLoad", "p", "r", "too hot", Instant.now()));

    assertThat(result.outcome()).isEqualTo(RequestResult.Outcome.ERROR);
    assertThat(result.code()).isEqualTo(503);
    assertThat(requests).containsExactly("PATCH /api/v1/namespaces/a/pods/web");
  }
}
