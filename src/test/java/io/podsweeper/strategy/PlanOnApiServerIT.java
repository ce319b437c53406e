package io.podsweeper.strategy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.KubernetesListBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Real pods in a real API server, read back as a snapshot in the List format kubectl prints, then planned on. */
@ExtendWith(ApiServerExtension.class)
class PlanOnApiServerIT {

  @Test
  void plansOnPodsReadBackFromTheApiServer(TestApiServer server) {
    KubernetesClient client = server.client();
    String ci = server.newNamespace("ci-plan");
    String web = server.newNamespace("web-plan", Map.of("team", "web"));
    // The server sets creationTimestamp; finish times are written relative to it, as a kubelet would.
    Instant t0 = Instant.now().truncatedTo(ChronoUnit.SECONDS);

    Pod oldFailed = TestPods.create(client, ci, "build-old", "node-a", Map.of());
    TestPods.setStatus(client, oldFailed, "Failed", null, List.of(TestPods.terminated("Error", 1, t0.plusSeconds(5))));
    Pod youngFailed = TestPods.create(client, ci, "build-young", "node-a", Map.of());
    TestPods.setStatus(client, youngFailed, "Failed", null, List.of(TestPods.terminated("Error", 1, t0.plusSeconds(3000))));
    Pod succeeded = TestPods.create(client, ci, "build-ok", "node-a", Map.of());
    TestPods.setStatus(client, succeeded, "Succeeded", null, List.of(TestPods.terminated("Completed", 0, t0.plusSeconds(5))));
    Pod crashing = TestPods.create(client, web, "api-crashing", "node-b", Map.of("app", "api"));
    TestPods.setStatus(client, crashing, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 12)));
    Pod keep = TestPods.create(client, web, "api-keep", "node-b", Map.of("app", "api", "keep", "yes"));
    TestPods.setStatus(client, keep, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 12)));
    TestPods.create(client, web, "never-scheduled", null, Map.of());

    Policy policy = PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules:
          - name: ci-failed
            namespaces: {include: ["ci-plan-*"]}
            states: [Failed]
            maxAgeAfterFinish: 1h
          - name: crashloop
            namespaceSelector: {matchLabels: {team: web}}
            podSelector: {matchExpressions: [{key: keep, operator: DoesNotExist}]}
            states: [CrashLoopBackOff]
          - name: unscheduled
            namespaces: {include: ["web-plan-*"]}
            states: [Pending]
            maxAge: 2h
        """, "inline");

    String listYaml = Serialization.asYaml(new KubernetesListBuilder()
        .addToItems(client.pods().inNamespace(ci).list().getItems().toArray(new Pod[0]))
        .addToItems(client.pods().inNamespace(web).list().getItems().toArray(new Pod[0]))
        .addToItems(client.namespaces().list().getItems().toArray(new io.fabric8.kubernetes.api.model.Namespace[0]))
        .build());
    ClusterSnapshot snapshot = SnapshotReader.parse(listYaml, "apiserver");

    List<Decision> inAnHour = new PolicyEvaluator(policy).plan(snapshot, t0.plusSeconds(3700));
    assertThat(inAnHour).extracting(d -> d.namespace() + "/" + d.name() + " " + d.rule() + " " + d.action().wireName())
        .containsExactlyInAnyOrder(ci + "/build-old ci-failed delete", web + "/api-crashing crashloop evict");
    assertThat(inAnHour).allSatisfy(d -> assertThat(d.uid()).isNotEmpty());

    List<Decision> later = new PolicyEvaluator(policy).plan(snapshot, t0.plusSeconds(7300));
    assertThat(later).extracting(Decision::name)
        .containsExactlyInAnyOrder("build-old", "build-young", "api-crashing", "never-scheduled");
  }
}
