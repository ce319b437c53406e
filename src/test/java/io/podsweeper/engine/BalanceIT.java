package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.app.Service;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The node-aware strategies in the live service: a periodic pass over real Node objects (and NodeMetrics). */
@ExtendWith(ApiServerExtension.class)
class BalanceIT {

  /** One profile running {@code plugin} at {@code point} (deschedule or balance) in namespace {@code ns} only, with nodeFit. */
  private static String policy(String point, String plugin, String ns) {
    return """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        fullPassInterval: 2s
        profiles:
          - name: balance
            pluginConfig:
              - name: DefaultEvictor
                args: {nodeFit: true}
              - name: %1$s
                args: {namespaces: {include: [%2$s]}}
            plugins:
              %3$s: {enabled: [%1$s]}
        """.formatted(plugin, ns, point);
  }

  /** Nodes this test made, deleted after it: other tests' passes must not see them. */
  private final List<String> nodes = new java.util.ArrayList<>();

  @AfterEach
  void deleteNodes(KubernetesClient client) {
    nodes.forEach(n -> client.nodes().withName(n).delete());
  }

  private String readyNode(KubernetesClient client, String prefix, boolean tainted) {
    String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 6);
    nodes.add(name);
    NodeBuilder node = new NodeBuilder().withNewMetadata().withName(name).addToLabels("kubernetes.io/hostname", name).endMetadata()
        .withNewSpec().endSpec();
    if (tainted) {
      node.editSpec().addNewTaint().withKey("dedicated").withValue("gpu").withEffect("NoSchedule").endTaint().endSpec();
    }
    Node created = client.nodes().resource(node.build()).create();
    // The admission plugin adds a not-ready taint to new nodes; a real node controller would clear it.
    created.getSpec().setTaints(created.getSpec().getTaints().stream().filter(t -> !t.getKey().startsWith("node.kubernetes.io/")).toList());
    created = client.nodes().resource(created).update();
    created.setStatus(new io.fabric8.kubernetes.api.model.NodeStatusBuilder()
        .addToConditions(new NodeConditionBuilder().withType("Ready").withStatus("True").build())
        .addToAllocatable(Map.of("cpu", new Quantity("4"), "memory", new Quantity("8Gi"), "pods", new Quantity("110")))
        .addToCapacity(Map.of("cpu", new Quantity("4"), "memory", new Quantity("8Gi"), "pods", new Quantity("110")))
        .build());
    client.nodes().resource(created).updateStatus();
    return name;
  }

  private static Pod podOn(KubernetesClient client, String ns, String name, String node) {
    return podOn(client, ns, name, node, UnaryOperator.identity());
  }

  /** A ReplicaSet's pod bound to {@code node}, with what {@code customize} adds (labels, affinity). */
  private static Pod podOn(KubernetesClient client, String ns, String name, String node, UnaryOperator<PodBuilder> customize) {
    return client.pods().inNamespace(ns).resource(customize.apply(new PodBuilder()
        .withNewMetadata().withName(name).withNamespace(ns)
        .addNewOwnerReference().withApiVersion("apps/v1").withKind("ReplicaSet").withName("web").withUid(UUID.randomUUID().toString())
        .withController(true).endOwnerReference().endMetadata()
        .withNewSpec().withNodeName(node).withTerminationGracePeriodSeconds(0L)
        .addNewContainer().withName("main").withImage("nginx:1.27").endContainer().endSpec()).build()).create();
  }

  @Test
  void evictsAPodFromATaintedNodeWhenAnotherNodeTakesIt(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("balance");
    String tainted = readyNode(client, "gpu", true);
    String plain = readyNode(client, "plain", false);
    podOn(client, ns, "misplaced", tainted);
    podOn(client, ns, "fine", plain);
    try (RunningService service = RunningService.start(server, policy("deschedule", "RemovePodsViolatingNodeTaints", ns))) {
      await().atMost(Duration.ofSeconds(20)).until(() -> client.pods().inNamespace(ns).withName("misplaced").get() == null);
      assertThat(client.pods().inNamespace(ns).withName("fine").get()).isNotNull();
      assertThat(service.get("/api/v1/decisions")).contains("\"strategy\":\"RemovePodsViolatingNodeTaints\"");
      assertThat(service.metric("podsweeper_balance_passes_total", "result=\"run\"")).isGreaterThanOrEqualTo(1.0);
    }
  }

  /**
   * Four pods on a tainted node, evicted one per 5 s: the first goes at once, the others wait for the rate while the
   * test changes the world. The service reloads its policy from {@code dir}/policy.yaml.
   */
  private RunningService slowTaintEvictions(TestApiServer server, String ns, Path dir) throws Exception {
    KubernetesClient client = server.client();
    String tainted = readyNode(client, "gpu", true);
    readyNode(client, "plain", false);
    for (int i = 0; i < 4; i++) {
      podOn(client, ns, "misplaced-" + i, tainted);
    }
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, policy("deschedule", "RemovePodsViolatingNodeTaints", ns) + "limits: {perSecond: 0.2}\n");
    RunningService service = RunningService.start(server, Files.readString(file),
        Service.Options.local(0).withPolicyFile(file, UnaryOperator.identity(), Duration.ofMillis(200)));
    await().atMost(Duration.ofSeconds(20)).until(() -> server.removalRequests(ns).size() == 1);
    return service;
  }

  /** What the API server received for {@code ns} stays at one eviction while the others would have been due. */
  private static void noFurtherEviction(TestApiServer server, String ns) {
    await().during(Duration.ofSeconds(12)).atMost(Duration.ofSeconds(15)).until(() -> server.removalRequests(ns).size() == 1);
    assertThat(server.client().pods().inNamespace(ns).list().getItems()).hasSize(3);
  }

  @Test
  void aQueuedEvictionIsNotSentOnceItsNamespaceIsProtected(TestApiServer server, @TempDir Path dir)
      throws Exception {
    String ns = server.newNamespace("protect-queued");
    try (RunningService service = slowTaintEvictions(server, ns, dir)) {
      server.client().namespaces().withName(ns).edit(n -> {
        n.getMetadata().setAnnotations(Map.of("podsweeper.io/protect", "true"));
        return n;
      });
      noFurtherEviction(server, ns);
    }
  }

  @Test
  void aReloadWithoutTheStrategyDropsItsQueuedEvictions(TestApiServer server, @TempDir Path dir)
      throws Exception {
    String ns = server.newNamespace("reload-queued");
    try (RunningService service = slowTaintEvictions(server, ns, dir)) {
      Files.writeString(dir.resolve("policy.yaml"), policy("balance", "RemoveDuplicates", ns)
          + "limits: {perSecond: 0.2}\n");
      await().atMost(Duration.ofSeconds(5)).until(() -> service.metric("podsweeper_policy_reloads_total", "result=\"applied\"") == 1.0);
      noFurtherEviction(server, ns);
    }
  }

  @Test
  void evictsAPodWhoseRequiredAntiAffinitySelectsAPodOnItsNode(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("antiaffinity");
    String crowded = readyNode(client, "crowded", false);
    String free = readyNode(client, "free", false);
    podOn(client, ns, "a", crowded, p -> p.editMetadata().addToLabels("app", "a").endMetadata());
    podOn(client, ns, "b", crowded, p -> p.editSpec().withNewAffinity().withNewPodAntiAffinity()
        .addNewRequiredDuringSchedulingIgnoredDuringExecution().withTopologyKey("kubernetes.io/hostname")
        .withNewLabelSelector().addToMatchLabels("app", "a").endLabelSelector()
        .endRequiredDuringSchedulingIgnoredDuringExecution().endPodAntiAffinity().endAffinity().endSpec());
    try (RunningService service = RunningService.start(server, policy("deschedule", "RemovePodsViolatingInterPodAntiAffinity", ns))) {
      await().atMost(Duration.ofSeconds(20)).until(() -> client.pods().inNamespace(ns).withName("b").get() == null);
      assertThat(client.pods().inNamespace(ns).withName("a").get()).isNotNull();
      assertThat(service.get("/api/v1/decisions")).contains("\"strategy\":\"RemovePodsViolatingInterPodAntiAffinity\"")
          .contains("excludes pods matching app=a from its topology domain kubernetes.io/hostname=" + crowded);
    }
  }

  @Test
  void spreadsTheCrowdedZoneOfATopologySpreadConstraint(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("spread");
    // A key of this test's own: nodes other tests leave behind are no domain of it.
    String zoneKey = "test.podsweeper.io/zone-" + UUID.randomUUID().toString().substring(0, 6);
    String crowded = readyNode(client, "zone-a", false);
    String emptier = readyNode(client, "zone-b", false);
    client.nodes().withName(crowded).edit(n -> new NodeBuilder(n).editMetadata().addToLabels(zoneKey, "a").endMetadata().build());
    client.nodes().withName(emptier).edit(n -> new NodeBuilder(n).editMetadata().addToLabels(zoneKey, "b").endMetadata().build());
    UnaryOperator<PodBuilder> spread = p -> p.editMetadata().addToLabels("app", "web").endMetadata().editSpec()
        .addNewTopologySpreadConstraint().withMaxSkew(1).withTopologyKey(zoneKey).withWhenUnsatisfiable("DoNotSchedule")
        .withNewLabelSelector().addToMatchLabels("app", "web").endLabelSelector().endTopologySpreadConstraint().endSpec();
    for (int i = 1; i <= 4; i++) {
      podOn(client, ns, "crowded-" + i, crowded, spread);
    }
    podOn(client, ns, "alone", emptier, spread);
    try (RunningService service = RunningService.start(server, policy("balance", "RemovePodsViolatingTopologySpreadConstraint", ns))) {
      // 4 and 1: a pass moves one pod (average 2.5), the next one more (3 and 1); 2 and 1 is within maxSkew 1.
      java.util.function.Supplier<Long> onCrowded =
          () -> client.pods().inNamespace(ns).list().getItems().stream().filter(p -> p.getSpec().getNodeName().equals(crowded)).count();
      await().atMost(Duration.ofSeconds(30)).until(() -> onCrowded.get() == 2);
      await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10)).until(() -> onCrowded.get() == 2);
      assertThat(client.pods().inNamespace(ns).withName("alone").get()).isNotNull();
      assertThat(service.get("/api/v1/decisions")).contains("\"strategy\":\"RemovePodsViolatingTopologySpreadConstraint\"",
          "topology " + zoneKey + "=a has 4 pods of app=web, " + zoneKey + "=b has 1; maxSkew 1 (DoNotSchedule)");
    }
  }

  /** Koordinator's NodeMetric: usage is systemUsage plus the pods' usage, measured at {@code updateTime}. */
  private static void nodeMetric(KubernetesClient client, String node, Instant at, String systemCpu, Map<String, String> podCpu, String ns) {
    var api = client.genericKubernetesResources("slo.koordinator.sh/v1alpha1", "NodeMetric");
    GenericKubernetesResource created = api.resource(new GenericKubernetesResourceBuilder().withApiVersion("slo.koordinator.sh/v1alpha1")
        .withKind("NodeMetric").withNewMetadata().withName(node).endMetadata().build()).create();
    created.setAdditionalProperty("status", Map.of(
        "updateTime", at.toString(),
        "nodeMetric", Map.of("systemUsage", Map.of("resources", Map.of("cpu", systemCpu, "memory", "1Gi"))),
        "podsMetric", podCpu.entrySet().stream().map(e -> Map.of("namespace", ns, "name", e.getKey(),
            "podUsage", Map.of("resources", Map.of("cpu", e.getValue(), "memory", "256Mi")))).toList()));
    api.resource(created).updateStatus();
  }

  @Test
  void lowNodeLoadMovesPodsOffTheNodeItsNodeMetricSaysIsHot(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    try (InputStream crd = BalanceIT.class.getResourceAsStream("/crds/nodemetrics.slo.koordinator.sh.yaml")) {
      client.load(crd).items().forEach(o -> client.resource(o).fieldManager("podsweeper-balance-it").forceConflicts().serverSideApply());
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> client.getApiResources("slo.koordinator.sh/v1alpha1") != null);
    String ns = server.newNamespace("load");
    String hot = readyNode(client, "hot", false);
    String cold = readyNode(client, "cold", false);
    String stale = readyNode(client, "stale", false);
    for (String pod : List.of("hot-1", "hot-2")) {
      podOn(client, ns, pod, hot);
    }
    podOn(client, ns, "cold-1", cold);
    podOn(client, ns, "stale-1", stale);
    // 4 cores each. hot: 200m + 2000m + 1200m = 85%; cold: 5%; stale would be 95%, but measured 10 minutes ago.
    nodeMetric(client, hot, Instant.now(), "200m", Map.of("hot-1", "2", "hot-2", "1200m"), ns);
    nodeMetric(client, cold, Instant.now(), "200m", Map.of(), ns);
    nodeMetric(client, stale, Instant.now().minus(Duration.ofMinutes(10)), "3800m", Map.of("stale-1", "3"), ns);
    String policy = """
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerConfiguration
        deschedulingInterval: 2s
        profiles:
          - name: koord-descheduler
            plugins:
              balance: {enabled: [{name: LowNodeLoad}]}
            pluginConfig:
              # Each test pod is its ReplicaSet's only one, which Koordinator's expected-replicas check would keep.
              - name: MigrationController
                args: {skipCheckExpectedReplicas: true}
              - name: LowNodeLoad
                args:
                  evictableNamespaces: {include: [%s]}
                  lowThresholds: {cpu: 30, memory: 60}
                  highThresholds: {cpu: 70, memory: 80}
                  anomalyCondition: {consecutiveAbnormalities: 1}
        """.formatted(ns);
    try (RunningService service = RunningService.start(server, policy)) {
      // The largest measured pod takes hot to 35%, below 70%: one pod goes, from hot only.
      await().atMost(Duration.ofSeconds(20)).until(() -> client.pods().inNamespace(ns).withName("hot-1").get() == null);
      assertThat(service.get("/api/v1/decisions")).contains("\"strategy\":\"LowNodeLoad\"")
          .contains("node " + hot + " is overloaded (cpu 85% > 70%, memory");
      await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> List.of("hot-2", "cold-1", "stale-1").stream()
          .allMatch(stays -> client.pods().inNamespace(ns).withName(stays).get() != null));
    } finally {
      for (String node : List.of(hot, cold, stale)) {
        client.genericKubernetesResources("slo.koordinator.sh/v1alpha1", "NodeMetric").withName(node).delete();
      }
    }
  }

  /** A metrics.k8s.io stand-in object (the CRDs of /crds/metrics.k8s.io.yaml), measured now. */
  private static void metrics(KubernetesClient client, String kind, String ns, String name, Map<String, Object> fields) {
    GenericKubernetesResource r = new GenericKubernetesResourceBuilder().withApiVersion("metrics.k8s.io/v1beta1").withKind(kind)
        .withNewMetadata().withName(name).withNamespace(ns).endMetadata().build();
    r.setAdditionalProperty("timestamp", Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString());
    r.setAdditionalProperty("window", "20s");
    fields.forEach(r::setAdditionalProperty);
    var api = client.genericKubernetesResources("metrics.k8s.io/v1beta1", kind);
    (ns == null ? api.resource(r) : api.inNamespace(ns).resource(r)).create();
  }

  /** The descheduler's LowNodeUtilization with metricsUtilization: node and pod usage from metrics.k8s.io, not requests. */
  @Test
  void lowNodeUtilizationWithMetricsUtilizationMovesPodsOffTheNodeMetricsServerSaysIsHot(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    // The source is found by what the server serves: Koordinator's NodeMetric (another test's CRD) would come first.
    client.apiextensions().v1().customResourceDefinitions().withName("nodemetrics.slo.koordinator.sh").delete();
    List<io.fabric8.kubernetes.api.model.HasMetadata> crds;
    try (InputStream in = BalanceIT.class.getResourceAsStream("/crds/metrics.k8s.io.yaml")) {
      crds = client.load(in).items();
    }
    crds.forEach(crd -> client.resource(crd).fieldManager("podsweeper-balance-it").forceConflicts().serverSideApply());
    await().atMost(Duration.ofSeconds(20)).until(() -> client.getApiResources("slo.koordinator.sh/v1alpha1") == null
        && client.getApiResources("metrics.k8s.io/v1beta1") != null);
    String ns = server.newNamespace("metrics");
    String hot = readyNode(client, "hot", false);
    String cold = readyNode(client, "cold", false);
    podOn(client, ns, "hot-1", hot);
    podOn(client, ns, "hot-2", hot);
    // 4 cores each: hot 85%, cold 5%. The pods request nothing, so by requests both nodes are idle.
    metrics(client, "NodeMetrics", null, hot, Map.of("usage", Map.of("cpu", "3400m", "memory", "2Gi")));
    metrics(client, "NodeMetrics", null, cold, Map.of("usage", Map.of("cpu", "200m", "memory", "1Gi")));
    metrics(client, "PodMetrics", ns, "hot-1", Map.of("containers", List.of(Map.of("name", "main", "usage", Map.of("cpu", "2", "memory", "512Mi")))));
    metrics(client, "PodMetrics", ns, "hot-2", Map.of("containers", List.of(Map.of("name", "main", "usage", Map.of("cpu", "1200m", "memory", "512Mi")))));
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        fullPassInterval: 2s
        nodeSelector: "kubernetes.io/hostname in (%s, %s)"
        profiles:
          - name: measured
            pluginConfig:
              - name: LowNodeUtilization
                args: {thresholds: {cpu: 30}, targetThresholds: {cpu: 70}, metricsUtilization: {source: KubernetesMetrics}}
            plugins:
              balance: {enabled: [LowNodeUtilization]}
        """.formatted(hot, cold);
    try (RunningService service = RunningService.start(server, policy)) {
      // hot-1 (2 cores) takes hot to 35%, below 70%: one pod goes.
      await().atMost(Duration.ofSeconds(20)).until(() -> client.pods().inNamespace(ns).withName("hot-1").get() == null);
      assertThat(service.get("/api/v1/decisions")).contains("\"strategy\":\"LowNodeUtilization\"")
          .contains("node " + hot + " is overutilized (cpu 85% > 70%; measured by metrics.k8s.io");
      await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> client.pods().inNamespace(ns).withName("hot-2").get() != null);
    } finally {
      crds.forEach(crd -> client.resource(crd).delete());
    }
  }

  /**
   * LowNodeUtilization's usage from Prometheus: a stub of Prometheus' query API on loopback answers a recorded vector
   * (hot 85%, cold 5%) only to the bearer token of the policy's Secret; one pod leaves hot per pass, as upstream,
   * and none once the answer says hot is no longer busy.
   */
  @Test
  void lowNodeUtilizationWithPrometheusMovesOnePodOffTheNodeItsQuerySaysIsHot(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("prom");
    client.secrets().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.SecretBuilder().withNewMetadata().withName("prom-token")
        .endMetadata().addToStringData("prometheusAuthToken", "s3cret").build()).create();
    String hot = readyNode(client, "hot", false);
    String cold = readyNode(client, "cold", false);
    podOn(client, ns, "hot-1", hot);
    podOn(client, ns, "hot-2", hot);
    // The first answer: hot at 85%; every later one: hot at 40%, below the target.
    String sample = "{\"metric\":{\"instance\":\"%s\"},\"value\":[1,\"%s\"]}";
    String firstAnswer = String.format(sample, hot, "0.85") + "," + String.format(sample, cold, "0.05");
    String laterAnswers = String.format(sample, hot, "0.40") + "," + String.format(sample, cold, "0.05");
    List<String> queries = new java.util.concurrent.CopyOnWriteArrayList<>();
    com.sun.net.httpserver.HttpServer prometheus = com.sun.net.httpserver.HttpServer.create(
        new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
    prometheus.createContext("/api/v1/query", exchange -> {
      boolean authorized = "Bearer s3cret".equals(exchange.getRequestHeaders().getFirst("Authorization"));
      queries.add(exchange.getRequestURI().getQuery() + (authorized ? "" : " (unauthorized)"));
      byte[] body = (authorized ? "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[" + (queries.size() == 1 ? firstAnswer : laterAnswers) + "]}}"
          : "{\"status\":\"error\",\"error\":\"unauthorized\"}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(authorized ? 200 : 401, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    prometheus.start();
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        fullPassInterval: 2s
        # Both of the namespace's pods may go: what holds the second back must be Prometheus' next answer.
        guard: {maxNamespaceShare: 1.0}
        nodeSelector: "kubernetes.io/hostname in (%s, %s)"
        metricsProviders:
          - source: Prometheus
            prometheus: {url: "http://127.0.0.1:%d", authToken: {secretReference: {namespace: %s, name: prom-token}}}
        profiles:
          - name: queried
            pluginConfig:
              - name: LowNodeUtilization
                args:
                  thresholds: {MetricResource: 30}
                  targetThresholds: {MetricResource: 70}
                  metricsUtilization: {source: Prometheus, prometheus: {query: "instance:node_cpu:rate:sum"}}
            plugins:
              balance: {enabled: [LowNodeUtilization]}
        """.formatted(hot, cold, prometheus.getAddress().getPort(), ns);
    try (RunningService service = RunningService.start(server, policy)) {
      await().atMost(Duration.ofSeconds(20)).until(() -> server.removalRequests(ns).size() == 1);
      assertThat(service.get("/api/v1/decisions")).contains("\"strategy\":\"LowNodeUtilization\"")
          .contains("node " + hot + " is overutilized (MetricResource 85% > 70%; measured by Prometheus: instance:node_cpu:rate:sum)");
      assertThat(queries).first().isEqualTo("query=instance:node_cpu:rate:sum");
      // Every later pass asks again, and hears hot is at 40%: the other pod stays.
      await().during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(8)).until(() -> server.removalRequests(ns).size() == 1);
      assertThat(queries).hasSizeGreaterThanOrEqualTo(2).noneMatch(q -> q.endsWith("(unauthorized)"));
    } finally {
      prometheus.stop(0);
    }
  }
}
