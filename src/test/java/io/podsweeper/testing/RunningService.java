package io.podsweeper.testing;

import io.fabric8.kubernetes.client.Config;
import io.podsweeper.engine.Service;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;

/** The service started in-process against the test API server, as {@code podsweeper run} starts it. */
public final class RunningService implements AutoCloseable {
  private final Service service;
  private final HttpClient http = HttpClient.newHttpClient();

  private RunningService(Service service) {
    this.service = service;
  }

  public static RunningService start(TestApiServer server, String policyYaml) throws Exception {
    return start(server.config(), policyYaml);
  }

  /** Started with a client configuration of the test's choosing, e.g. authenticated as a ServiceAccount. */
  public static RunningService start(Config config, String policyYaml) throws Exception {
    Policy policy = PolicyLoader.parse(policyYaml, "test-policy");
    Service service = new Service(config, policy, Clock.systemUTC());
    service.start(new Service.Options("127.0.0.1", 0, 60));
    return new RunningService(service);
  }

  public String get(String path) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.httpPort() + path)).build(),
          HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  public int status(String path) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.httpPort() + path)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The value of one sample in /metrics, e.g. {@code podsweeper_removals_total{result="success",...}}; 0 if absent. */
  public double metric(String name, String... labelPairs) {
    String body = get("/metrics");
    for (String line : body.split("\n")) {
      if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) {
        continue;
      }
      boolean all = true;
      for (String pair : labelPairs) {
        all &= line.contains(pair);
      }
      if (all) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  @Override
  public void close() {
    service.close();
  }
}
