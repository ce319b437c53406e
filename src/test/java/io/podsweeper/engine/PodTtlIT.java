package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

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
