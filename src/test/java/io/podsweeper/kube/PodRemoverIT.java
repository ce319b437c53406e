package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Removal requests against the real API server: preconditions, eviction version, outcomes. */
@ExtendWith(ApiServerExtension.class)
class PodRemoverIT {

  @Test
  void discoversTheEvictionVersionTheServerServes(TestApiServer server) {
    try (KubeClients clients = KubeClients.of(server.config())) {
      PodRemover remover = remover(clients);
      // Kubernetes 1.20 serves pods/eviction only as policy/v1beta1; a policy/v1 body would get a 400.
      assertThat(remover.evictionApiVersion()).isEqualTo("policy/v1beta1");
    }
  }

  @Test
  void preconditionsProtectARecreatedOrChangedPod(TestApiServer server) {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("remover");
    Pod original = failed(client, ns, "job");
    Decision stale = decision(original, Action.DELETE);
    client.pods().inNamespace(ns).withName("job").withGracePeriod(0).delete();
    Pod recreated = failed(client, ns, "job");

    try (KubeClients clients = KubeClients.of(server.config())) {
      PodRemover remover = remover(clients);
      RequestResult result = remover.remove(stale, false);
      assertThat(result.outcome()).isEqualTo(RequestResult.Outcome.CONFLICT);
      assertThat(client.pods().inNamespace(ns).withName("job").get().getMetadata().getUid())
          .isEqualTo(recreated.getMetadata().getUid());

      Decision beforeChange = decision(recreated, Action.DELETE);
      client.pods().inNamespace(ns).withName("job").edit(p -> {
        p.getMetadata().getLabels().put("changed", "yes");
        return p;
      });
      assertThat(remover.remove(beforeChange, false).outcome()).isEqualTo(RequestResult.Outcome.CONFLICT);
      assertThat(client.pods().inNamespace(ns).withName("job").get()).isNotNull();

      Pod current = client.pods().inNamespace(ns).withName("job").get();
      assertThat(remover.remove(decision(current, Action.DELETE), false).outcome()).isEqualTo(RequestResult.Outcome.REMOVED);
      assertThat(client.pods().inNamespace(ns).withName("job").get()).isNull();
      assertThat(remover.remove(decision(current, Action.DELETE), false).outcome()).isEqualTo(RequestResult.Outcome.GONE);
    }
  }

  @Test
  void evictionCarriesPreconditionsToo(TestApiServer server) {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("remover-evict");
    Pod pod = TestPods.create(client, ns, "web", "node-a", Map.of("app", "web"));
    Pod running = TestPods.setStatus(client, pod, "Running", null, List.of(TestPods.waiting("CrashLoopBackOff", 2)));
    Decision stale = decision(pod, Action.EVICT);
    try (KubeClients clients = KubeClients.of(server.config())) {
      PodRemover remover = remover(clients);
      assertThat(remover.remove(stale, false).outcome()).isEqualTo(RequestResult.Outcome.CONFLICT);
      assertThat(client.pods().inNamespace(ns).withName("web").get().getMetadata().getDeletionTimestamp()).isNull();
      assertThat(remover.remove(decision(running, Action.EVICT), false).outcome()).isEqualTo(RequestResult.Outcome.REMOVED);
    }
  }

  @Test
  void aServerSideDryRunRemovesNothingAndMeetsThePodDisruptionBudget(TestApiServer server) {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("remover-dry");
    Pod guarded = TestPods.setStatus(client, TestPods.create(client, ns, "guarded", "node-a", Map.of("app", "guarded")), "Running", null,
        List.of(TestPods.waiting("CrashLoopBackOff", 2)));
    TestPods.forbidDisruption(client, ns, "guarded");
    Pod free = TestPods.setStatus(client, TestPods.create(client, ns, "free", "node-a", Map.of("app", "free")), "Running", null,
        List.of(TestPods.waiting("CrashLoopBackOff", 2)));
    Pod job = failed(client, ns, "job");
    try (KubeClients clients = KubeClients.of(server.config())) {
      PodRemover remover = remover(clients);
      assertThat(remover.remove(decision(guarded, Action.EVICT), true).outcome()).isEqualTo(RequestResult.Outcome.REFUSED);
      assertThat(remover.remove(decision(free, Action.EVICT), true).outcome()).isEqualTo(RequestResult.Outcome.REMOVED);
      assertThat(remover.remove(decision(job, Action.DELETE), true).outcome()).isEqualTo(RequestResult.Outcome.REMOVED);
    }
    assertThat(client.pods().inNamespace(ns).list().getItems()).hasSize(3)
        .allSatisfy(p -> assertThat(p.getMetadata().getDeletionTimestamp()).isNull());
  }

  /** A remover as the service makes it: on a client whose requests the HTTP layer does not retry. */
  private static PodRemover remover(KubeClients clients) {
    return PodRemover.create(clients.unretried(Optional.empty()), OptionalLong::empty);
  }

  private static Pod failed(KubernetesClient client, String ns, String name) {
    Pod pod = TestPods.create(client, ns, name, "node-a", Map.of("app", name));
    return TestPods.setStatus(client, pod, "Failed", null, List.of(TestPods.terminated("Error", 1, Instant.now())));
  }

  private static Decision decision(Pod pod, Action action) {
    return new Decision(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), pod.getMetadata().getUid(),
        pod.getMetadata().getResourceVersion(), "node-a", "PodLifeTime", "test", "test", action, "test", Instant.now(), "");
  }
}
