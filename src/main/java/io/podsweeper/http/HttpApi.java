package io.podsweeper.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.podsweeper.engine.RecentDecisions;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.strategy.Forecast;
import io.prometheus.client.exporter.common.TextFormat;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.io.IOException;
import java.io.StringWriter;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The service's HTTP endpoints on Vert.x: {@code /metrics} (Prometheus text or OpenMetrics), {@code /healthz} (fails
 * with the reason when the process can no longer do its job, e.g. it stopped campaigning for the lease, so that it is
 * restarted), {@code /readyz} (ready once the informers have synced and while they watch), {@code GET /api/v1/decisions}
 * and {@code GET /api/v1/forecast} (with the admin token, or public by choice: they name pods, UIDs, owners and nodes), and with an admin token
 * {@code POST /api/v1/pause} and {@code /resume} (503 with the reason when not done everywhere).
 *
 * <p>Two listeners, each with its own {@link ConnectionGuard}: the HTTP port serves all of it to data clients
 * (Prometheus, operators); the probe port serves {@code /healthz} and {@code /readyz} alone, to the kubelet, so that
 * clients holding every slot of the HTTP port cannot make the liveness probe fail and the pod restart
 * (docs/reliability.md).
 */
public final class HttpApi implements AutoCloseable {
  static {
    // Before Vert.x loads Netty: Netty's allocator registers JFR events for its chunks and buffers, and registering
    // starts JFR's machinery at the first allocation, 0.05 of the ~1.4 CPU-seconds of a start (docs/benchmarks.md,
    // eighth pass), for events nothing here records. An operator's -Dio.netty.jfr.enabled=true still turns them on.
    if (System.getProperty("io.netty.jfr.enabled") == null) {
      System.setProperty("io.netty.jfr.enabled", "false");
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Vert.x's check for a blocked event loop every 10 s instead of every second: it still reports a loop held longer
   * than its 2-s limit, at most 10 s late, and an idle service wakes 50 times a minute less for it (docs/benchmarks.md,
   * sixth pass: the idle service's CPU is mostly such wake-ups).
   */
  static final VertxOptions VERTX_OPTIONS = new VertxOptions().setBlockedThreadCheckInterval(10_000);

  private final Vertx vertx = Vertx.vertx(VERTX_OPTIONS);
  private final Metrics metrics;
  private final BooleanSupplier ready;
  private final Supplier<Optional<String>> unhealthy;
  private final RecentDecisions recent;
  private final Supplier<Optional<ReplicaRole>> role;
  private final ConnectionGuard.Limits limits;
  private final Function<Duration, Forecast> forecast;

  /**
   * The admin API: off (404) unless a bearer token is configured. {@code pause} and {@code resume} return empty when
   * done, else the one-line reason they were not (answered 503: the caller must not believe it worked). The same
   * token reads the decisions, unless {@code publicDecisions} opens them to whoever reaches the port.
   */
  public record Admin(Optional<String> token, boolean publicDecisions, Supplier<Optional<String>> pause,
      Supplier<Optional<String>> resume) {}

  /**
   * This replica's part under leader election: only the leader decides, so a follower's own decisions are empty.
   * {@code leader} is the Lease's holder, empty when nobody holds it or it is unknown; {@code leaderAddress}, where the
   * leader's HTTP port is (host:port, as the leader wrote it on the Lease), to which a follower forwards a request for
   * the decisions; {@code askTheLeader}, on a follower, how to reach the leader's decisions by hand, for when it cannot.
   */
  public record ReplicaRole(String thisReplica, boolean leading, Optional<String> leader, Optional<String> leaderAddress,
      Optional<String> askTheLeader) {}

  /** On a request a follower forwards to the leader: the follower's identity. A forwarded request is never forwarded again. */
  static final String FORWARDED_BY = "X-Podsweeper-Forwarded-By";
  /** How long a follower waits for the leader's decisions before it answers with its own and says why. */
  static final Duration FORWARD_TIMEOUT = Duration.ofSeconds(3);

  private final Admin admin;
  /** Where a follower forwards a request for the decisions; made at the first one. */
  private WebClient leaderClient;

  /**
   * @param unhealthy empty while healthy, else why not
   * @param role empty without leader election (this replica always decides); may ask the API server
   * @param forecast the forecast over the service's cache under the policy in force, for a horizon
   */
  public HttpApi(Metrics metrics, BooleanSupplier ready, Supplier<Optional<String>> unhealthy, RecentDecisions recent,
      Supplier<Optional<ReplicaRole>> role, Function<Duration, Forecast> forecast, Admin admin, ConnectionGuard.Limits limits) {
    this.metrics = metrics;
    this.ready = ready;
    this.unhealthy = unhealthy;
    this.recent = recent;
    this.role = role;
    this.forecast = forecast;
    this.admin = admin;
    this.limits = limits;
  }

  /** The ports listened on. */
  public record Ports(int http, int probes) {}

  /** A listener that could not start, e.g. its port was in use: which one, and where. */
  public static final class ListenFailure extends Exception {
    private final boolean probes;

    ListenFailure(boolean probes, String address, Throwable cause) {
      super(address + ": " + cause.getMessage(), cause);
      this.probes = probes;
    }

    /** The probe port's listener, else the HTTP port's. */
    public boolean probes() {
      return probes;
    }
  }

  /** Listens on {@code port} and on {@code probePort} (0 = any free port) and returns the ports. */
  public Ports start(String host, int port, int probePort) throws Exception {
    Router router = Router.router(vertx);
    router.get("/healthz").handler(this::healthz);
    router.get("/readyz").handler(this::readyz);
    router.get("/metrics").blockingHandler(this::metrics, false);
    router.get("/api/v1/decisions").handler(this::requireReader).blockingHandler(this::decisions, false);
    // Blocking: it evaluates every cached pod.
    router.get("/api/v1/forecast").handler(this::requireReader).blockingHandler(this::forecast, false);
    router.post("/api/v1/pause").handler(this::requireAdmin).handler(ctx -> adminAction(ctx, admin.pause(), "paused"));
    router.post("/api/v1/resume").handler(this::requireAdmin).handler(ctx -> adminAction(ctx, admin.resume(), "resumed"));
    Router probes = Router.router(vertx);
    probes.get("/healthz").handler(this::healthz);
    probes.get("/readyz").handler(this::readyz);
    return new Ports(listen(false, router, limits, host, port), listen(true, probes, ConnectionGuard.Limits.PROBES, host, probePort));
  }

  private int listen(boolean probes, Router router, ConnectionGuard.Limits bounds, String host, int port) throws ListenFailure {
    ConnectionGuard guard = new ConnectionGuard(vertx, bounds, probes ? "probes" : "http", metrics.httpConnectionsOpen,
        metrics.httpConnectionsRejected);
    try {
      return vertx.createHttpServer(guard.serverOptions()).connectionHandler(guard).requestHandler(router).listen(port, host)
          .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS).actualPort();
    } catch (ExecutionException e) {
      throw new ListenFailure(probes, host + ":" + port, e.getCause() == null ? e : e.getCause());
    } catch (TimeoutException e) {
      throw new ListenFailure(probes, host + ":" + port, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ListenFailure(probes, host + ":" + port, e);
    }
  }

  private void healthz(RoutingContext ctx) {
    Optional<String> problem = unhealthy.get();
    ctx.response().setStatusCode(problem.isEmpty() ? 200 : 503).putHeader("content-type", "text/plain").end(problem.orElse("ok"));
  }

  private void readyz(RoutingContext ctx) {
    boolean ok = ready.getAsBoolean();
    ctx.response().setStatusCode(ok ? 200 : 503).putHeader("content-type", "text/plain")
        .end(ok ? "ok" : "informers not synced or not watching");
  }

  private void metrics(RoutingContext ctx) {
    String contentType = TextFormat.chooseContentType(ctx.request().getHeader("Accept"));
    Set<String> names = new HashSet<>(ctx.queryParam("name[]"));
    StringWriter out = new StringWriter();
    try {
      TextFormat.writeFormat(contentType, out,
          names.isEmpty() ? metrics.registry().metricFamilySamples() : metrics.registry().filteredMetricFamilySamples(names));
    } catch (IOException e) {
      ctx.fail(e);
      return;
    }
    ctx.response().putHeader("content-type", contentType).end(out.toString());
  }

  /** Admin routes: on only with a token, and only for its bearer. */
  private void requireAdmin(RoutingContext ctx) {
    if (admin.token().isEmpty()) {
      ctx.response().setStatusCode(404).end("admin API is off: no --admin-token-file");
    } else if (bearsTheToken(ctx)) {
      ctx.next();
    } else {
      ctx.response().setStatusCode(401).end("unauthorized");
    }
  }

  /** Routes that name pods, UIDs, owners and nodes: the admin token's bearer, or anyone if the operator opened them. */
  private void requireReader(RoutingContext ctx) {
    if (admin.publicDecisions() || admin.token().isPresent() && bearsTheToken(ctx)) {
      ctx.next();
    } else if (admin.token().isPresent()) {
      ctx.response().setStatusCode(401).end("unauthorized");
    } else {
      ctx.response().setStatusCode(403).putHeader("content-type", "text/plain")
          .end("decisions name pods, UIDs, owners and nodes: set --admin-token-file and send its bearer token, or --public-decisions");
    }
  }

  private boolean bearsTheToken(RoutingContext ctx) {
    String header = ctx.request().getHeader("Authorization");
    byte[] given = (header == null ? "" : header).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    byte[] expected = ("Bearer " + admin.token().orElseThrow()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    return java.security.MessageDigest.isEqual(given, expected);
  }

  private void adminAction(RoutingContext ctx, Supplier<Optional<String>> action, String done) {
    ctx.vertx().executeBlocking(action::get).onComplete(r -> {
      ctx.response().putHeader("content-type", "text/plain");
      if (r.failed()) {
        ctx.response().setStatusCode(500).end("failed: " + r.cause().getMessage());
      } else if (r.result().isPresent()) {
        ctx.response().setStatusCode(503).end(r.result().get());
      } else {
        ctx.response().end(done);
      }
    });
  }

  /**
   * Recent decisions, newest first; {@code ?namespace=}, {@code ?rule=}, {@code ?result=} (each may repeat) and
   * {@code ?since=} (an RFC 3339 instant) narrow them down. Under leader election the reply also says which replica
   * leads and whether this one does. A follower decides nothing: it forwards the request, its query and its
   * Authorization header as they came, to the leader at the address the leader wrote on the Lease, and answers with
   * the leader's reply (plus {@code via}: this replica), so a port-forward to the Service answers whichever replica it
   * lands on. When the leader cannot be reached within {@link #FORWARD_TIMEOUT}, the follower answers with its own
   * (empty) list, {@code leaderUnreachable} saying why and {@code askTheLeader} saying how to reach it by hand.
   */
  private void decisions(RoutingContext ctx) {
    Predicate<RecentDecisions.Entry> filter;
    try {
      filter = decisionFilter(ctx);
    } catch (java.time.format.DateTimeParseException e) {
      ctx.response().setStatusCode(400).putHeader("content-type", "text/plain")
          .end("since: not an RFC 3339 instant (e.g. 2026-11-24T10:00:00Z): " + e.getParsedString());
      return;
    }
    Optional<ReplicaRole> replica = role.get();
    Optional<String> leaderAt = replica.filter(r -> !r.leading()).flatMap(ReplicaRole::leaderAddress)
        .filter(a -> ctx.request().getHeader(FORWARDED_BY) == null);
    if (leaderAt.isPresent()) {
      forward(ctx, replica.get(), leaderAt.get(), filter);
      return;
    }
    ctx.response().putHeader("content-type", "application/json").end(ownDecisions(replica, filter).toString());
  }

  /** The leader's reply to the same request, with {@code via}; its own list and why, when the leader does not answer. */
  private void forward(RoutingContext ctx, ReplicaRole replica, String leaderAt,
      Predicate<RecentDecisions.Entry> filter) {
    HttpRequest<Buffer> request = leaderClient()
        .getAbs("http://" + leaderAt + ctx.request().uri()).timeout(FORWARD_TIMEOUT.toMillis()).putHeader(FORWARDED_BY, replica.thisReplica());
    Optional.ofNullable(ctx.request().getHeader("Authorization")).ifPresent(a -> request.putHeader("Authorization", a));
    request.send().onComplete(answer -> {
      ctx.response().putHeader("content-type", "application/json");
      if (answer.succeeded() && answer.result().statusCode() == 200) {
        try {
          ObjectNode leaders = (ObjectNode) JSON.readTree(answer.result().bodyAsString());
          ctx.response().end(leaders.put("via", replica.thisReplica()).toString());
          return;
        } catch (IOException | ClassCastException e) {
          ctx.response().end(ownDecisions(Optional.of(replica), filter).put("leaderUnreachable", "the leader at " + leaderAt
              + " answered what is not a decisions list: " + e.getMessage()).toString());
          return;
        }
      }
      if (answer.succeeded()) {
        // Its own answer (401: the token; 400: the query): the leader's word, as it gave it.
        ctx.response().setStatusCode(answer.result().statusCode())
            .putHeader("content-type", Optional.ofNullable(answer.result().getHeader("content-type")).orElse("text/plain"))
            .end(answer.result().bodyAsString());
        return;
      }
      ctx.response().end(ownDecisions(Optional.of(replica), filter).put("leaderUnreachable", "the leader at " + leaderAt + " did not answer: "
          + answer.cause().getMessage()).toString());
    });
  }

  private synchronized WebClient leaderClient() {
    if (leaderClient == null) {
      leaderClient = WebClient.create(vertx, new WebClientOptions()
          .setUserAgent("podsweeper").setConnectTimeout((int) FORWARD_TIMEOUT.toMillis()));
    }
    return leaderClient;
  }

  /** This replica's own recent decisions under {@code filter}, and its part under leader election. */
  private ObjectNode ownDecisions(Optional<ReplicaRole> replica, Predicate<RecentDecisions.Entry> filter) {
    List<RecentDecisions.Entry> entries = recent.list(filter);
    ObjectNode root = JSON.createObjectNode();
    replica.ifPresent(r -> {
      root.put("leader", r.leader().orElse(null));
      root.put("thisReplica", r.thisReplica());
      root.put("leading", r.leading());
      r.askTheLeader().ifPresent(ask -> root.put("askTheLeader", ask));
    });
    ArrayNode array = root.putArray("decisions");
    for (RecentDecisions.Entry e : entries) {
      ObjectNode o = e.decision().writeTo(array.addObject());
      o.put("time", e.time().toString());
      o.put("result", e.result());
      o.put("message", e.message());
      o.put("dryRun", e.dryRun());
    }
    return root;
  }

  /** {@code ?within=} (default 1h, at most 30d): what will be removed by then, and when; only from a current cache. */
  private void forecast(RoutingContext ctx) {
    ctx.response().putHeader("content-type", "text/plain");
    if (!ready.getAsBoolean()) {
      ctx.response().setStatusCode(503).end("informers not synced or not watching: a forecast now could miss or invent removals");
      return;
    }
    Duration within;
    try {
      within = Forecast.within("within", Optional.ofNullable(ctx.request().getParam("within")).orElse("1h"));
    } catch (PolicyException e) {
      ctx.response().setStatusCode(400).end(e.getMessage());
      return;
    }
    ctx.response().putHeader("content-type", "application/json").end(forecast.apply(within).writeTo(JSON.createObjectNode()).toString());
  }

  private static Predicate<RecentDecisions.Entry> decisionFilter(RoutingContext ctx) {
    List<String> namespaces = ctx.queryParam("namespace");
    List<String> rules = ctx.queryParam("rule");
    List<String> results = ctx.queryParam("result");
    List<String> since = ctx.queryParam("since");
    java.time.Instant from = since.isEmpty() ? java.time.Instant.MIN : java.time.Instant.parse(since.get(0));
    return e -> (namespaces.isEmpty() || namespaces.contains(e.decision().namespace()))
        && (rules.isEmpty() || rules.contains(e.decision().rule()))
        && (results.isEmpty() || results.contains(e.result()))
        && !e.time().isBefore(from);
  }

  @Override
  public void close() {
    try {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      Thread.currentThread().interrupt();
    }
  }
}
