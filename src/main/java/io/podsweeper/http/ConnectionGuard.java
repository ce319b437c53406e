package io.podsweeper.http;

import io.prometheus.client.Counter;
import io.prometheus.client.Gauge;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerOptions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds what the connections to the HTTP port can hold, so that whoever reaches the port cannot use up the
 * process's file descriptors, which the informers, the policy reload and the removals need as well. Vert.x has
 * neither a connection cap nor a request-header timeout, so:
 * <ul>
 *   <li>past {@link Limits#maxConnections} open connections, a new one is closed at once and counted;
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

  public record Limits(int maxConnections, Duration idleTimeout, Duration maxAge) {
    public static final Limits DEFAULT = new Limits(256, Duration.ofSeconds(30), Duration.ofSeconds(60));
  }

  private final Vertx vertx;
  private final Limits limits;
  private final Gauge openGauge;
  private final Counter rejected;
  private final AtomicInteger open = new AtomicInteger();

  ConnectionGuard(Vertx vertx, Limits limits, Gauge openGauge, Counter rejected) {
    this.vertx = vertx;
    this.limits = limits;
    this.openGauge = openGauge;
    this.rejected = rejected;
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
    if (open.incrementAndGet() > limits.maxConnections()) {
      open.decrementAndGet();
      rejected.inc();
      connection.close();
      return;
    }
    openGauge.set(open.get());
    long aged = vertx.setTimer(limits.maxAge().toMillis(), id -> connection.shutdown(GRACE));
    connection.closeHandler(closed -> {
      vertx.cancelTimer(aged);
      openGauge.set(open.decrementAndGet());
    });
  }
}
