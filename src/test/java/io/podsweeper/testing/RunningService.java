package io.podsweeper.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.Config;
import io.podsweeper.app.Service;
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
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Service service;
  private final HttpClient http = HttpClient.newHttpClient();

  /** A service the test built and starts itself (e.g. one started in a particular state). */
  public static RunningService of(Service service) {
    return new RunningService(service);
  }

  private RunningService(Service service) {
    this.service = service;
  }

  public static RunningService start(TestApiServer server, String policyYaml) throws Exception {
    return start(server, policyYaml, Service.Options.local(0));
  }

  public static RunningService start(TestApiServer server, String policyYaml, Service.Options options) throws Exception {
    return start(server.config(), policyYaml, options);
  }

  /** Started with a client configuration of the test's choosing, e.g. authenticated as a ServiceAccount. */
  public static RunningService start(Config config, String policyYaml) throws Exception {
    return start(config, policyYaml, Service.Options.local(0));
  }

  public static RunningService start(Config config, String policyYaml, Service.Options options)
      throws Exception {
    Policy policy = PolicyLoader.parse(policyYaml, "test-policy");
    Service service = new Service(config, policy, Clock.systemUTC(), options);
    service.start();
    return new RunningService(service);
  }

  public Service service() {
    return service;
  }

  /** POST with an optional bearer token; returns the status code. */
  public int post(String path, String token) {
    return postForAnswer(path, token).statusCode();
  }

  /** POST with an optional bearer token; the status code and the body. */
  public HttpResponse<String> postForAnswer(String path, String token) {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.httpPort() + path))
        .POST(HttpRequest.BodyPublishers.noBody());
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
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

  /** The latest decision about pod {@code namespace/name} in GET /api/v1/decisions, or null. */
  public JsonNode decision(String namespace, String name) {
    try {
      for (JsonNode d : JSON.readTree(get("/api/v1/decisions")).get("decisions")) {
        if (d.get("namespace").asText().equals(namespace) && d.get("name").asText().equals(name)) {
          return d;
        }
      }
      return null;
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** That decision's result ({@code success}, {@code paused}, …), or "" when there is none. */
  public String result(String namespace, String name) {
    JsonNode d = decision(namespace, name);
    return d == null ? "" : d.get("result").asText();
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
