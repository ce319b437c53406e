package io.podsweeper.kube;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
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
import io.podsweeper.removal.RequestResult.Outcome;
import io.podsweeper.strategy.Decision;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The EvictionRequest API of KEP-4563 ({@code coordination.k8s.io}, alpha), in the KEP's revision of 2026-02-11
 * (kubernetes/enhancements 108eb5739, keps/sig-node/4563-eviction-request-api): an {@code EvictionRequest} named after
 * the pod's UID, {@code spec.target.podRef} (name, uid), {@code spec.requesters[].name}, conditions {@code Evicted} and
 * {@code Canceled}, interceptors' progress in {@code status.activeInterceptors} and {@code status.interceptors[]}.
 *
 * <p>As the KEP asks of requesters, this one writes only its own part: applying the target with this requester, by
 * server-side apply under its own field manager, creates the request or joins an existing one; a JSON patch under a
 * precondition takes this requester's entry out, whoever wrote it ({@link #withdraw}), and leaves any other
 * requester's entry as it is.
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
  /** A withdrawal reads and patches again after its precondition failed (the request changed in between), this often. */
  static final int WITHDRAW_ATTEMPTS = 5;
  /** The API server's answer to a JSON patch whose {@code test} failed. */
  private static final int PRECONDITION_FAILED = 422;

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

  /**
   * Takes this requester's entry out of {@code spec.requesters} by a JSON patch ({@link #withdrawal}), whoever wrote
   * the entry. Not by server-side apply, as {@link #request} writes it: an apply that leaves the entry out only gives
   * up this field manager's ownership of it, and removes it only when no other manager owns it too; when someone else's
   * apply or update wrote or co-owns it, the entry stayed, and with it this service as a requester. A JSON patch
   * removes by position, so it is sent under a precondition on the object as read, and the request is read again
   * (a quorum list by name: the {@code list} that RBAC grants already, no {@code get}) and patched anew when another
   * writer came in between, at most {@link #WITHDRAW_ATTEMPTS} times. Already not a requester is withdrawn; a request
   * that is gone is {@link RequestResult.Outcome#GONE}.
   */
  @Override
  public RequestResult withdraw(Decision decision) {
    String byName = "/apis/" + apiVersion() + "/namespaces/" + PodRemover.encode(decision.namespace()) + "/" + PLURAL
        + "?fieldSelector=" + PodRemover.encode("metadata.name=" + decision.uid());
    return withdraw(decision.uid(), () -> http.send(http.request(byName)),
        patch -> http.exchange(http.request(path(decision) + "?fieldManager=" + FIELD_MANAGER)
            .patch("application/json-patch+json", patch.toString())));
  }

  /**
   * The withdrawal's steps over its two requests: {@code read} lists the request by name (its answer and body),
   * {@code patch} sends a {@link #withdrawal}. A failed precondition is 422 (a {@code test} failed); 409 is taken the
   * same way, the answer of a write that lost a race inside the server.
   */
  static RequestResult withdraw(String uid, Supplier<PodRemover.Reply> read, Function<ArrayNode, RequestResult> patch) {
    RequestResult last = null;
    for (int attempt = 0; attempt < WITHDRAW_ATTEMPTS; attempt++) {
      PodRemover.Reply listed = read.get();
      if (listed.result().outcome() != Outcome.REMOVED) {
        return listed.result();
      }
      JsonNode items;
      try {
        items = JSON.readTree(listed.body()).path("items");
      } catch (JsonProcessingException e) {
        return new RequestResult(Outcome.ERROR, listed.result().code(), KIND + " " + uid + ": the list does not parse: " + e.getOriginalMessage());
      }
      if (items.isEmpty()) {
        return new RequestResult(Outcome.GONE, 404, KIND + " " + uid + " is gone");
      }
      Optional<ArrayNode> withdrawal = withdrawal(items.get(0));
      if (withdrawal.isEmpty()) {
        return new RequestResult(Outcome.REMOVED, listed.result().code(), "not among its requesters (any more)");
      }
      last = patch.apply(withdrawal.get());
      if (last.outcome() != Outcome.CONFLICT && last.code() != PRECONDITION_FAILED) {
        return last;
      }
    }
    return last;
  }

  /**
   * The JSON patch (RFC 6902) that takes this requester's entry out of {@code request}, with its origin annotation:
   * first a {@code test} of {@code metadata.resourceVersion} as read, then one of the entry's name at its index, then
   * the removals. The server applies all of it or none. The version's {@code test} is the precondition that counts: the
   * object is the one read, so the index is right. Why a {@code test} and not the version written into the patch (which
   * the server answers 409 when stale): whatever changed, the first {@code test} fails before any other operation, one
   * answer (422) for every stale read. The entry's {@code test} makes the patch refuse by itself to remove another
   * requester's entry. Empty when this requester is not in {@code spec.requesters}.
   */
  static Optional<ArrayNode> withdrawal(JsonNode request) {
    JsonNode requesters = request.path("spec").path("requesters");
    for (int i = 0; i < requesters.size(); i++) {
      if (REQUESTER.equals(requesters.get(i).path("name").asText())) {
        ArrayNode patch = JSON.createArrayNode();
        patch.addObject().put("op", "test").put("path", "/metadata/resourceVersion")
            .put("value", request.path("metadata").path("resourceVersion").asText());
        patch.addObject().put("op", "test").put("path", "/spec/requesters/" + i + "/name").put("value", REQUESTER);
        patch.addObject().put("op", "remove").put("path", "/spec/requesters/" + i);
        if (request.path("metadata").path("annotations").has(ORIGIN_ANNOTATION)) {
          // JSON Pointer: "/" in a key is written "~1".
          patch.addObject().put("op", "remove").put("path", "/metadata/annotations/" + ORIGIN_ANNOTATION.replace("/", "~1"));
        }
        return Optional.of(patch);
      }
    }
    return Optional.empty();
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
    String query = "?fieldManager=" + FIELD_MANAGER + (dryRun ? "&dryRun=All" : "");
    // JSON is YAML: the apply patch type takes it as it is.
    return http.exchange(http.request(path(decision) + query).patch("application/apply-patch+yaml", applied.toString()));
  }

  /** The pod's EvictionRequest: named after the pod's UID, in its namespace. */
  private String path(Decision decision) {
    return "/apis/" + apiVersion() + "/namespaces/" + PodRemover.encode(decision.namespace()) + "/" + PLURAL + "/"
        + PodRemover.encode(decision.uid());
  }

  @Override
  public List<Observed> listed() {
    return informer == null ? List.of() : informer.getStore().list().stream().map(r -> observed(JSON.valueToTree(r))).toList();
  }

  /**
   * Watches every EvictionRequest (they are few): {@code changed} gets each add and change, on the informer's thread;
   * {@code listed} runs once the first list is in, and the future returned completes after it. Nothing may be evaluated
   * before: a request this service made in an earlier process counts against the limits from the start.
   */
  public CompletableFuture<Void> watch(KubernetesClient client, Consumer<Observed> changed, Runnable listed) {
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
    return informer.start().toCompletableFuture().thenRun(listed);
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
