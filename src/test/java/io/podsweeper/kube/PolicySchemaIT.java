package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.Manifests;
import io.podsweeper.testing.PodCleanupPolicies;
import io.podsweeper.testing.TestApiServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The CRDs' schemas (manifests/crds/) on the real API server: a misspelt field is refused by {@code kubectl apply},
 * and the server itself refuses what it can check without Podsweeper: too many rules, a rule left without an age,
 * values outside their enums and patterns, rails past their ceilings.
 */
@ExtendWith(ApiServerExtension.class)
class PolicySchemaIT {
  private final TestApiServer server;
  private final KubernetesClient client;

  PolicySchemaIT(TestApiServer server, KubernetesClient client) {
    this.server = server;
    this.client = client;
  }

  @BeforeAll
  static void installTheCrds(KubernetesClient client) throws IOException {
    PodCleanupPolicies.installCrds(client);
    // kubectl validates against the OpenAPI the server publishes, which follows a new CRD by a few seconds.
    await().atMost(Duration.ofSeconds(30)).until(() -> client.raw("/openapi/v2").contains("io.podsweeper.v1alpha1.PodCleanupPolicy"));
  }

  /**
   * A misspelt field in a rule is kept, never pruned, even for a client that does not validate: pruned, it would
   * widen the rule; kept, Podsweeper rejects the policy naming it (NamespacedPoliciesIT).
   */
  @Test
  void aMisspeltRuleFieldIsKeptForPodsweeperToRefuseNotPrunedIntoAWiderRule() throws Exception {
    String ns = server.newNamespace("schema");
    Path file = Files.createTempFile("typo-", ".yaml");
    Files.writeString(file, policy(ns, "typo", "{name: failed, state: [Failed], maxAgeAfterFinish: 2h}"));
    Manifests.kubectl(server, "apply", "--validate=false", "-f", file.toString());
    assertThat(client.genericKubernetesResources(NamespacedPolicies.NAMESPACED).inNamespace(ns).withName("typo").get()
        .getAdditionalProperties().get("spec").toString()).contains("state=[Failed]");
  }

  @Test
  void theServerRefusesTooManyRulesARuleWithoutAnAgeAndValuesOutsideTheSchema() {
    String ns = server.newNamespace("schema");
    String tooMany = IntStream.range(0, 101).mapToObj(i -> "{name: r" + i + ", maxAge: 2h}").collect(Collectors.joining(", "));
    assertRefused(policy(ns, "too-many", tooMany), "spec.rules in body should have at most 100 items");
    assertRefused(policy(ns, "no-age", "{name: failed, states: [Failed], maxage: 2h}"), "spec.rules.maxAge: Required value");
    assertRefused(policy(ns, "bad-state", "{name: failed, states: [Faild], maxAge: 2h}"), "spec.rules.states: Unsupported value: \"Faild\"");
    assertRefused(policy(ns, "bad-age", "{name: failed, maxAge: 2 hours}"), "spec.rules.maxAge in body should match");
    assertRefused(policy(ns, "other-ns", "{name: failed, maxAge: 2h, namespaces: {include: [kube-system]}}"),
        "spec.rules.namespaces in body should have at most 0 properties");
    assertRefused("""
        apiVersion: podsweeper.io/v1alpha1
        kind: ClusterPodCleanupPolicy
        metadata: {name: schema-test}
        spec: {maxRulesPerPolicy: 500}
        """, "spec.maxRulesPerPolicy in body should be less than or equal to 100");
    assertRefused(policy(ns, "bad-ttl", "{name: ttl, ttlFrom: [janitr]}"), "spec.rules.ttlFrom: Unsupported value: \"janitr\"");
    assertRefused(policy(ns, "empty-match", "{name: m, maxAge: 2h, match: ''}"), "spec.rules.match in body should be at least 1 chars long");
    assertRefused(policy(ns, "bad-ending", "{name: e, states: [Failed], maxAgeAfterFinish: 2h, endedBy: [Shutdown]}"),
        "spec.rules.endedBy: Unsupported value: \"Shutdown\"");
    assertRefused(policy(ns, "bad-evict", "{name: g, maxAge: 2h, evict: [GatedPods]}"), "spec.rules.evict: Unsupported value: \"GatedPods\"");
    client.resource(policy(ns, "fine", "{name: failed, states: [Failed], maxAgeAfterFinish: 2h, keepLast: 3, keepPer: namespace,"
        + " podSelector: {matchExpressions: [{key: app, operator: In, values: [batch]}]}, evict: [BarePods, SchedulingGatedPods]},"
        + " {name: ttl, ttlFrom: [podsweeper.io, janitor, kyverno]}, {name: m, maxAge: 2h, match: \"pod.status.phase == 'Running'\"},"
        + " {name: ended, states: [Failed], maxAgeAfterFinish: 1h, endedBy: [KubeletEviction, NodeShutdown]},"
        + " {name: init, states: [CrashLoopBackOff], maxAge: 2h, includingInitContainers: true}")).create();
  }

  /** A finished-pod budget alone is a policy; its phases are finished ones, named; a policy of neither is refused. */
  @Test
  void theServerTakesABudgetAloneAndRefusesOneWithoutFinishedPhases() {
    String ns = server.newNamespace("schema");
    assertRefused(budget(ns, "running", "{maxPods: 200, phases: [Running]}"), "spec.finishedPodBudget.phases: Unsupported value: \"Running\"");
    assertRefused(budget(ns, "no-phases", "{maxPods: 200}"), "spec.finishedPodBudget.phases: Required value");
    assertRefused(budget(ns, "negative", "{maxPods: -1, phases: [Failed]}"), "spec.finishedPodBudget.maxPods in body should be greater than or equal to 0");
    assertRefused(budget(ns, "neither", null), "spec.rules: Required value");
    client.resource(budget(ns, "fine", "{maxPods: 200, minRetention: 2h, phases: [Failed, Succeeded]}")).create();
    assertThat(client.genericKubernetesResources(NamespacedPolicies.NAMESPACED).inNamespace(ns).withName("fine").get()
        .getAdditionalProperties().get("spec").toString()).contains("maxPods=200", "minRetention=2h", "phases=[Failed, Succeeded]");
  }

  private static String budget(String ns, String name, String budget) {
    return """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodCleanupPolicy
        metadata: {name: %s, namespace: %s}
        spec: {%s}
        """.formatted(name, ns, budget == null ? "" : "finishedPodBudget: " + budget);
  }

  private static String policy(String ns, String name, String rules) {
    return """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodCleanupPolicy
        metadata: {name: %s, namespace: %s}
        spec:
          rules: [%s]
        """.formatted(name, ns, rules);
  }

  private void assertRefused(String object, String message) {
    assertThatThrownBy(() -> client.resource(object).create())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422))
        .hasMessageContaining(message);
  }
}
