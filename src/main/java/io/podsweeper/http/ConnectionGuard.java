package io.podsweeper.http;

import io.prometheus.client.Counter;
import io.prometheus.client.Gauge;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.SocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds what the connections to one listener can hold, so that whoever reaches the port cannot use up the
 * process's file descriptors, which the informers, the policy reload and the removals need as well, nor every slot
 * of the listener. Vert.x has neither a connection cap nor a request-header timeout, so:
 * <ul>
 *   <li>past {@link Limits#maxConnections} open connections, a new one is closed at once and counted;
 *   <li>past {@link Limits#maxPerClient} open connections from one client address, the same: one client cannot
 *       hold every slot;
 *   <li>a connection with no byte in either direction for {@link Limits#idleTimeout} is closed (Vert.x's idle
 *       timeout: a silent or half-open client);
 *   <li>a connection is closed {@link Limits#maxAge} after it opened, whatever it does, so that a client trickling
 *       a request a byte at a time cannot keep it; a request in flight then gets {@link #GRACE} to finish.
 * </ul>
 * Probes and Prometheus open a connection per probe or keep one alive between scrapes, and simply reconnect.
 */
public final class ConnectionGuard implements Handler<HttpConnection> {
  /** Long enough for a scrape of /metrics, short enough that an aged connection goes quickly. */
  static final Duration GRACE = Duration.ofSeconds(5);

  public record Limits(int maxConnections, int maxPerClient, Duration idleTimeout, Duration maxAge) {
    /** The HTTP port's: Prometheus (one connection per scraper), operators, scripts. */
    public static final Limits DEFAULT = new Limits(256, 16, Duration.ofSeconds(30), Duration.ofSeconds(60));
    /**
     * The probe port's: the kubelet opens a connection per probe, at most three at once (startup, liveness,
     * readiness), all from the node's address, and each answered at once; 5 s of silence is longer than any probe's
     * timeout.
     */
    public static final Limits PROBES = new Limits(32, 8, Duration.ofSeconds(5), Duration.ofSeconds(10));
  }

  private final Vertx vertx;
  private final Limits limits;
  private final Gauge.Child openGauge;
  private final Counter.Child rejectedFull;
  private final Counter.Child rejectedClient;
  private final AtomicInteger open = new AtomicInteger();
  /** Open connections per client address; an address leaves with its last connection. */
  private final Map<String, Integer> perClient = new ConcurrentHashMap<>();

  /** @param listener the label of this listener's series ({@code http}, {@code probes}) */
  ConnectionGuard(Vertx vertx, Limits limits, String listener, Gauge openGauge, Counter rejected) {
    this.vertx = vertx;
    this.limits = limits;
    this.openGauge = openGauge.labels(listener);
    this.rejectedFull = rejected.labels(listener, "full");
    this.rejectedClient = rejected.labels(listener, "client");
  }

  /**
   * The server's options: the idle timeout, and HTTP/1 only. Probes and Prometheus speak HTTP/1.1; without h2c
   * detection, which waits for a client's first bytes, a connection reaches {@link #handle} as soon as it opens.
   */
  HttpServerOptions serverOptions() {
    return new HttpServerOptions()
        .setHttp2ClearTextEnabled(false)
        .setIdleTimeout((int) limits.idleTimeout().toMillis())
        .setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
  }

  @Override
  public void handle(HttpConnection connection) {
    SocketAddress remote = connection.remoteAddress();
    String client = remote == null || remote.hostAddress() == null ? "" : remote.hostAddress();
    if (perClient.merge(client, 1, Integer::sum) > limits.maxPerClient()) {
      leave(client);
      rejectedClient.inc();
      connection.close();
      return;
    }
    if (open.incrementAndGet() > limits.maxConnections()) {
      open.decrementAndGet();
      leave(client);
      rejectedFull.inc();
      connection.close();
      return;
    }
    openGauge.set(open.get());
    long aged = vertx.setTimer(limits.maxAge().toMillis(), id -> connection.shutdown(GRACE));
    connection.closeHandler(closed -> {
      vertx.cancelTimer(aged);
      leave(client);
      openGauge.set(open.decrementAndGet());
    });
  }

  private void leave(String client) {
    perClient.computeIfPresent(client, (address, n) -> n == 1 ? null : n - 1);
  }
}
