package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.removal.Backoff;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** The keyed work queue, with time in the test's hands. */
class WorkQueueTest {
  private long nanos;
  private final WorkQueue queue = new WorkQueue(() -> nanos, new Backoff(Clock.fixed(Instant.EPOCH, ZoneOffset.UTC), () -> nanos));

  private void advance(Duration by) {
    nanos += by.toNanos();
  }

  @Test
  void aKeyWaitsOnceHoweverOftenItIsAdded() {
    queue.add("a");
    queue.add("b");
    queue.add("a");

    assertThat(queue.poll()).isEqualTo("a");
    assertThat(queue.poll()).isEqualTo("b");
    assertThat(queue.poll()).isNull();
  }

  @Test
  void neverTwoWorkersOnOneKey() {
    queue.add("a");
    assertThat(queue.poll()).isEqualTo("a");
    queue.add("a"); // changed while a worker holds it

    assertThat(queue.poll()).as("held: not handed to a second worker").isNull();
    queue.done("a");
    assertThat(queue.poll()).as("then looked at again").isEqualTo("a");
  }

  @Test
  void aDelayedKeyIsDueAtTheEarliestTimeAsked() {
    queue.addAfter("a", Duration.ofSeconds(10));
    queue.addAfter("a", Duration.ofSeconds(3));
    queue.addAfter("a", Duration.ofSeconds(20));
    assertThat(queue.delayed()).isEqualTo(1);

    advance(Duration.ofMillis(2999));
    assertThat(queue.poll()).isNull();
    advance(Duration.ofMillis(1));
    assertThat(queue.poll()).isEqualTo("a");
    assertThat(queue.delayed()).isZero();
  }

  @Test
  void aCancelledDelayIsGone() {
    queue.addAfter("a", Duration.ofSeconds(1));
    queue.cancel("a");
    advance(Duration.ofSeconds(2));

    assertThat(queue.poll()).isNull();
    assertThat(queue.delayed()).isZero();
  }

  @Test
  void rateLimitedAddsBackOffPerKeyUntilForgotten() {
    assertThat(queue.addRateLimited("a")).isEqualTo(Duration.ofSeconds(5));
    assertThat(queue.addRateLimited("a")).isEqualTo(Duration.ofSeconds(10));
    assertThat(queue.addRateLimited("b")).as("per key").isEqualTo(Duration.ofSeconds(5));
    queue.forget("a");
    assertThat(queue.addRateLimited("a")).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void takeReturnsNothingOnceShutDown() throws InterruptedException {
    queue.shutDown();
    queue.add("a");
    assertThat(queue.take()).isNull();
  }
}
