package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.Manifests;
import io.podsweeper.testing.PodCleanupPolicies;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import io.podsweeper.testing.WatchGrant;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * PodCleanupPolicy and ClusterPodCleanupPolicy on the real API server, with the CRDs from manifests/crds/: a team's
 * policy acts in its own namespace only, changes apply within seconds, and a policy beyond the admin's guard rails is
 * rejected in its status and removes nothing.
 */
@ExtendWith({ApiServerExtension.class, PodCleanupPolicies.class})
class NamespacedPoliciesIT {
  private static final Duration SECONDS = Duration.ofSeconds(10);
  /** The file policy: a rule for a namespace that does not exist, so only the namespaced policies act. */
  private static final String FILE_POLICY = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      rules:
        - name: nothing
          namespaces: {include: [no-such-namespace]}
          states: [CrashLoopBackOff]
          maxAge: 1h
      """;

  private final KubernetesClient client;

  NamespacedPoliciesIT(KubernetesClient client) {
    this.client = client;
  }

  @Test
  void aTeamPolicyRemovesItsOwnNamespacesPodsOnlyAndAChangeAppliesWithinSeconds(TestApiServer server) throws Exception {
    String a = server.newNamespace("team-a");
    String b = server.newNamespace("team-b");
    finished(a, "done");
    finished(b, "done");
    clusterPolicy("minMaxAge: 30m\n  allowTerminated: true");
    try (RunningService service = RunningService.start(server, FILE_POLICY)) {
      apply(a, "cleanup", "states: [Failed]\n      podSelector: {matchLabels: {app: batch}}\n      maxAgeAfterFinish: 3h");
      await().atMost(SECONDS).untilAsserted(() -> assertThat(status(policy(a, "cleanup")))
          .containsEntry("phase", "Accepted").containsEntry("observedGeneration", 1));
      assertThat(condition(policy(a, "cleanup"))).containsEntry("reason", "Accepted").containsEntry("status", "True");
      assertThat(status(client.genericKubernetesResources(NamespacedPolicies.CLUSTER).withName("default")))
          .containsEntry("phase", "Accepted");
      // Finished 2h ago, the rule allows 3h: not yet.
      Thread.sleep(1500);
      assertThat(exists(a, "done")).isTrue();

      // The team shortens its retention: A's pod goes within seconds; B's, matching the same rule, stays.
      apply(a, "cleanup", "states: [Failed]\n      podSelector: {matchLabels: {app: batch}}\n      maxAgeAfterFinish: 1h");
      await().atMost(SECONDS).until(() -> !exists(a, "done"));
      await().atMost(SECONDS).untilAsserted(() -> assertThat(status(policy(a, "cleanup"))).containsEntry("observedGeneration", 2));
      Thread.sleep(1500);
      assertThat(exists(b, "done")).isTrue();
      assertThat(service.get("/api/v1/decisions")).contains("cleanup/failed").doesNotContain(b);
      // The policy's status counts what it removed.
      await().atMost(SECONDS).untilAsserted(() -> assertThat(status(policy(a, "cleanup"))).containsEntry("removals", 1)
          .containsKey("lastRemoval"));
      // A removal after that count was written is written too (a write is scheduled by the first removal after the last).
      finished(a, "done-later");
      await().atMost(SECONDS).until(() -> !exists(a, "done-later"));
      await().atMost(SECONDS).untilAsserted(() -> assertThat(status(policy(a, "cleanup"))).containsEntry("removals", 2));
    }
  }

  @Test
  void aTenantsCelRuleIsAcceptedAndActsInItsNamespaceOnlyAndACostlyOneIsRejected(TestApiServer server) throws Exception {
    String a = server.newNamespace("team-cel");
    String b = server.newNamespace("team-other");
    for (String ns : List.of(a, b)) {
      for (String reason : List.of("OOMKilled", "Error")) {
        Pod pod = TestPods.create(client, ns, reason.toLowerCase(), "node-a", Map.of("app", "batch"));
        TestPods.setStatus(client, pod, "Failed", null, List.of(TestPods.terminated(reason, 137, Instant.now().minus(Duration.ofHours(2)))));
      }
    }
    clusterPolicy("minMaxAge: 30m\n  allowTerminated: true");
    String oomKilled = "match: \"pod.status.containerStatuses.exists(c, c.state.terminated.reason == 'OOMKilled')\"";
    try (RunningService service = RunningService.start(server, FILE_POLICY)) {
      apply(a, "cel", "states: [Failed]\n      maxAgeAfterFinish: 1h\n      " + oomKilled);
      await().atMost(SECONDS).untilAsserted(() -> assertThat(status(policy(a, "cel"))).containsEntry("phase", "Accepted"));
      await().atMost(SECONDS).until(() -> !exists(a, "oomkilled"));
      Thread.sleep(1500);
      assertThat(exists(a, "error")).as("the expression is false for it").isTrue();
      assertThat(exists(b, "oomkilled")).as("another namespace's pod").isTrue();

      String nested = "pod.status.containerStatuses.exists(x, pod.status.containerStatuses.exists(y, "
          + "pod.status.conditions.exists(z, x.name == y.name && z.type == x.name)))";
      apply(a, "costly", "states: [Failed]\n      maxAgeAfterFinish: 1h\n      match: \"" + nested + "\"");
      await().atMost(SECONDS).untilAsserted(() -> assertThat(status(policy(a, "costly"))).containsEntry("phase", "Rejected"));
      assertThat(condition(policy(a, "costly"))).containsEntry("reason", "ExceedsGuardRails");
      assertThat((String) condition(policy(a, "costly")).get("message"))
          .startsWith("spec.rules[0].match: estimated cost").contains("over the limit 10000");
      assertThat(exists(a, "error")).isTrue();
    }
  }

  @Test
  void aPolicyBeyondTheGuardRailsIsRejectedAndRemovesNothingUntilTheAdminAllowsIt(TestApiServer server) throws Exception {
    String ns = server.newNamespace("team-c");
    finished(ns, "done");
    clusterPolicy("minMaxAge: 1h\n  allowTerminated: false");
    try (RunningService service = RunningService.start(server, FILE_POLICY)) {
      apply(ns, "too-short", "states: [Failed]\n      maxAgeAfterFinish: 1m");
      apply(ns, "terminal", "states: [Failed]\n      maxAgeAfterFinish: 1h");
      await().atMost(SECONDS).untilAsserted(() -> {
        assertThat(status(policy(ns, "too-short"))).containsEntry("phase", "Rejected");
        assertThat(status(policy(ns, "terminal"))).containsEntry("phase", "Rejected");
      });
      assertThat(condition(policy(ns, "too-short"))).containsEntry("status", "False").containsEntry("reason", "ExceedsGuardRails")
          .containsEntry("message", "spec.rules[0].maxAgeAfterFinish: 1m is shorter than the cluster's minMaxAge 1h");
      assertThat(condition(policy(ns, "terminal"))).containsEntry("reason", "ExceedsGuardRails");
      assertThat((String) condition(policy(ns, "terminal")).get("message"))
          .startsWith("spec.rules[0].states[0]: \"Failed\" is a terminal state").contains("allowTerminated: false");
      Thread.sleep(2000);
      assertThat(exists(ns, "done")).isTrue();
      assertThat(service.get("/api/v1/decisions")).doesNotContain(ns);

      // The admin opens the guard rail: the valid policy is accepted and acts at once; the too-short one stays rejected.
      clusterPolicy("minMaxAge: 1h\n  allowTerminated: true");
      await().atMost(SECONDS).until(() -> !exists(ns, "done"));
      assertThat(status(policy(ns, "terminal"))).containsEntry("phase", "Accepted");
      assertThat(condition(policy(ns, "too-short"))).containsEntry("reason", "ExceedsGuardRails");
    }
  }

  /**
   * What GitOps tools read (kstatus): status.observedGeneration of the spec judged, Ready True while it is in force,
   * and for a rejected spec Ready False with Stalled True (kstatus: Failed), each condition with its observedGeneration;
   * {@code kubectl get} shows Ready in a column.
   */
  @Test
  void gitOpsToolsReadReadyStalledAndObservedGeneration(TestApiServer server) throws Exception {
    String ns = server.newNamespace("team-g");
    clusterPolicy("minMaxAge: 1h\n  allowTerminated: true");
    try (RunningService service = RunningService.start(server, FILE_POLICY)) {
      apply(ns, "cleanup", "states: [Failed]\n      maxAgeAfterFinish: 3h");
      await().atMost(SECONDS).untilAsserted(() -> assertThat(status(policy(ns, "cleanup"))).containsEntry("observedGeneration", 1));
      assertThat(conditions(policy(ns, "cleanup"))).extracting(c -> c.get("type") + "=" + c.get("status") + "@" + c.get("observedGeneration"))
          .containsExactly("Accepted=True@1", "Ready=True@1");
      assertThat(Manifests.kubectl(server, "-n", ns, "get", "podcleanuppolicies", "cleanup").lines().toList())
          .satisfiesExactly(header -> assertThat(header).startsWith("NAME").contains("READY"),
              row -> assertThat(row.split("\\s+")).startsWith("cleanup", "True", "Accepted"));
      assertThat(conditions(client.genericKubernetesResources(NamespacedPolicies.CLUSTER).withName("default")))
          .anySatisfy(c -> assertThat(c).containsEntry("type", "Ready").containsEntry("status", "True"));

      apply(ns, "cleanup", "states: [Failed]\n      maxAgeAfterFinish: 1m");
      await().atMost(SECONDS).untilAsserted(() -> assertThat(status(policy(ns, "cleanup"))).containsEntry("observedGeneration", 2));
      assertThat(policy(ns, "cleanup").get().getMetadata().getGeneration()).isEqualTo(2);
      assertThat(conditions(policy(ns, "cleanup"))).extracting(c -> c.get("type") + "=" + c.get("status") + "@" + c.get("observedGeneration"))
          .containsExactly("Accepted=False@2", "Ready=False@2", "Stalled=True@2");
      assertThat(conditions(policy(ns, "cleanup"))).allSatisfy(c -> assertThat(c).containsEntry("reason", "ExceedsGuardRails"));
      assertThat(Manifests.kubectl(server, "-n", ns, "get", "podcleanuppolicies", "cleanup").lines().skip(1).findFirst().orElseThrow()
          .split("\\s+")).startsWith("cleanup", "False", "Rejected", "ExceedsGuardRails");
    }
  }

  @Test
  void theHourlyCapHoldsNamespacedPoliciesBack(TestApiServer server) throws Exception {
    String ns = server.newNamespace("team-d");
    finished(ns, "first");
    finished(ns, "second");
    clusterPolicy("minMaxAge: 1h\n  allowTerminated: true\n  maxRemovalsPerHourPerNamespace: 1");
    try (RunningService service = RunningService.start(server, FILE_POLICY)) {
      apply(ns, "cleanup", "states: [Failed]\n      maxAgeAfterFinish: 1h");
      await().atMost(SECONDS).until(() -> !exists(ns, "first") || !exists(ns, "second"));
      await().atMost(SECONDS).untilAsserted(() -> assertThat(service.get("/api/v1/decisions"))
          .contains("\"result\":\"limited\"", "(maxRemovalsPerHourPerNamespace 1)"));
      await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> exists(ns, "first") != exists(ns, "second"));
      await().atMost(SECONDS).untilAsserted(() -> assertThat(status(policy(ns, "cleanup"))).containsEntry("removals", 1));
    }
  }

  @Test
  void crdsInstalledAfterStartTakeEffectWithoutARestart(TestApiServer server) throws Exception {
    String ns = server.newNamespace("team-late");
    finished(ns, "done");
    PodCleanupPolicies.crds(client).forEach(crd -> client.resource(crd).delete());
    await().atMost(Duration.ofSeconds(60)).until(() -> PodCleanupPolicies.servedKinds(client) == 0);
    try (RunningService service = RunningService.start(server, FILE_POLICY)) {
      PodCleanupPolicies.installCrds(client);
      clusterPolicy("minMaxAge: 1h\n  allowTerminated: true");
      apply(ns, "cleanup", "states: [Failed]\n      maxAgeAfterFinish: 1h");
      // The service looks for the CRDs again every reload interval (2 s here).
      await().atMost(SECONDS).until(() -> !exists(ns, "done"));
      assertThat(status(policy(ns, "cleanup"))).containsEntry("phase", "Accepted");
    } finally {
      PodCleanupPolicies.installCrds(client);
    }
  }

  /**
   * A team gives its pods longer while this replica's watches are cut off, and its right to watch the policies is
   * taken away so that they cannot come back: the pods are watched again, and under the policy in force before the
   * change the pod comes due, but nothing is sent while the policies are not watched, and once they are, the change
   * is in force and the pod is not due. (Before, the policies' informers resumed their watches, removals never waited
   * for them, and the pod went under the old policy.)
   */
  @Test
  void aTeamsChangeMadeWhileItsPolicyIsNotWatchedIsInForceBeforeAnythingIsRemoved(TestApiServer server) throws Exception {
    String ns = server.newNamespace("team-cut");
    String user = "podsweeper-" + ns;
    WatchGrant grant = new WatchGrant(client, user);
    grant.allow("podcleanuppolicies", true);
    clusterPolicy("minMaxAge: 30m\n  allowTerminated: true");
    Instant created = Instant.now();
    finished(ns, "done"); // finished two hours ago: due 20 s from now under the first policy
    apply(ns, "cleanup", "states: [Failed]\n      podSelector: {matchLabels: {app: batch}}\n      maxAgeAfterFinish: 2h0m20s");
    io.fabric8.kubernetes.client.Config asUser = server.config();
    asUser.setImpersonateUsername(user);
    try (RunningService service = RunningService.start(asUser, FILE_POLICY)) {
      await().atMost(SECONDS).untilAsserted(() -> assertThat(status(policy(ns, "cleanup"))).containsEntry("phase", "Accepted"));
      grant.allow("podcleanuppolicies", false);
      server.cutConnections();
      apply(ns, "cleanup", "states: [Failed]\n      podSelector: {matchLabels: {app: batch}}\n      maxAgeAfterFinish: 24h");

      // Past the old policy's deadline, the pods watched again: nothing sent, and the service says it is not ready.
      Thread.sleep(Math.max(0, Duration.between(Instant.now(), created.plusSeconds(25)).toMillis()));
      assertThat(service.status("/readyz")).isEqualTo(503);
      assertThat(server.removalRequests(ns)).isEmpty();

      grant.allow("podcleanuppolicies", true);
      await().atMost(Duration.ofSeconds(60)).until(() -> service.status("/readyz") == 200);
      Thread.sleep(3000);
      assertThat(server.removalRequests(ns)).as("removals under the policy in force before the team's change").isEmpty();
      assertThat(exists(ns, "done")).isTrue();
    }
  }

  /**
   * Hostile tenants applied while the cluster policy has pods coming due (issue 35): {@code podsweeper.it.hostileTenants}
   * namespaces (10; the benchmark runs 1, 10 and 50, docs/benchmarks.md), each with 20 pods of 100 labels and a
   * 50,000-character image under 5 PodCleanupPolicies of 20 rules with the costliest expressions a tenant's policy may
   * hold, applied while the ordinary namespace's 20 pods are coming due under the cluster's own rule, and the tenants' pods
   * relabelled throughout so that their rules are judged again and again. Each ordinary pod is sent within seconds of its
   * deadline (the audit log's
   * time); the figures are printed for the benchmark.
   */
  @Test
  void hostileTenantsDelayNoOtherNamespacesRemovals(TestApiServer server) throws Exception {
    int tenants = Integer.getInteger("podsweeper.it.hostileTenants", 10);
    String ordinary = server.newNamespace("ordinary");
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        limits: {perSecond: 100}
        rules:
          - name: ordinary
            namespaces: {include: [%s]}
            states: [Failed]
            maxAgeAfterFinish: 2h0m20s
        """.formatted(ordinary);
    clusterPolicy("minMaxAge: 1h\n  allowTerminated: true");
    List<String> hostile = new ArrayList<>();
    Map<String, String> labels = new HashMap<>();
    for (int i = 0; i < 100; i++) {
      labels.put("team.example/label-" + i, "value-" + i);
    }
    for (int t = 0; t < tenants; t++) {
      String ns = server.newNamespace("hostile");
      hostile.add(ns);
      for (int i = 0; i < 20; i++) {
        client.resource(new PodBuilder().withNewMetadata().withName("web-" + i).withNamespace(ns)
            .withLabels(labels).endMetadata().withNewSpec().withNodeName("node-a")
            .addNewContainer().withName("c").withImage("reg.ex/" + "x".repeat(50_000) + ":v1").endContainer().endSpec().build()).create();
      }
    }
    String rules = IntStream.range(0, 20).mapToObj(r -> "  - {name: r" + r + ", maxAge: 2h, match: \""
        + (r % 2 == 0 ? "pod.spec.containers[0].image.matches('^reg[.]ex/.*:v[0-9]+([.][0-9]+)?$')"
            : "pod.metadata.labels.exists(k, k.startsWith('team.example/') && k.endsWith('/owner'))"
                + " || pod.metadata.labels.exists(k, k.contains('legacy'))") + "\"}").collect(Collectors.joining("\n"));
    AtomicBoolean churning = new AtomicBoolean(true);
    try (RunningService service = RunningService.start(server, policy)) {
      Instant start = Instant.now().truncatedTo(ChronoUnit.SECONDS);
      Map<String, Instant> deadlines = new TreeMap<>();
      for (int i = 0; i < 20; i++) {
        // Due 20 s from now, then one every 1.5 s: the hostile tenants come meanwhile.
        Instant finished = start.minus(Duration.ofHours(2)).plusMillis(1500L * i).truncatedTo(ChronoUnit.SECONDS);
        Pod pod = TestPods.create(client, ordinary, "done-" + i, "node-a", Map.of("app", "batch"));
        TestPods.setStatus(client, pod, "Failed", null, List.of(TestPods.terminated("Error", 1, finished)));
        deadlines.put("done-" + i, finished.plus(Duration.ofHours(2)).plusSeconds(20));
      }
      for (String ns : hostile) {
        for (int p = 0; p < 5; p++) {
          client.resource("""
              apiVersion: podsweeper.io/v1alpha1
              kind: PodCleanupPolicy
              metadata: {name: costly-%d, namespace: %s}
              spec:
                rules:
              %s
              """.formatted(p, ns, rules.indent(2))).create();
        }
      }
      Thread churn = new Thread(() -> {
        while (churning.get()) {
          for (String ns : hostile) {
            for (int i = 0; i < 20 && churning.get(); i++) {
              client.pods().inNamespace(ns).withName("web-" + i).edit(p -> new PodBuilder(p)
                  .editMetadata().addToLabels("tick", "t" + System.nanoTime()).endMetadata().build());
            }
          }
        }
      }, "hostile-churn");
      churn.start();
      await().atMost(Duration.ofSeconds(120)).until(() -> server.removalRequests(ordinary).size() >= deadlines.size());
      churning.set(false);
      churn.join();

      List<Double> late = new ArrayList<>();
      for (TestApiServer.AuditEvent e : server.removalRequests(ordinary)) {
        late.add(Duration.between(deadlines.get(e.name()), e.received()).toMillis() / 1000.0);
      }
      Collections.sort(late);
      String metrics = service.get("/metrics");
      double teamCpu = sum(metrics, "podsweeper_team_rules_cpu_seconds_total{");
      System.out.printf("hostile tenants %d: deadline → request p50 %.3f s, p99 %.3f s, max %.3f s; the teams' rules took %.1f CPU-s"
          + " of the evaluation thread in %d s, put off %.0f times%n", tenants, late.get(late.size() / 2),
          late.get((int) Math.ceil(late.size() * 0.99) - 1), late.get(late.size() - 1), teamCpu,
          Duration.between(start, Instant.now()).toSeconds(), sum(metrics, "podsweeper_team_rules_throttled_total{"));
      assertThat(late).hasSize(deadlines.size()).allSatisfy(s -> assertThat(s).isBetween(0.0, 5.0));
      // The tenants were hostile enough to be held to their share.
      assertThat(sum(metrics, "podsweeper_team_rules_throttled_total{namespace=\"" + hostile.get(0) + "\"")).isPositive();
    } finally {
      churning.set(false);
    }
  }

  /** The sum of the samples of {@code prefix} (a metric's name and the start of its labels) in a scrape. */
  private static double sum(String scrape, String prefix) {
    return scrape.lines().filter(l -> l.startsWith(prefix)).mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
  }

  /** A Failed pod labelled app=batch whose container finished two hours ago. */
  private void finished(String ns, String name) {
    Pod pod = TestPods.create(client, ns, name, "node-a", Map.of("app", "batch"));
    TestPods.setStatus(client, pod, "Failed", null, List.of(TestPods.terminated("Error", 1, Instant.now().minus(Duration.ofHours(2)))));
  }

  private boolean exists(String ns, String name) {
    return client.pods().inNamespace(ns).withName(name).get() != null;
  }

  private void clusterPolicy(String spec) {
    PodCleanupPolicies.clusterPolicy(client, spec);
  }

  private void apply(String ns, String name, String rule) {
    PodCleanupPolicies.apply(client, ns, name, rule);
  }

  private Resource<GenericKubernetesResource> policy(String ns, String name) {
    return client.genericKubernetesResources(NamespacedPolicies.NAMESPACED).inNamespace(ns).withName(name);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> status(Resource<GenericKubernetesResource> resource) {
    Object status = resource.get().getAdditionalProperties().get("status");
    return status == null ? Map.of() : (Map<String, Object>) status;
  }

  private static Map<String, Object> condition(Resource<GenericKubernetesResource> resource) {
    return conditions(resource).get(0);
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> conditions(Resource<GenericKubernetesResource> resource) {
    return (List<Map<String, Object>>) status(resource).get("conditions");
  }
}
