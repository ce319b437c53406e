package io.podsweeper.removal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.podsweeper.kube.GuardWindowConfigMap;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.safety.GuardWindowStore;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import io.podsweeper.testing.AnswerLostStore;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.Manifests;
import io.podsweeper.testing.TestApiServer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The blast-radius guard's window in its ConfigMap, written as the manifests' ServiceAccount, by two leaders at the
 * worst moment: the old one's write is on its way when the new one takes over. The API server's audit log witnesses
 * that the late write was refused (409) and the ConfigMap keeps the new leader's window.
 */
@ExtendWith(ApiServerExtension.class)
class GuardWindowIT {
  private static final String NS = Manifests.NAMESPACE;
  private static final String NAME = Manifests.CONTROL + "-guard";

  @Test
  void aDeposedLeadersLateWriteDoesNotOverwriteTheNewLeadersWindow(TestApiServer server) throws Exception {
    noWindowYet(server);
    Clock clock = Clock.systemUTC();
    try (KubernetesClient oldReplica = asDeployed(server); KubernetesClient newReplica = asDeployed(server)) {
      CountDownLatch onTheWire = new CountDownLatch(1);
      CountDownLatch arrive = new CountDownLatch(1);
      GuardJournal oldLeader = new GuardJournal(new HeldOnce(new GuardWindowConfigMap(oldReplica, NS, NAME), onTheWire, arrive), new Metrics(), () -> 0L);
      PlainGuard oldGuard = new PlainGuard(clock);
      assertThat(oldLeader.takeOver(oldGuard)).isTrue();
      oldGuard.count(eviction(), clock.instant());
      assertThat(oldLeader.persist(oldGuard)).as("the first write creates the ConfigMap").isTrue();
      oldGuard.count(eviction(), clock.instant());
      CompletableFuture<Boolean> lateWrite = CompletableFuture.supplyAsync(() -> oldLeader.persist(oldGuard));
      assertThat(onTheWire.await(5, TimeUnit.SECONDS)).isTrue();

      GuardJournal newLeader = new GuardJournal(new GuardWindowConfigMap(newReplica, NS, NAME), new Metrics(), () -> 0L);
      PlainGuard newGuard = new PlainGuard(clock);
      assertThat(newLeader.takeOver(newGuard)).isTrue();
      assertThat(newGuard.window(clock.instant()).evictions().get("a")).as("the old leader's first eviction").hasSize(1);
      newGuard.count(eviction(), clock.instant());
      newGuard.count(eviction(), clock.instant());
      assertThat(newLeader.persist(newGuard)).isTrue();
      String newLeadersWindow = window(server);
      assertThat(newLeadersWindow).matches("evict a( \\d+:\\d+)+\n");

      Instant released = Instant.now();
      arrive.countDown();
      assertThat(lateWrite.get(10, TimeUnit.SECONDS)).as("the old leader's removal is held").isFalse();
      assertThat(window(server)).isEqualTo(newLeadersWindow);
      assertThat(newGuard.window(clock.instant()).evictions().get("a")).hasSize(3);
      await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(server.audit())
          .filteredOn(e -> e.received().isAfter(released) && e.resource().equals("configmaps") && e.verb().equals("patch"))
          .singleElement().satisfies(e -> {
            assertThat(e.user()).isEqualTo(Manifests.user(Manifests.SERVICE_ACCOUNT));
            assertThat(e.name()).isEqualTo(NAME);
            assertThat(e.code()).isEqualTo(409);
          }));
    }
  }

  /**
   * A write the server carried out whose answer was lost is this replica's own: the next write goes over it (a 409
   * first, then a read that finds the write's name on the ConfigMap) without counting its evictions twice.
   */
  @Test
  void aWriteWhoseAnswerWasLostIsKnownAsItsOwn(TestApiServer server) throws Exception {
    noWindowYet(server);
    Clock clock = Clock.systemUTC();
    try (KubernetesClient replica = asDeployed(server)) {
      AnswerLostStore answerLost = new AnswerLostStore(new GuardWindowConfigMap(replica, NS, NAME));
      GuardJournal journal = new GuardJournal(answerLost, new Metrics(), () -> 0L);
      PlainGuard guard = new PlainGuard(clock);
      assertThat(journal.takeOver(guard)).isTrue();
      Instant at = clock.instant();
      guard.count(eviction(), at);
      guard.count(eviction(), at);
      answerLost.loseTheNextAnswer();
      assertThat(journal.persist(guard)).as("no answer: held").isFalse();
      assertThat(window(server)).as("but written").matches("evict a \\d+:2\n");
      guard.uncount(eviction(), at);
      assertThat(journal.persist(guard)).isTrue();
      assertThat(window(server)).matches("evict a \\d+:1\n");
      assertThat(guard.window(clock.instant()).evictions().get("a")).as("not counted twice").hasSize(1);
    }
  }

  /** The manifests applied, and no guard window stored yet. */
  private static void noWindowYet(TestApiServer server) throws Exception {
    Manifests.applyBase(server);
    server.client().configMaps().inNamespace(NS).withName(NAME).delete();
    await().atMost(Duration.ofSeconds(5)).until(() -> server.client().configMaps().inNamespace(NS).withName(NAME).get() == null);
  }

  private static KubernetesClient asDeployed(TestApiServer server) throws Exception {
    return new KubernetesClientBuilder().withConfig(Manifests.serviceAccountConfig(server, Manifests.SERVICE_ACCOUNT)).build();
  }

  private static String window(TestApiServer server) {
    return server.client().configMaps().inNamespace(NS).withName(NAME).get().getData().get("window");
  }

  private static Decision eviction() {
    return new Decision("a", "p", "u", "1", "n", "PodLifeTime", "p", "r", Action.EVICT, "x", Instant.EPOCH, "");
  }

  /** A store whose second write waits, its version chosen, until the test lets it arrive: a write on the wire. */
  private record HeldOnce(GuardWindowStore store, CountDownLatch onTheWire, CountDownLatch arrive) implements GuardWindowStore {
    @Override
    public Stored load() {
      return store.load();
    }

    @Override
    public Optional<String> saveOver(String window, String version, String writeId) {
      if (!version.isEmpty()) {
        onTheWire.countDown();
        try {
          arrive.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return store.saveOver(window, version, writeId);
    }
  }
}
