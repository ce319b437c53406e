package io.podsweeper.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.podsweeper.engine.RecentDecisions;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The HTTP port against whoever reaches it: connections past the cap or past one client's share, idle and trickling
 * ones (all on loopback, bounded in count and time), the probe port answering while they hold the HTTP port, and who
 * may read the decisions.
 */
class HttpApiTest {
  private static final String TOKEN = "0123456789abcdef-token";
  private static final HttpApi.Admin PRIVATE = new HttpApi.Admin(Optional.empty(), false, Optional::empty, Optional::empty);
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Metrics metrics = new Metrics();

  @Test
  void aBlockedEventLoopIsLookedForEveryTenSecondsAndStillReportedPastTwo() {
    // Vert.x's default looks every second: 60 wake-ups a minute of an otherwise idle service.
    assertThat(TimeUnit.MILLISECONDS.convert(HttpApi.VERTX_OPTIONS.getBlockedThreadCheckInterval(),
        HttpApi.VERTX_OPTIONS.getBlockedThreadCheckIntervalUnit())).isEqualTo(10_000);
    assertThat(TimeUnit.MILLISECONDS.convert(HttpApi.VERTX_OPTIONS.getMaxEventLoopExecuteTime(),
        HttpApi.VERTX_OPTIONS.getMaxEventLoopExecuteTimeUnit())).isEqualTo(2_000);
  }

  @Test
  void connectionsPastTheCapAreRefusedAndIdleOnesClosedSoTheProbesGetThrough() throws Exception {
    ConnectionGuard.Limits limits = new ConnectionGuard.Limits(8, 3, Duration.ofSeconds(2), Duration.ofSeconds(60));
    try (HttpApi api = api(PRIVATE, limits); Held idle = new Held()) {
      int port = port(api);
      for (int i = 0; i < 12; i++) {
        idle.open(CLIENTS[i % CLIENTS.length], port);
      }
      await().atMost(Duration.ofSeconds(2)).until(() -> rejected("http", "full") == 4);
      assertThat(open("http")).isEqualTo(8);
      // Nothing said on any of them: the server closes them all after the idle timeout, and the port answers again.
      for (Socket socket : idle.sockets) {
        assertThat(closedByServerWithin(socket, Duration.ofSeconds(4))).isTrue();
      }
      await().atMost(Duration.ofSeconds(2)).until(() -> open("http") == 0);
      assertThat(get(port, "/healthz", null).statusCode()).isEqualTo(200);
    }
  }

  /**
   * Slow clients from four addresses hold every slot of the HTTP port, each with a request whose headers never end;
   * the probe port, a listener of its own, answers /healthz and /readyz at once all the while.
   */
  @Test
  void theProbesAnswerWithinASecondWhileSlowClientsHoldEverySlotOfTheHttpPort() throws Exception {
    ConnectionGuard.Limits limits = new ConnectionGuard.Limits(8, 2, Duration.ofSeconds(30), Duration.ofSeconds(60));
    try (HttpApi api = api(PRIVATE, limits); Held slow = new Held()) {
      HttpApi.Ports ports = api.start("127.0.0.1", 0, 0);
      for (int i = 0; i < 8; i++) {
        slow.open(CLIENTS[i % 4], ports.http()).getOutputStream()
            .write("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
      }
      await().atMost(Duration.ofSeconds(2)).until(() -> open("http") == 8);
      // Full: one more client, from an address of its own, is turned away.
      assertThat(closedByServerWithin(slow.open(CLIENTS[4], ports.http()), Duration.ofSeconds(2))).isTrue();
      assertThat(rejected("http", "full")).isEqualTo(1);
      for (int probe = 0; probe < 10; probe++) {
        for (String path : List.of("/healthz", "/readyz")) {
          long start = System.nanoTime();
          HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ports.probes() + path))
              .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.ofString());
          assertThat(answer.statusCode()).as(path).isEqualTo(200);
          assertThat(Duration.ofNanos(System.nanoTime() - start)).as(path).isLessThan(Duration.ofSeconds(1));
        }
      }
      assertThat(open("http")).isEqualTo(8);
      // The probe port serves the probes alone: the data stays on the HTTP port.
      assertThat(get(ports.probes(), "/metrics", null).statusCode()).isEqualTo(404);
    }
  }

  /** One client address gets its share of the slots and no more: the next client still gets in. */
  @Test
  void oneClientAddressCannotTakeEverySlot() throws Exception {
    ConnectionGuard.Limits limits = new ConnectionGuard.Limits(8, 3, Duration.ofSeconds(30), Duration.ofSeconds(60));
    try (HttpApi api = api(PRIVATE, limits); Held greedy = new Held()) {
      int port = port(api);
      for (int i = 0; i < 8; i++) {
        greedy.open(CLIENTS[0], port);
      }
      await().atMost(Duration.ofSeconds(2)).until(() -> rejected("http", "client") == 5);
      assertThat(open("http")).isEqualTo(3);
      assertThat(rejected("http", "full")).isZero();
      try (Socket other = from(CLIENTS[1], port)) {
        other.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        other.setSoTimeout(2000);
        assertThat(new String(other.getInputStream().readAllBytes(), StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 200 OK");
      }
    }
  }

  @Test
  void headersTrickledLineByLineDoNotKeepTheConnectionPastTheIdleTimeout() throws Exception {
    // Vert.x 5 has no request-header timeout, but its idle timeout counts whole HTTP messages, not bytes: a request
    // whose headers never end is idle.
    ConnectionGuard.Limits limits = new ConnectionGuard.Limits(8, 8, Duration.ofSeconds(1), Duration.ofSeconds(60));
    try (HttpApi api = api(PRIVATE, limits); Socket slow = new Socket("127.0.0.1", port(api))) {
      Duration held = heldWhileTrickling(slow, "GET /healthz HTTP/1.1\r\nHost: x\r\n", "X-Slow: y\r\n");
      assertThat(held).isLessThan(limits.idleTimeout().plusSeconds(2));
    }
  }

  @Test
  void aBodyTrickledByteByByteCannotHoldItsConnectionPastTheMaximumAge() throws Exception {
    ConnectionGuard.Limits limits = new ConnectionGuard.Limits(8, 8, Duration.ofSeconds(1), Duration.ofSeconds(3));
    try (HttpApi api = api(PRIVATE, limits); Socket slow = new Socket("127.0.0.1", port(api))) {
      Duration held = heldWhileTrickling(slow, "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", "abcdefgh");
      // Past the idle timeout (each chunk of the body is a message), closed by the maximum age.
      assertThat(held).isBetween(limits.idleTimeout().plusMillis(1500), limits.maxAge().plus(ConnectionGuard.GRACE).plusSeconds(1));
    }
  }

  @Test
  void decisionsNeedTheAdminTokenUnlessMadePublic() throws Exception {
    try (HttpApi api = api(PRIVATE, ConnectionGuard.Limits.DEFAULT)) {
      HttpResponse<String> refused = get(port(api), "/api/v1/decisions", null);
      assertThat(refused.statusCode()).isEqualTo(403);
      assertThat(refused.body()).contains("--admin-token-file").contains("--public-decisions").doesNotContain("\n");
    }
    try (HttpApi api = api(new HttpApi.Admin(Optional.of(TOKEN), false, Optional::empty, Optional::empty), ConnectionGuard.Limits.DEFAULT)) {
      int port = port(api);
      assertThat(get(port, "/api/v1/decisions", null).statusCode()).isEqualTo(401);
      assertThat(get(port, "/api/v1/decisions", "not-the-token").statusCode()).isEqualTo(401);
      HttpResponse<String> allowed = get(port, "/api/v1/decisions", TOKEN);
      assertThat(allowed.statusCode()).isEqualTo(200);
      assertThat(allowed.body()).isEqualTo("{\"decisions\":[]}");
      assertThat(get(port, "/metrics", null).statusCode()).isEqualTo(200);
    }
    try (HttpApi api = api(new HttpApi.Admin(Optional.empty(), true, Optional::empty, Optional::empty), ConnectionGuard.Limits.DEFAULT)) {
      assertThat(get(port(api), "/api/v1/decisions", null).statusCode()).isEqualTo(200);
    }
  }

  /**
   * A follower forwards a request for the decisions to the leader, at the address the Lease gives, with its query and
   * Authorization header, and answers with the leader's list ({@code via}: itself); the leader's own refusal comes
   * back as it was; a request that was forwarded once is never forwarded again; and with the leader gone the follower
   * answers with its own (empty) list and says why.
   */
  @Test
  void aFollowerAnswersWithTheLeadersDecisions() throws Exception {
    HttpApi.Admin admin = new HttpApi.Admin(Optional.of(TOKEN), false, Optional::empty, Optional::empty);
    RecentDecisions leaders = new RecentDecisions(10);
    for (String name : List.of("job-0", "job-1")) {
      Decision d = new Decision("ns", name, "uid-" + name, "", "", "PodLifeTime", "p", "failed", Action.DELETE, "failed long ago",
          Instant.parse("2026-11-28T10:00:00Z"), "");
      leaders.add(new RecentDecisions.Entry(Instant.parse("2026-11-28T10:00:01Z"), d, "success", "", false));
    }
    int leaderPort;
    int followerPort;
    try (HttpApi leader = new HttpApi(metrics, () -> true, Optional::empty, leaders,
            () -> Optional.of(new HttpApi.ReplicaRole("replica-a", true, Optional.of("replica-a"), Optional.empty(), Optional.empty())),
            within -> { throw new UnsupportedOperationException(); }, admin, ConnectionGuard.Limits.DEFAULT)) {
      leaderPort = port(leader);
      int[] pointsAt = new int[1]; // where the Lease says the leader is
      try (HttpApi api = new HttpApi(new Metrics(), () -> true, Optional::empty, new RecentDecisions(10),
          () -> Optional.of(new HttpApi.ReplicaRole("replica-b", false, Optional.of("replica-a"), Optional.of("127.0.0.1:" + pointsAt[0]),
              Optional.of("port-forward to replica-a"))),
          within -> { throw new UnsupportedOperationException(); }, admin, ConnectionGuard.Limits.DEFAULT)) {
        pointsAt[0] = leaderPort;
        followerPort = port(api);

        HttpResponse<String> answer = get(followerPort, "/api/v1/decisions?namespace=ns&since=2026-11-28T09:00:00Z", TOKEN);
        assertThat(answer.statusCode()).isEqualTo(200);
        JsonNode body = JSON.readTree(answer.body());
        assertThat(body.get("thisReplica").asText()).isEqualTo("replica-a");
        assertThat(body.get("leading").asBoolean()).isTrue();
        assertThat(body.get("via").asText()).isEqualTo("replica-b");
        assertThat(body.get("decisions")).extracting(d -> d.get("name").asText()).containsExactly("job-1", "job-0");
        assertThat(get(followerPort, "/api/v1/decisions?namespace=other", TOKEN).body()).contains("\"decisions\":[]", "\"via\":\"replica-b\"");
        // The leader's word on the token, as it gave it (the follower checked it too, first).
        assertThat(get(followerPort, "/api/v1/decisions", "not-the-token").statusCode()).isEqualTo(401);

        // Pointed at itself (an address that is now another replica's), the forwarded request is not forwarded again:
        // one hop, and the answer is its own.
        pointsAt[0] = followerPort;
        JsonNode own = JSON.readTree(get(followerPort, "/api/v1/decisions", TOKEN).body());
        assertThat(own.get("thisReplica").asText()).isEqualTo("replica-b");
        assertThat(own.get("decisions")).isEmpty();
        pointsAt[0] = leaderPort;
      }
    }
    // The leader gone: its port answers no more.
    int[] gone = {leaderPort};
    try (HttpApi api = new HttpApi(new Metrics(), () -> true, Optional::empty, new RecentDecisions(10),
        () -> Optional.of(new HttpApi.ReplicaRole("replica-b", false, Optional.of("replica-a"), Optional.of("127.0.0.1:" + gone[0]),
            Optional.of("port-forward to replica-a"))),
        within -> { throw new UnsupportedOperationException(); }, admin, ConnectionGuard.Limits.DEFAULT)) {
      JsonNode own = JSON.readTree(get(port(api), "/api/v1/decisions", TOKEN).body());
      assertThat(own.get("thisReplica").asText()).isEqualTo("replica-b");
      assertThat(own.get("decisions")).isEmpty();
      assertThat(own.get("leaderUnreachable").asText()).startsWith("the leader at 127.0.0.1:" + leaderPort + " did not answer");
      assertThat(own.get("askTheLeader").asText()).isEqualTo("port-forward to replica-a");
    }
  }

  private HttpApi api(HttpApi.Admin admin, ConnectionGuard.Limits limits) {
    return new HttpApi(metrics, () -> true, Optional::empty, new RecentDecisions(10), Optional::empty,
        within -> { throw new UnsupportedOperationException(); }, admin, limits);
  }

  private static int port(HttpApi api) throws Exception {
    return api.start("127.0.0.1", 0, 0).http();
  }

  /**
   * Client addresses of their own: the whole of 127.0.0.0/8 is the loopback on Linux, so a socket bound to
   * 127.0.0.2 reaches 127.0.0.1 from another address.
   */
  private static final String[] CLIENTS = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"};

  private static Socket from(String address, int port) throws IOException {
    return new Socket(InetAddress.getLoopbackAddress(), port, InetAddress.getByName(address), 0);
  }

  /** Connections a test holds open, closed with it. */
  private static final class Held implements AutoCloseable {
    private final List<Socket> sockets = new ArrayList<>();

    Socket open(String address, int port) throws IOException {
      Socket socket = from(address, port);
      sockets.add(socket);
      return socket;
    }

    @Override
    public void close() throws IOException {
      for (Socket socket : sockets) {
        socket.close();
      }
    }
  }

  private double open(String listener) {
    return metrics.httpConnectionsOpen.labels(listener).get();
  }

  private double rejected(String listener, String reason) {
    return metrics.httpConnectionsRejected.labels(listener, reason).get();
  }

  private static HttpResponse<String> get(int port, String path, String token) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(5));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /**
   * Sends {@code opening}, then {@code each} every 300 ms, more often than the idle timeout, until the server closes
   * the connection (at most 12 s); how long it stayed open.
   */
  private static Duration heldWhileTrickling(Socket socket, String opening, String each) throws IOException {
    OutputStream out = socket.getOutputStream();
    long start = System.nanoTime();
    out.write(opening.getBytes(StandardCharsets.US_ASCII));
    for (int i = 0; i < 40; i++) {
      try {
        out.write(each.getBytes(StandardCharsets.US_ASCII));
      } catch (IOException reset) {
        return Duration.ofNanos(System.nanoTime() - start);
      }
      if (closedByServerWithin(socket, Duration.ofMillis(300))) {
        return Duration.ofNanos(System.nanoTime() - start);
      }
    }
    throw new AssertionError("still open after 12 s of trickling");
  }

  /**
   * True once the server has closed {@code socket} (end of stream or reset), false if it is still open after
   * {@code within}; a response on the way is read past.
   */
  private static boolean closedByServerWithin(Socket socket, Duration within) throws IOException {
    socket.setSoTimeout((int) within.toMillis());
    try {
      return socket.getInputStream().read(new byte[4096]) == -1;
    } catch (SocketTimeoutException stillOpen) {
      return false;
    } catch (IOException reset) {
      return true;
    }
  }
}
