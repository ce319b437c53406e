package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.app.Service;
import io.podsweeper.kube.Leadership;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.Manifests;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Events as people read them with kubectl describe: on the object concerned, and one per persisting condition. Written
 * as the manifests' ServiceAccount, with exactly the permissions manifests/rbac.yaml gives it.
 */
@ExtendWith(ApiServerExtension.class)
class EventsIT {
  @BeforeAll
  static void applyTheBase(TestApiServer server) throws Exception {
    Manifests.applyBase(server);
  }

  private static String crashloopPolicy(String ns) {
    return """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        # The namespace's one pod is all of its running pods: the guard that would stop that is SafetyIT's subject.
        guard: {maxNamespaceShare: 1.0}
        rules:
          - name: crashloop
            namespaces: {include: [%s]}
            states: [CrashLoopBackOff]
        """.formatted(ns);
  }

  /** Refusals retried at 0, 5 and 15 s (the gate's backoff): one Event, counted three times, naming the budget. */
  @Test
  void refusedEvictionsAreOneEventWithAGrowingCountNamingTheBudget(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("ev-pdb");
    Pod canary = TestPods.create(client, ns, "canary-0", "node-a", Map.of("app", "canary"));
    TestPods.setStatus(client, canary, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 7)));
    TestPods.forbidDisruption(client, ns, "canary");

    try (RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT), crashloopPolicy(ns))) {
      await().atMost(Duration.ofSeconds(40)).untilAsserted(() -> {
        List<Event> refusals = refusals(client, ns);
        assertThat(refusals).hasSize(1);
        assertThat(refusals.get(0).getCount()).isGreaterThanOrEqualTo(3);
      });
      Event refusal = refusals(client, ns).get(0);
      assertThat(refusal.getInvolvedObject().getUid()).isEqualTo(canary.getMetadata().getUid());
      assertThat(refusal.getMessage())
          .isEqualTo("PodLifeTime rule crashloop: eviction refused: PodDisruptionBudget " + ns + "/canary allows no disruption now");
      assertThat(refusal.getLastTimestamp()).isGreaterThan(refusal.getFirstTimestamp());
    }
  }

  /**
   * Warnings before a removal: a Normal Event once the deadline is within warnBefore, once per pod and deadline; a pod
   * protected after its warning is told its removal is off, and stays. As the ServiceAccount, which may only create
   * and patch Events.
   */
  @Test
  void aPodIsWarnedBeforeItGoesAndProtectingItCancels(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("ev-warn");
    Pod kept = TestPods.create(client, ns, "kept-0", "node-a", Map.of("app", "kept"));
    TestPods.setStatus(client, kept, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 7)));
    String policy = crashloopPolicy(ns).replace("states: [CrashLoopBackOff]", "states: [CrashLoopBackOff]\n    maxAge: 60s")
        + "warnBefore: 55s\n";
    Instant deadline = Instant.parse(kept.getMetadata().getCreationTimestamp()).plusSeconds(60);

    try (RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT), policy)) {
      Event warning = await().atMost(Duration.ofSeconds(30)).until(() -> event(client, ns, "PodSweeperRemovalScheduled"), e -> e != null);
      assertThat(warning.getType()).isEqualTo("Normal");
      assertThat(warning.getInvolvedObject().getUid()).isEqualTo(kept.getMetadata().getUid());
      assertThat(warning.getMessage()).startsWith("to be evicted at ").contains("by PodLifeTime rule crashloop: ")
          .endsWith("annotate it podsweeper.io/protect=true to keep it");

      client.pods().inNamespace(ns).withName("kept-0")
          .edit(p -> new PodBuilder(p).editMetadata().addToAnnotations("podsweeper.io/protect", "true").endMetadata().build());
      Event canceled = await().atMost(Duration.ofSeconds(20)).until(() -> event(client, ns, "PodSweeperRemovalCanceled"), e -> e != null);
      assertThat(canceled.getMessage()).startsWith("the eviction announced for ").endsWith("is off: no rule wants it as it is now");
      // Past its deadline it stays, and neither Event was repeated.
      await().atMost(Duration.ofSeconds(90)).until(() -> Instant.now().isAfter(deadline.plusSeconds(5)));
      assertThat(client.pods().inNamespace(ns).withName("kept-0").get().getMetadata().getDeletionTimestamp()).isNull();
      assertThat(event(client, ns, "PodSweeperRemovalScheduled").getCount()).isEqualTo(1);
      assertThat(server.audit()).noneMatch(e -> "eviction".equals(e.subresource()) && ns.equals(e.namespace()));
    }
  }

  private static Event event(KubernetesClient client, String ns, String reason) {
    return client.v1().events().inNamespace(ns).list().getItems().stream().filter(e -> reason.equals(e.getReason())).findFirst().orElse(null);
  }

  /** In the service's own namespace, as deployed: the Event carries the policy ConfigMap's uid (its Role may read it). */
  @Test
  void aRejectedPolicyEditIsAnEventOnThePolicyConfigMap(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient client = server.client();
    Manifests.reinstall(server);
    String ns = server.newNamespace("ev-policy");
    String uid = client.configMaps().inNamespace(Manifests.NAMESPACE).withName(Manifests.POLICY).get().getMetadata().getUid();
    Path file = Files.writeString(dir.resolve("policy.yaml"), crashloopPolicy(ns));
    Service.Options options = Service.Options.local(0).withPolicyFile(file, UnaryOperator.identity(), Duration.ofMillis(200))
        .withControl(Manifests.NAMESPACE, Manifests.CONTROL).withPolicyConfigMap(Manifests.NAMESPACE, Manifests.POLICY)
        .withLeaderElection(new Service.Options.LeaderElection(Manifests.NAMESPACE, "podsweeper-events-it", "replica-ev",
            Leadership.Timing.DEFAULT));

    try (RunningService service = RunningService.start(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT),
        Files.readString(file), options)) {
      Files.writeString(file, "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules: [{name: x, states: [EventsItState]}]\n");
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(client.v1().events().inNamespace(Manifests.NAMESPACE).list().getItems())
          .filteredOn(e -> "PodSweeperPolicyRejected".equals(e.getReason()) && e.getMessage().contains("EventsItState"))
          .singleElement()
          .satisfies(e -> {
            assertThat(e.getInvolvedObject().getKind()).isEqualTo("ConfigMap");
            assertThat(e.getInvolvedObject().getName()).isEqualTo(Manifests.POLICY);
            assertThat(e.getInvolvedObject().getUid()).isEqualTo(uid);
            assertThat(e.getType()).isEqualTo("Warning");
            // Both replicas record it: each Event names its replica (issue 41), as kubectl describe shows it (From).
            assertThat(e.getReportingInstance()).isEqualTo("replica-ev");
            assertThat(e.getSource().getHost()).isEqualTo("replica-ev");
            assertThat(e.getMessage()).contains("the last good policy keeps running").contains("unknown state \"EventsItState\"");
          }));
    }
  }

  private static List<Event> refusals(KubernetesClient client, String ns) {
    return client.v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> "PodSweeperEvictionRefused".equals(e.getReason())).toList();
  }
}
