package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.app.Service;
import io.podsweeper.testing.ApiServerExtension;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-pod lifetimes on a real API server: an annotation added to a running pod is an ordinary informer event, so the
 * pod is removed at its TTL by a timer (the audit log is the witness); removed before the deadline, it is not.
 */
@ExtendWith(ApiServerExtension.class)
class PodTtlIT {
  /** How far ahead of the annotation the deadline lies: long enough to see nothing happen before it. */
  private static final Duration LEAD = Duration.ofSeconds(6);

  @Test
  void anAnnotatedPodGoesAtItsTtlAndOneWhoseAnnotationIsRemovedStays(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("ttl");
    Pod annotated = running(client, ns, "annotated");
    Pod changedItsMind = running(client, ns, "changed-its-mind");
    Pod garbled = running(client, ns, "garbled");
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        fullPassInterval: 1h
        guard: {maxNamespaceShare: 1.0}
        rules:
          - {name: ttl, namespaces: {include: [%s]}, ttlFrom: [podsweeper.io]}
        """.formatted(ns);
    try (RunningService service = RunningService.start(server, policy)) {
      // Nothing is due before the annotations: the rule removes only pods with a lifetime written on them.
      Thread.sleep(1000);
      assertThat(server.removalRequests(ns)).isEmpty();

      Instant deadline = annotate(client, annotated);
      Instant otherDeadline = annotate(client, changedItsMind);
      client.pods().inNamespace(ns).withName("garbled")
          .edit(p -> new PodBuilder(p).editMetadata().addToAnnotations("podsweeper.io/ttl", "soon").endMetadata().build());
      Thread.sleep(Duration.between(Instant.now(), otherDeadline).minusSeconds(3).toMillis());
      client.pods().inNamespace(ns).withName("changed-its-mind")
          .edit(p -> new PodBuilder(p).editMetadata().removeFromAnnotations("podsweeper.io/ttl").endMetadata().build());

      await().atMost(LEAD.plusSeconds(5)).until(() -> !server.removalRequests(ns).isEmpty());
      List<TestApiServer.AuditEvent> removals = server.removalRequests(ns);
      assertThat(removals).singleElement().satisfies(r -> {
        assertThat(r.name()).isEqualTo("annotated");
        assertThat(Duration.between(deadline, r.received()).abs()).isLessThan(Duration.ofSeconds(1));
      });

      // The unparsable value: a Warning Event on the pod, counted once, and the pod stays.
      await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(client.v1().events().inNamespace(ns).list().getItems())
          .anySatisfy(e -> {
            assertThat(e.getReason()).isEqualTo("PodSweeperInvalidLifetime");
            assertThat(e.getType()).isEqualTo("Warning");
            assertThat(e.getInvolvedObject().getUid()).isEqualTo(garbled.getMetadata().getUid());
            assertThat(e.getMessage()).contains("podsweeper.io/ttl: \"soon\" does not parse");
          }));
      assertThat(service.metric("podsweeper_invalid_lifetimes_total", "key=\"podsweeper.io/ttl\"")).isEqualTo(1.0);

      Thread.sleep(Math.max(0, Duration.between(Instant.now(), otherDeadline).plusSeconds(2).toMillis()));
      assertThat(server.removalRequests(ns)).extracting(TestApiServer.AuditEvent::name).containsExactly("annotated");
      assertThat(client.pods().inNamespace(ns).withName("changed-its-mind").get().getMetadata().getDeletionTimestamp()).isNull();
      assertThat(client.pods().inNamespace(ns).withName("garbled").get().getMetadata().getDeletionTimestamp()).isNull();
    }
  }

  /**
   * One pod's absurd lifetime ({@code expires: +999999999-12-31T23:59:59Z}, which Java's parser takes) must stop
   * nothing else. A reload brings pods of another namespace under a rule while that pod is cached: they are removed at
   * their deadlines. (Before, the arithmetic on that deadline overflowed, and the reload's re-evaluation, every full pass
   * after it and that pod's events threw: the other namespace's pods were never removed.)
   */
  @Test
  void aPoisonedLifetimeInOneNamespaceStopsNothingElse(TestApiServer server, @TempDir Path dir) throws Exception {
    KubernetesClient client = server.client();
    String poisoned = server.newNamespace("poisoned");
    String other = server.newNamespace("ttl-other");
    String rule = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        fullPassInterval: 2s
        guard: {maxNamespaceShare: 1.0, maxClusterShare: 1.0}
        rules:
          - {name: ttl, namespaces: {include: [%s]}, ttlFrom: [podsweeper.io]}
        """;
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, rule.formatted(poisoned));
    try (RunningService service = RunningService.start(server, rule.formatted(poisoned),
        Service.Options.local(0).withPolicyFile(file, UnaryOperator.identity(), Duration.ofMillis(200)))) {
      running(client, poisoned, "poison");
      client.pods().inNamespace(poisoned).withName("poison").edit(p -> new PodBuilder(p).editMetadata()
          .addToAnnotations("podsweeper.io/expires", "+999999999-12-31T23:59:59Z").endMetadata().build());
      Map<String, Instant> deadlines = new java.util.HashMap<>();
      for (int i = 0; i < 10; i++) {
        deadlines.put("due-" + i, annotate(client, running(client, other, "due-" + i)));
      }
      Thread.sleep(1000);
      Files.writeString(file, rule.formatted(poisoned + ", " + other));

      await().atMost(LEAD.plusSeconds(10)).until(() -> server.removalRequests(other).size() == 10);
      assertThat(server.removalRequests(other)).as("none before its deadline")
          .allSatisfy(r -> assertThat(r.received()).isAfter(deadlines.get(r.name()).minusMillis(500)));
      assertThat(client.pods().inNamespace(poisoned).withName("poison").get().getMetadata().getDeletionTimestamp()).isNull();
      assertThat(service.metric("podsweeper_invalid_lifetimes_total", "key=\"podsweeper.io/expires\"")).isEqualTo(1.0);
    }
  }

  private static Pod running(KubernetesClient client, String ns, String name) {
    Pod pod = TestPods.create(client, ns, name, "node-a", Map.of());
    return TestPods.setStatus(client, pod, "Running", null, List.of());
  }

  /** Writes a TTL that runs out {@link #LEAD} from now (whole seconds from creation); returns the deadline. */
  private static Instant annotate(KubernetesClient client, Pod pod) {
    Instant created = Instant.parse(pod.getMetadata().getCreationTimestamp());
    long ttl = Duration.between(created, Instant.now().plus(LEAD)).toSeconds() + 1;
    client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
        .edit(p -> new PodBuilder(p).editMetadata().addToAnnotations("podsweeper.io/ttl", ttl + "s").endMetadata().build());
    return created.plusSeconds(ttl);
  }
}
