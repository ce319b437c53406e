package io.podsweeper.removal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The threads removal requests are sent from: as many at once as may be in flight, none kept while idle. */
class RemovalSendersTest {
  @Test
  void asManyAsMayBeInFlightRunAtOnceAndTheyEndWhenIdleAndStartAgain() throws Exception {
    ThreadPoolExecutor senders = (ThreadPoolExecutor) RemovalPath.senders(Duration.ofMillis(100));
    try {
      CountDownLatch running = new CountDownLatch(Pacing.MAX_IN_FLIGHT);
      CountDownLatch release = new CountDownLatch(1);
      for (int i = 0; i <= Pacing.MAX_IN_FLIGHT; i++) {
        senders.execute(() -> {
          running.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
      }
      assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(senders.getPoolSize()).isEqualTo(Pacing.MAX_IN_FLIGHT);
      assertThat(senders.getQueue()).as("past the bound, a request waits for a thread").hasSize(1);

      release.countDown();
      await().atMost(Duration.ofSeconds(10)).until(() -> senders.getPoolSize() == 0);

      CountDownLatch again = new CountDownLatch(1);
      senders.execute(again::countDown);
      assertThat(again.await(10, TimeUnit.SECONDS)).as("a new burst starts them again").isTrue();
    } finally {
      senders.shutdownNow();
    }
  }
}
