package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.podsweeper.app.Service;
import io.podsweeper.testing.Manifests;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.io.InputStream;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Podsweeper as an eviction requester of KEP-4563's EvictionRequest API, on the real API server with a stand-in CRD of
 * the same group, kind and shape (/crds/evictionrequests.coordination.k8s.io.yaml). The test plays the other parts by
 * writing the request's status: an interceptor reporting progress, the eviction-request controller deleting the pod and
 * setting {@code Evicted}. The API server's audit log witnesses that no eviction is sent.
 *
 * <p>A server of its own: the built-in coordination.k8s.io (Leases) must be off for a CRD to serve a version of that
 * group, and the other tests need Leases. Every other integration test runs where the API is not served: their
 * evictions, of pods that opt in or not, go to the eviction endpoint as before (e.g. EventsIT, SafetyIT).
 */
class EvictionRequestIT {
  private static final String CRD = "evictionrequests.coordination.k8s.io";
  private static final String TOKEN = "evreq-admin-token-0123456789";
  private static TestApiServer server;

  @BeforeAll
  static void serveTheApi() throws Exception {
    server = TestApiServer.startWithRuntimeConfig("coordination.k8s.io/v1=false,coordination.k8s.io/v1beta1=false");
    KubernetesClient client = server.client();
    List<HasMetadata> crds;
    try (InputStream in = EvictionRequestIT.class.getResourceAsStream("/crds/" + CRD + ".yaml")) {
      crds = client.load(in).items();
    }
    crds.forEach(crd -> client.resource(crd).fieldManager("podsweeper-evreq-it").forceConflicts().serverSideApply());
    await().atMost(Duration.ofSeconds(20)).until(() -> client.getApiResources("coordination.k8s.io/v1alpha1") != null);
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  private static String policy(String ns) {
    return """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        guard: {maxNamespaceShare: 1.0}
        limits: {maxInFlightPerOwner: 1}
        rules:
          - name: crashloop
            namespaces: {include: [%s]}
            states: [CrashLoopBackOff]
        """.formatted(ns);
  }

  private static MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> requests(
      KubernetesClient client) {
    return client.genericKubernetesResources("coordination.k8s.io/v1alpha1", "EvictionRequest");
  }

  private static Optional<GenericKubernetesResource> request(KubernetesClient client, Pod pod) {
    return Optional.ofNullable(requests(client).inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getUid()).get());
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> requesters(GenericKubernetesResource r) {
    Object list = ((Map<String, Object>) r.getAdditionalProperties().get("spec")).get("requesters");
    return list == null ? List.of() : (List<Map<String, Object>>) list;
  }

  /** A pod crash-looping (due under the policy), asking to be evicted in background, controlled by {@code ownerUid}. */
  private static Pod crashLooping(KubernetesClient client, String ns, String name, String ownerUid) {
    Pod pod = client.pods().inNamespace(ns).resource(new PodBuilder()
        .withNewMetadata().withName(name).withNamespace(ns)
        .addToAnnotations("descheduler.alpha.kubernetes.io/request-evict-only", "")
        .addNewOwnerReference().withApiVersion("kubevirt.io/v1").withKind("VirtualMachineInstance").withName("vm")
        .withUid(ownerUid).withController(true).endOwnerReference().endMetadata()
        .withNewSpec().withNodeName("node-a").addNewContainer().withName("main").withImage("busybox:1.36").endContainer().endSpec()
        .build()).create();
    return TestPods.setStatus(client, pod, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 7)));
  }

  private static void protect(KubernetesClient client, String ns, String name) {
    client.pods().inNamespace(ns).withName(name).edit(p -> {
      p.getMetadata().getAnnotations().put("podsweeper.io/protect", "true");
      return p;
    });
  }

  /** The interceptor's part: it reports progress in the request's status. */
  private static void interceptorReports(KubernetesClient client, Pod pod, String message) {
    GenericKubernetesResource r = request(client, pod).orElseThrow();
    String now = Instant.now().toString();
    r.getAdditionalProperties().put("status", Map.of(
        "activeInterceptors", List.of("kubevirt.io"),
        "interceptors", List.of(Map.of("name", "kubevirt.io", "startTime", now, "heartbeatTime", now, "message", message))));
    requests(client).inNamespace(pod.getMetadata().getNamespace()).resource(r).updateStatus();
  }

  /**
   * Create, progress, completion: a due pod that opts in gets an EvictionRequest named by its UID and no eviction;
   * while the interceptor works, the request holds its owner's one place (maxInFlightPerOwner: 1), so the second pod
   * waits; the eviction-request controller deletes the pod and says Evicted: success, and the second pod goes.
   */
  @Test
  void aRequestIsMadeCountedWhileInProgressAndSucceedsWhenEvicted() throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("evreq");
    String vm = UUID.randomUUID().toString();
    Pod first = crashLooping(client, ns, "virt-launcher-1", vm);
    try (RunningService service = RunningService.start(server, policy(ns))) {
      await().atMost(Duration.ofSeconds(10)).until(() -> request(client, first).isPresent());
      Pod second = crashLooping(client, ns, "virt-launcher-2", vm);
      GenericKubernetesResource made = request(client, first).orElseThrow();
      assertThat(made.getAdditionalProperties().get("spec")).isEqualTo(Map.of(
          "target", Map.of("podRef", Map.of("name", "virt-launcher-1", "uid", first.getMetadata().getUid())),
          "requesters", List.of(Map.of("name", "podsweeper.io"))));
      assertThat(service.result(ns, "virt-launcher-1")).isEqualTo("background");

      // Progress: the request stays in progress and keeps the owner's one place.
      interceptorReports(client, first, "live migration 40% done");
      await().atMost(Duration.ofSeconds(5)).until(() -> "limited".equals(service.result(ns, "virt-launcher-2")));
      await().during(Duration.ofSeconds(2)).until(() -> request(client, second).isEmpty());

      // Completion: the eviction-request controller's part (its condition, then the pod's end).
      GenericKubernetesResource done = request(client, first).orElseThrow();
      done.getAdditionalProperties().put("status", Map.of("conditions", List.of(Map.of("type", "Evicted", "status", "True",
          "reason", "PodTerminated", "message", "the pod has terminated", "lastTransitionTime", Instant.now().toString()))));
      requests(client).inNamespace(ns).resource(done).updateStatus();
      await().atMost(Duration.ofSeconds(5)).until(() -> "success".equals(service.result(ns, "virt-launcher-1")));
      assertThat(service.decision(ns, "virt-launcher-1").get("message").asText())
          .isEqualTo("EvictionRequest " + first.getMetadata().getUid()
              + " ended: Evicted: the pod has terminated (last progress: kubevirt.io: live migration 40% done)");
      client.pods().inNamespace(ns).withName("virt-launcher-1").withGracePeriod(0).delete();
      // The place is free: the second pod goes at once, not at the next full pass.
      await().atMost(Duration.ofSeconds(5)).until(() -> request(client, second).isPresent());
      assertThat(server.removalRequests(ns)).filteredOn(e -> e.userAgent().startsWith("podsweeper")).isEmpty();
      assertThat(client.v1().events().inNamespace(ns).list().getItems()).extracting(e -> e.getReason())
          .contains("PodSweeperEvictionStarted", "PodSweeperEvicted");
    }
  }

  /**
   * Cancel: a pod protected while its request is in progress, then the kill switch thrown while another one's is:
   * Podsweeper takes itself out of spec.requesters each time and records the request as canceled. Run as deployed, under
   * the manifests' ServiceAccount (manifests/rbac.yaml applied): the proof that its evictionrequests rule is enough.
   */
  @Test
  void aRequestIsWithdrawnWhenThePodIsProtectedOrRemovalsArePaused() throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("evreq-cancel");
    Pod protectedLater = crashLooping(client, ns, "virt-launcher-p", UUID.randomUUID().toString());
    Pod pausedLater = crashLooping(client, ns, "virt-launcher-k", UUID.randomUUID().toString());
    Manifests.applyBase(server);
    try (RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT), policy(ns),
        Service.Options.local(0).withAdminToken(TOKEN))) {
      await().atMost(Duration.ofSeconds(10)).until(() -> request(client, protectedLater).isPresent() && request(client, pausedLater).isPresent());
      interceptorReports(client, protectedLater, "draining connections");

      protect(client, ns, "virt-launcher-p");
      await().atMost(Duration.ofSeconds(5)).until(() -> requesters(request(client, protectedLater).orElseThrow()).isEmpty());
      await().atMost(Duration.ofSeconds(5)).until(() -> "canceled".equals(service.result(ns, "virt-launcher-p")));
      assertThat(service.decision(ns, "virt-launcher-p").get("message").asText()).contains("withdrawn");
      assertThat(requesters(request(client, pausedLater).orElseThrow())).isNotEmpty();

      assertThat(service.post("/api/v1/pause", TOKEN)).isEqualTo(200);
      await().atMost(Duration.ofSeconds(5)).until(() -> requesters(request(client, pausedLater).orElseThrow()).isEmpty());
      await().atMost(Duration.ofSeconds(5)).until(() -> "canceled".equals(service.result(ns, "virt-launcher-k")));
      assertThat(service.decision(ns, "virt-launcher-k").get("message").asText()).contains("paused");
      assertThat(server.removalRequests(ns)).filteredOn(e -> e.userAgent().startsWith("podsweeper")).isEmpty();
      assertThat(client.v1().events().inNamespace(ns).list().getItems()).extracting(e -> e.getReason())
          .contains("PodSweeperEvictionCanceled");
    }
  }

  /**
   * Someone else's field manager wrote this service's entry (an operator's apply, a tool that requests on its behalf):
   * a server-side apply without the entry would only give up an ownership this service never had, and the entry would
   * stay. The protected pod's request is withdrawn all the same, by a JSON patch under the request's resourceVersion
   * that takes out this entry and no other. Run as the manifests' ServiceAccount (patch is its verb); the audit log
   * witnesses the patch.
   */
  @Test
  void aRequestWhoseEntryAnotherFieldManagerWroteIsWithdrawnAllTheSame() throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("evreq-other");
    Pod pod = crashLooping(client, ns, "virt-launcher-o", UUID.randomUUID().toString());
    String uid = pod.getMetadata().getUid();
    GenericKubernetesResource theirs = new GenericKubernetesResource();
    theirs.setApiVersion("coordination.k8s.io/v1alpha1");
    theirs.setKind("EvictionRequest");
    theirs.setMetadata(new ObjectMetaBuilder().withNamespace(ns).withName(uid).build());
    theirs.setAdditionalProperty("spec", Map.of("target", Map.of("podRef", Map.of("name", "virt-launcher-o", "uid", uid)),
        "requesters", List.of(Map.of("name", "drain.example.com"), Map.of("name", "podsweeper.io"))));
    String version = requests(client).inNamespace(ns).resource(theirs).fieldManager("drain-tool").serverSideApply()
        .getMetadata().getResourceVersion();
    protect(client, ns, "virt-launcher-o");
    Manifests.applyBase(server);
    try (RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT), policy(ns))) {
      // Taken over at the first list, no longer wanted (protected): withdrawn at once.
      await().atMost(Duration.ofSeconds(10)).until(() -> "canceled".equals(service.result(ns, "virt-launcher-o")));
      assertThat(service.decision(ns, "virt-launcher-o").get("message").asText()).contains("withdrawn");
      assertThat(requesters(request(client, pod).orElseThrow())).containsExactly(Map.of("name", "drain.example.com"));
    }
    assertThat(server.audit()).filteredOn(e -> "evictionrequests".equals(e.resource()) && ns.equals(e.namespace())
            && Manifests.user(Manifests.SERVICE_ACCOUNT).equals(e.user()))
        .singleElement().satisfies(e -> {
          assertThat(e.verb()).isEqualTo("patch");
          assertThat(e.code()).isEqualTo(200);
          assertThat(e.body().toString()).isEqualTo("[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\""
              + version + "\"},"
              + "{\"op\":\"test\",\"path\":\"/spec/requesters/1/name\",\"value\":\"podsweeper.io\"},"
              + "{\"op\":\"remove\",\"path\":\"/spec/requesters/1\"}]");
        });
  }

  /**
   * A restart: the process that made the requests is stopped, and while it is down one of the pods is protected. The
   * restarted service takes over both requests: it withdraws the protected pod's at once, and keeps the other one in
   * progress, counted: its owner's second pod waits (maxInFlightPerOwner: 1) and gets no request.
   */
  @Test
  void aRestartedServiceTakesOverItsRequestsAndWithdrawsThoseThatNoLongerQualify() throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("evreq-restart");
    String vm = UUID.randomUUID().toString();
    Pod kept = crashLooping(client, ns, "virt-launcher-1", vm);
    Pod protectedMeanwhile = crashLooping(client, ns, "virt-launcher-p", UUID.randomUUID().toString());
    try (RunningService first = RunningService.start(server, policy(ns))) {
      await().atMost(Duration.ofSeconds(10)).until(() -> request(client, kept).isPresent() && request(client, protectedMeanwhile).isPresent());
    }
    assertThat(request(client, kept).orElseThrow().getMetadata().getAnnotations())
        .hasEntrySatisfying("podsweeper.io/decision", origin -> assertThat(origin).contains("\"rule\":\"crashloop\"", "\"balance\":false"));
    protect(client, ns, "virt-launcher-p");
    Pod second = crashLooping(client, ns, "virt-launcher-2", vm);

    try (RunningService restarted = RunningService.start(server, policy(ns))) {
      await().atMost(Duration.ofSeconds(5)).until(() -> requesters(request(client, protectedMeanwhile).orElseThrow()).isEmpty());
      await().atMost(Duration.ofSeconds(5)).until(() -> "canceled".equals(restarted.result(ns, "virt-launcher-p")));
      await().atMost(Duration.ofSeconds(5)).until(() -> "limited".equals(restarted.result(ns, "virt-launcher-2")));
      assertThat(restarted.decision(ns, "virt-launcher-2").get("message").asText()).contains("maxInFlightPerOwner");
      await().during(Duration.ofSeconds(1)).until(() -> request(client, second).isEmpty());
      assertThat(requesters(request(client, kept).orElseThrow())).containsExactly(Map.of("name", "podsweeper.io"));
    }
  }
}
