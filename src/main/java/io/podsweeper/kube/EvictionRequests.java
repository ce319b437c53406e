package io.podsweeper.kube;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.APIGroup;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GroupVersionForDiscovery;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.podsweeper.removal.EvictionRequester;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.strategy.Decision;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The EvictionRequest API of KEP-4563 ({@code coordination.k8s.io}, alpha), in the KEP's revision of 2026-02-11
 * (kubernetes/enhancements 108eb5739, keps/sig-node/4563-eviction-request-api): an {@code EvictionRequest} named after
 * the pod's UID, {@code spec.target.podRef} (name, uid), {@code spec.requesters[].name}, conditions {@code Evicted} and
 * {@code Canceled}, interceptors' progress in {@code status.activeInterceptors} and {@code status.interceptors[]}.
 *
 * <p>As the KEP asks of requesters, this one writes only its own part, by server-side apply under its own field
 * manager: applying the target with this requester creates the request or joins an existing one; applying the target
 * alone takes this requester out and leaves any other requester's entry as it is.
 */
public final class EvictionRequests implements EvictionRequester {
  private static final Logger LOG = LoggerFactory.getLogger(EvictionRequests.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  public static final String GROUP = "coordination.k8s.io";
  public static final String KIND = "EvictionRequest";
  public static final String PLURAL = "evictionrequests";
  static final String FIELD_MANAGER = "podsweeper";
  /** Where a request says what made it ({@link Origin}), as JSON. */
  static final String ORIGIN_ANNOTATION = "podsweeper.io/decision";

  private final PodRemover http;
  private final String version;
  private volatile SharedIndexInformer<GenericKubernetesResource> informer;

  private EvictionRequests(PodRemover http, String version) {
    this.http = http;
    this.version = version;
  }

  /**
   * The API if this cluster serves it (API discovery: a version of {@code coordination.k8s.io} with
   * {@code evictionrequests}), else empty: evictions then go to the eviction endpoint as before.
   *
   * @param http sends the requests (its client has no HTTP-layer retries)
   */
  public static Optional<EvictionRequests> discover(KubernetesClient client, PodRemover http) {
    Optional<String> version = servedVersion(client);
    if (version.isEmpty()) {
      LOG.info("the cluster does not serve {}/{}: evictions use the eviction endpoint", GROUP, PLURAL);
    } else {
      LOG.info("the cluster serves {}/{} {}: evictions the policy names (evictionRequests) go as EvictionRequests", GROUP, version.get(), KIND);
    }
    return version.map(v -> new EvictionRequests(http, v));
  }

  private static Optional<String> servedVersion(KubernetesClient client) {
    APIGroup group = client.getApiGroup(GROUP);
    if (group == null || group.getVersions() == null) {
      return Optional.empty();
    }
    for (GroupVersionForDiscovery gv : group.getVersions()) {
      APIResourceList resources = client.getApiResources(gv.getGroupVersion());
      if (resources != null && resources.getResources().stream().map(APIResource::getName).anyMatch(PLURAL::equals)) {
        return Optional.of(gv.getVersion());
      }
    }
    return Optional.empty();
  }

  public String apiVersion() {
    return GROUP + "/" + version;
  }

  @Override
  public RequestResult request(Decision decision, boolean balance, boolean dryRun) {
    ObjectNode applied = target(decision);
    ((ObjectNode) applied.get("spec")).putArray("requesters").addObject().put("name", REQUESTER);
    ObjectNode origin = JSON.createObjectNode().put("strategy", decision.strategy()).put("profile", decision.profile())
        .put("rule", decision.rule()).put("balance", balance);
    ((ObjectNode) applied.get("metadata")).putObject("annotations").put(ORIGIN_ANNOTATION, origin.toString());
    return apply(decision, applied, dryRun);
  }

  @Override
  public RequestResult withdraw(Decision decision) {
    return apply(decision, target(decision), false);
  }

  /** This requester's part of the pod's EvictionRequest: its name and target, which are the pod's UID and name. */
  private ObjectNode target(Decision decision) {
    ObjectNode o = JSON.createObjectNode();
    o.put("apiVersion", apiVersion());
    o.put("kind", KIND);
    o.putObject("metadata").put("name", decision.uid()).put("namespace", decision.namespace());
    o.putObject("spec").putObject("target").putObject("podRef").put("name", decision.name()).put("uid", decision.uid());
    return o;
  }

  private RequestResult apply(Decision decision, ObjectNode applied, boolean dryRun) {
    String path = "/apis/" + apiVersion() + "/namespaces/" + PodRemover.encode(decision.namespace()) + "/" + PLURAL + "/"
        + PodRemover.encode(decision.uid()) + "?fieldManager=" + FIELD_MANAGER + (dryRun ? "&dryRun=All" : "");
    // JSON is YAML: the apply patch type takes it as it is.
    return http.exchange(http.request(path).patch("application/apply-patch+yaml", applied.toString()));
  }

  @Override
  public List<Observed> listed() {
    return informer == null ? List.of() : informer.getStore().list().stream().map(r -> observed(JSON.valueToTree(r))).toList();
  }

  /**
   * Watches every EvictionRequest (they are few), without waiting for the first list: {@code changed} gets each add
   * and change, on the informer's thread; {@code listed} runs once the first list is in.
   */
  public void watch(KubernetesClient client, Consumer<Observed> changed, Runnable listed) {
    ResourceDefinitionContext context = new ResourceDefinitionContext.Builder()
        .withGroup(GROUP).withVersion(version).withKind(KIND).withPlural(PLURAL).withNamespaced(true).build();
    informer = client.genericKubernetesResources(context).inAnyNamespace().runnableInformer(0);
    informer.addEventHandler(new ResourceEventHandler<>() {
      @Override
      public void onAdd(GenericKubernetesResource r) {
        changed.accept(observed(JSON.valueToTree(r)));
      }

      @Override
      public void onUpdate(GenericKubernetesResource before, GenericKubernetesResource now) {
        onAdd(now);
      }

      @Override
      public void onDelete(GenericKubernetesResource r, boolean finalStateUnknown) {
        // Deleted after it ended (Evicted or Canceled, seen before) or with its pod: the pod's own events settle it.
      }
    });
    informer.start().whenComplete((ok, failed) -> {
      if (failed != null) {
        LOG.error("cannot watch {} (RBAC: list and watch evictionrequests); requests in progress end only with their pods: {}",
            PLURAL, failed.toString());
      } else {
        listed.run();
      }
    });
  }

  /** An EvictionRequest as JSON, read the KEP's way. */
  static Observed observed(JsonNode r) {
    List<String> requesters = new ArrayList<>();
    r.path("spec").path("requesters").forEach(q -> requesters.add(q.path("name").asText()));
    JsonNode status = r.path("status");
    String progress = "";
    for (JsonNode active : status.path("activeInterceptors")) {
      for (JsonNode interceptor : status.path("interceptors")) {
        if (interceptor.path("name").asText().equals(active.asText())) {
          progress = active.asText() + ": " + interceptor.path("message").asText("");
        }
      }
    }
    return new Observed(r.path("metadata").path("namespace").asText(), r.path("metadata").path("name").asText(),
        r.path("spec").path("target").path("podRef").path("name").asText(), requesters, condition(status, "Evicted"),
        condition(status, "Canceled"), progress, origin(r.path("metadata").path("annotations").path(ORIGIN_ANNOTATION).asText("")));
  }

  /** What made a request, from its annotation; {@link Origin#UNKNOWN} without one, or with one that does not parse. */
  private static Origin origin(String annotation) {
    if (annotation.isEmpty()) {
      return Origin.UNKNOWN;
    }
    try {
      JsonNode o = JSON.readTree(annotation);
      return new Origin(o.path("strategy").asText(""), o.path("profile").asText(""), o.path("rule").asText(""),
          o.path("balance").asBoolean(false));
    } catch (JsonProcessingException e) {
      LOG.warn("{} annotation {} does not parse ({}): the request is judged as a deadline", KIND, ORIGIN_ANNOTATION, e.getOriginalMessage());
      return Origin.UNKNOWN;
    }
  }

  /** A condition's message (or its reason when it has none) when its status is True. */
  private static Optional<String> condition(JsonNode status, String type) {
    for (JsonNode c : status.path("conditions")) {
      if (type.equals(c.path("type").asText()) && "True".equals(c.path("status").asText())) {
        String message = c.path("message").asText("");
        return Optional.of(message.isEmpty() ? c.path("reason").asText(type) : message);
      }
    }
    return Optional.empty();
  }

  public void close() {
    if (informer != null) {
      try {
        informer.close();
      } catch (KubernetesClientException e) {
        LOG.debug("closing the EvictionRequest informer: {}", e.toString());
      }
    }
  }
}
