package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.podsweeper.engine.Outcome;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.removal.Result;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import io.podsweeper.testing.FakePodSource;
import io.podsweeper.testing.LogLines;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Events over the rate are dropped and counted, and the log says so, at most once a minute, with how many. */
class RemovalEventsTest {
  @Test
  void droppedEventsAreCountedAndSaidOnce() throws Exception {
    Metrics metrics = new Metrics();
    try (LogLines lines = LogLines.of(RemovalEvents.class)) {
      // Nowhere to send: the one Event within the rate fails, logged by the recorder, not here.
      try (KubernetesClient client = new KubernetesClientBuilder().withConfig(new ConfigBuilder().withMasterUrl("http://127.0.0.1:1")
              .withRequestRetryBackoffLimit(0).build()).build();
          RemovalEvents events = new RemovalEvents(new EventRecorder(client, "replica-a"), metrics, 0.001, new FakePodSource())) {
        Decision d = new Decision("ci", "build-1", "u-1", "1", "node-a", "PodLifeTime", "p", "failed", Action.DELETE, "finished 2h ago",
            Instant.EPOCH, "");
        for (int i = 0; i < 4; i++) {
          events.outcome(new Outcome(Instant.EPOCH, d, Result.SUCCESS, "", false, "p"));
        }
      }
      assertThat(metrics.eventsDropped.get()).isEqualTo(3);
      assertThat(lines.events()).filteredOn(e -> e.getLevel() == Level.WARN).singleElement()
          .satisfies(e -> assertThat(e.getFormattedMessage()).startsWith("1 Event(s) dropped over --events-per-second 0.001"));
    }
  }
}
