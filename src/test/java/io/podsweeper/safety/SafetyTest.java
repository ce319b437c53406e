package io.podsweeper.safety;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.policy.Limits;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import java.time.Duration;
import java.time.Instant;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SafetyTest {
  private static Decision d(String ns, String node) {
    return new Decision(ns, "p", "u", "1", node, "PodLifeTime", "r", Action.EVICT, "x", Instant.EPOCH);
  }

  @Test
  void budgetChecksTotalThenNodeThenNamespaceAndGivesBack() {
    RemovalBudget b = new RemovalBudget(new Limits(OptionalInt.of(2), OptionalInt.of(1), OptionalInt.of(3), 1));
    assertThat(b.take(d("a", "n1"))).isEmpty();
    assertThat(b.take(d("a", "n2"))).hasValue(RemovalBudget.NAMESPACE_REACHED);
    assertThat(b.take(d("b", "n1"))).isEmpty();
    assertThat(b.take(d("c", "n1"))).hasValue(RemovalBudget.NODE_REACHED);
    b.giveBack(d("b", "n1"));
    assertThat(b.take(d("c", "n1"))).isEmpty();
    assertThat(b.take(d("d", "n3"))).isEmpty();
    assertThat(b.take(d("e", "n3"))).hasValue(RemovalBudget.TOTAL_REACHED);
    b.reset();
    assertThat(b.take(d("e", "n3"))).isEmpty();
  }

  @Test
  void tokenBucketHoldsItsRate() {
    AtomicLong nanos = new AtomicLong();
    TokenBucket bucket = new TokenBucket(2, nanos::get);
    assertThat(bucket.tryTake()).isZero();
    assertThat(bucket.tryTake()).isZero();
    assertThat(bucket.tryTake()).isEqualTo(Duration.ofMillis(500));
    nanos.addAndGet(Duration.ofMillis(500).toNanos());
    assertThat(bucket.tryTake()).isZero();
    assertThat(bucket.tryTake()).isPositive();
    nanos.addAndGet(Duration.ofSeconds(60).toNanos());
    // The burst is one second's worth, however long it was idle.
    assertThat(bucket.tryTake()).isZero();
    assertThat(bucket.tryTake()).isZero();
    assertThat(bucket.tryTake()).isPositive();
  }
}
