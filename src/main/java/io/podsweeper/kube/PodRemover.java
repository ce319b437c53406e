package io.podsweeper.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.podsweeper.policy.MigrationJobs.DeleteOptions;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.removal.RequestResult.Outcome;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends removal requests: DELETE for finished pods, an Eviction for the rest (so PodDisruptionBudgets hold). Both
 * carry the decision's UID and resourceVersion as preconditions, so a pod that changed, or was recreated under the
 * same name, after the decision is never removed.
 *
 * <p>Its client has the HTTP layer's retries off ({@link KubeClients#unretried}): fabric8 retries 429s for ~19 s by
 * default, which would hide a PDB refusal behind a stalled worker. Backoff is ours, per pod.
 */
public final class PodRemover {
  private static final Logger LOG = LoggerFactory.getLogger(PodRemover.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  public static final long REQUEST_TIMEOUT_SECONDS = 30;


  private final KubernetesClient client;
  /** Discovered when first asked (the service asks as it starts: {@link #evictionApiVersion}). */
  private volatile String evictionApiVersion;
  private final Supplier<OptionalLong> gracePeriodSeconds;

  private PodRemover(KubernetesClient client, Supplier<OptionalLong> gracePeriodSeconds) {
    this.client = client;
    this.gracePeriodSeconds = gracePeriodSeconds;
  }

  /**
   * A remover of the Eviction version the server serves, asked of the server when first needed.
   *
   * @param client one whose requests the HTTP layer does not retry ({@link KubeClients#unretried}): a removal is sent once
   * @param gracePeriodSeconds the policy's {@code gracePeriodSeconds}, read for each request: the policy in force when
   *     it is sent, so a reload applies to the next request
   */
  public static PodRemover create(KubernetesClient client, Supplier<OptionalLong> gracePeriodSeconds) {
    return new PodRemover(client, gracePeriodSeconds);
  }

  /**
   * The group/version of the {@code pods/eviction} subresource, as kubectl drain finds it: {@code policy/v1} on
   * Kubernetes 1.22 and later, {@code policy/v1beta1} before.
   */
  static String discoverEvictionVersion(KubernetesClient client) {
    for (APIResource resource : client.getApiResources("v1").getResources()) {
      if ("pods/eviction".equals(resource.getName()) && resource.getGroup() != null && resource.getVersion() != null) {
        return resource.getGroup() + "/" + resource.getVersion();
      }
    }
    return "policy/v1";
  }

  /**
   * The Eviction's group/version, asked of the server (API discovery) the first time: the service asks as it starts,
   * once the pods' list is sent, so a server that cannot be asked fails the start, and no removal waits for it.
   */
  public String evictionApiVersion() {
    String version = evictionApiVersion;
    if (version == null) {
      synchronized (this) {
        if (evictionApiVersion == null) {
          evictionApiVersion = discoverEvictionVersion(client);
          LOG.info("evictions use {}", evictionApiVersion);
        }
        version = evictionApiVersion;
      }
    }
    return version;
  }

  /** @param dryRun ask the API server to judge the request without acting on it ({@code dryRun=All}) */
  public RequestResult remove(Decision decision, boolean dryRun) {
    return remove(decision, dryRun, Optional.empty());
  }

  /** @param jobOptions a PodMigrationJob's delete options, over the policy's {@code gracePeriodSeconds} */
  public RequestResult remove(Decision decision, boolean dryRun, Optional<DeleteOptions> jobOptions) {
    String podPath = podPath(decision);
    ObjectNode deleteOptions = deleteOptions(decision, gracePeriodSeconds.get(), jobOptions);
    String query = "";
    if (dryRun) {
      deleteOptions.putArray("dryRun").add("All");
      query = "?dryRun=All";
    }
    HttpRequest.Builder request;
    if (decision.action() == Action.DELETE) {
      request = request(podPath + query).delete("application/json", deleteOptions.toString());
    } else {
      ObjectNode eviction = JSON.createObjectNode();
      eviction.put("apiVersion", evictionApiVersion());
      eviction.put("kind", "Eviction");
      eviction.putObject("metadata").put("name", decision.name()).put("namespace", decision.namespace());
      eviction.set("deleteOptions", deleteOptions);
      request = request(podPath + "/eviction" + query).post("application/json", eviction.toString());
    }
    return exchange(request);
  }

  /**
   * Koordinator's soft eviction: the pod gets the {@link MigrationJobs#SOFT_EVICTION_ANNOTATION} annotation (when, who,
   * why) and the workload moves itself. Sent once, as any removal: the patch carries the decision's UID and
   * resourceVersion, so a changed or recreated pod is not marked.
   */
  public RequestResult softEvict(Decision decision) {
    ObjectNode spec = JSON.createObjectNode().put("timestamp", Instant.now().toString()).put("initiator", decision.strategy())
        .put("reason", decision.reason());
    ObjectNode patch = JSON.createObjectNode();
    patch.putObject("metadata").put("resourceVersion", decision.resourceVersion()).put("uid", decision.uid())
        .putObject("annotations").put(MigrationJobs.SOFT_EVICTION_ANNOTATION, spec.toString());
    RequestResult sent = exchange(request(podPath(decision)).patch("application/merge-patch+json", patch.toString()));
    return sent.outcome() == Outcome.REMOVED
        ? new RequestResult(Outcome.REMOVED, sent.code(), "soft eviction requested (" + MigrationJobs.SOFT_EVICTION_ANNOTATION + ")")
        : sent;
  }

  private static String podPath(Decision decision) {
    return "/api/v1/namespaces/" + encode(decision.namespace()) + "/pods/" + encode(decision.name());
  }

  /** A request of this client's (no HTTP-layer retries) to {@code path} of the API server, e.g. {@code /api/v1/pods}. */
  HttpRequest.Builder request(String path) {
    return client.getHttpClient().newHttpRequestBuilder().timeout(REQUEST_TIMEOUT_SECONDS, TimeUnit.SECONDS)
        .uri(client.getMasterUrl().toString().replaceAll("/$", "") + path);
  }

  /** Sends a request and reads its answer as an outcome; no answer is an error. */
  RequestResult exchange(HttpRequest.Builder request) {
    return send(request).result();
  }

  /** An answer read as an outcome, with its body (empty without an answer). */
  record Reply(RequestResult result, String body) {}

  /** Sends a request; its answer as an outcome and its body, for a read. No answer is an error. */
  Reply send(HttpRequest.Builder request) {
    try {
      HttpResponse<String> response = client.getHttpClient().sendAsync(request.build(), String.class)
          .get(REQUEST_TIMEOUT_SECONDS + 5, TimeUnit.SECONDS);
      return new Reply(result(response.code(), response.body()), response.body() == null ? "" : response.body());
    } catch (ExecutionException | TimeoutException e) {
      Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
      return new Reply(new RequestResult(Outcome.ERROR, RequestResult.NO_ANSWER, "no answer from the API server: " + cause), "");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Reply(new RequestResult(Outcome.ERROR, RequestResult.NO_ANSWER, "interrupted"), "");
    }
  }

  /**
   * The request's DeleteOptions: the preconditions are always the decision's UID and resourceVersion (a job's own
   * never replace them); a job's {@code gracePeriodSeconds} wins over the policy's.
   */
  static ObjectNode deleteOptions(Decision decision, OptionalLong policyGrace, Optional<DeleteOptions> jobOptions) {
    ObjectNode options = JSON.createObjectNode();
    options.put("apiVersion", "v1");
    options.put("kind", "DeleteOptions");
    options.putObject("preconditions").put("uid", decision.uid()).put("resourceVersion", decision.resourceVersion());
    OptionalLong grace = jobOptions.map(DeleteOptions::gracePeriodSeconds).filter(OptionalLong::isPresent).orElse(policyGrace);
    jobOptions.ifPresent(o -> o.write(options));
    grace.ifPresent(g -> options.put("gracePeriodSeconds", g));
    return options;
  }

  static RequestResult result(int code, String body) {
    String message = statusMessage(body);
    if (code >= 200 && code < 300) {
      return new RequestResult(Outcome.REMOVED, code, message);
    }
    Outcome outcome = switch (code) {
      case 429 -> Outcome.REFUSED;
      case 409 -> Outcome.CONFLICT;
      case 404 -> Outcome.GONE;
      default -> Outcome.ERROR;
    };
    return new RequestResult(outcome, code, message);
  }

  private static String statusMessage(String body) {
    if (body == null || body.isBlank()) {
      return "";
    }
    try {
      JsonNode status = JSON.readTree(body);
      return status.path("message").asText("");
    } catch (java.io.IOException e) {
      return body.length() > 200 ? body.substring(0, 200) : body;
    }
  }

  static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
