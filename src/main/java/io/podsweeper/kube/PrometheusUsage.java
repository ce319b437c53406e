package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.podsweeper.cluster.QueriedUsage;
import io.podsweeper.policy.PrometheusQuery;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * LowNodeUtilization's usage from Prometheus on a live cluster: the instant query of the policy, asked of its
 * {@code metricsProviders} server through Prometheus' HTTP API ({@code GET /api/v1/query}) with Vert.x's web client,
 * once per balance pass (strategy/NodePass keeps the answer for the pass). Each sample must carry the node's name in label {@code instance} and a
 * value from 0 to 1, as upstream requires; an answer that breaks that, or no answer, is logged and counts as none, so
 * the strategy decides nothing. The bearer token is read anew before every query (tokens rotate): the policy's
 * Secret (key {@code prometheusAuthToken}) or, without one, the pod's ServiceAccount token. In a pod the server's
 * certificate is checked against the pod's cluster CA, as upstream does; elsewhere against the JVM's trust store.
 * Nothing is started until a policy asks.
 */
final class PrometheusUsage implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PrometheusUsage.class);
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  static final String TOKEN_KEY = "prometheusAuthToken";
  private static final Path SERVICE_ACCOUNT = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

  private final KubernetesClient client;
  private Vertx vertx;
  private WebClient web;

  PrometheusUsage(KubernetesClient client) {
    this.client = client;
  }

  synchronized Optional<QueriedUsage> get(PrometheusQuery query) {
    String url = query.server().url().toString().replaceAll("/+$", "") + "/api/v1/query";
    try {
      var request = web().getAbs(url).addQueryParam("query", query.query()).timeout(TIMEOUT.toMillis());
      token(query.server()).ifPresent(request::bearerTokenAuthentication);
      HttpResponse<io.vertx.core.buffer.Buffer> response =
          request.send().toCompletionStage().toCompletableFuture().get(TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
      if (response.statusCode() != 200) {
        throw new IllegalStateException("HTTP " + response.statusCode() + ": " + abbreviate(response.bodyAsString()));
      }
      return Optional.of(new QueriedUsage(vector(response.bodyAsJsonObject())));
    } catch (ExecutionException e) {
      LOG.warn("Prometheus at {} unreachable for LowNodeUtilization ({}): it decides nothing", url, e.getCause().getMessage());
    } catch (TimeoutException e) {
      LOG.warn("Prometheus at {} did not answer in {}s: LowNodeUtilization decides nothing", url, TIMEOUT.toSeconds());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      LOG.warn("Prometheus at {} answered {} with no usable vector ({}): LowNodeUtilization decides nothing", url, query.query(),
          e.getMessage());
    }
    return Optional.empty();
  }

  /** Node name to usage in percent, from an instant query's answer; refused as upstream refuses it. */
  static Map<String, Double> vector(JsonObject answer) {
    if (!"success".equals(answer.getString("status"))) {
      throw new IllegalStateException(answer.getString("errorType", "error") + ": " + answer.getString("error", "no status success"));
    }
    JsonObject data = answer.getJsonObject("data");
    if (data == null || !"vector".equals(data.getString("resultType"))) {
      throw new IllegalStateException("expected query results to be of type \"vector\", got \""
          + (data == null ? null : data.getString("resultType")) + "\" instead");
    }
    Map<String, Double> percentByNode = new HashMap<>();
    for (Object item : data.getJsonArray("result", new JsonArray())) {
      JsonObject sample = (JsonObject) item;
      String node = sample.getJsonObject("metric", new JsonObject()).getString("instance");
      if (node == null) {
        throw new IllegalStateException("the collected metrics sample is missing 'instance' key");
      }
      double value = Double.parseDouble(sample.getJsonArray("value").getString(1));
      if (!(value >= 0 && value <= 1)) {
        throw new IllegalStateException("the collected metrics sample for \"" + node + "\" has value " + value + " outside of <0; 1> interval");
      }
      percentByNode.put(node, value * 100);
    }
    return percentByNode;
  }

  private Optional<String> token(PrometheusQuery.Server server) {
    if (server.authToken().isPresent()) {
      PrometheusQuery.SecretRef ref = server.authToken().get();
      try {
        Secret secret = client.secrets().inNamespace(ref.namespace()).withName(ref.name()).get();
        String encoded = secret == null || secret.getData() == null ? null : secret.getData().get(TOKEN_KEY);
        if (encoded == null || encoded.isEmpty()) {
          throw new IllegalStateException("Secret " + ref.namespace() + "/" + ref.name() + " has no " + TOKEN_KEY);
        }
        return Optional.of(new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8).trim());
      } catch (KubernetesClientException e) {
        throw new IllegalStateException("cannot read Secret " + ref.namespace() + "/" + ref.name() + ": " + e.getMessage(), e);
      }
    }
    Path token = SERVICE_ACCOUNT.resolve("token");
    try {
      return Files.isReadable(token) ? Optional.of(Files.readString(token).trim()) : Optional.empty();
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + token + ": " + e.getMessage(), e);
    }
  }

  private WebClient web() {
    if (web == null) {
      vertx = Vertx.vertx();
      WebClientOptions options = new WebClientOptions().setUserAgent("podsweeper").setConnectTimeout((int) TIMEOUT.toMillis());
      Path ca = SERVICE_ACCOUNT.resolve("ca.crt");
      if (Files.isReadable(ca)) {
        options.setTrustOptions(new PemTrustOptions().addCertPath(ca.toString()));
      }
      web = WebClient.create(vertx, options);
    }
    return web;
  }

  private static String abbreviate(String body) {
    String text = body == null ? "" : body.strip();
    return text.length() > 200 ? text.substring(0, 200) + "…" : text;
  }

  @Override
  public synchronized void close() {
    if (web != null) {
      web.close();
      vertx.close();
    }
  }
}
