package io.podsweeper.safety;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.policy.Limits;
import java.time.Duration;
import java.time.Instant;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SafetyTest {
  private static Removal d(String ns, String node) {
    return new Removal(ns, node, true);
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
  void guardStopsAtTheShareOfTheNamespaceThereWasAndCountsOnlyEvictions() {
    BlastRadiusGuard g = new BlastRadiusGuard(new io.podsweeper.policy.Guard(0.5, 1.0, OptionalInt.of(100), 1, 1, Duration.ofMinutes(10)));
    Instant t = Instant.parse("2026-01-01T00:00:00Z");
    // 10 running pods; each admitted eviction leaves one fewer running.
    for (int i = 0; i < 5; i++) {
      assertThat(g.check(d("ns", "n"), 10 - i, 100, t).map(BlastRadiusGuard.Trip::reason)).as("eviction %d", i + 1).isEmpty();
      g.count(d("ns", "n"), t);
    }
    assertThat(g.check(d("ns", "n"), 5, 100, t).map(BlastRadiusGuard.Trip::reason)).hasValueSatisfying(why -> assertThat(why)
        .isEqualTo("would evict 6 of 10 running pods in namespace ns within 10m (guard.maxNamespaceShare 50%)"));
    // Checking does not count; a removal counted and then forgotten (it did not happen) leaves no trace.
    assertThat(g.check(d("ns", "n"), 5, 100, t).map(BlastRadiusGuard.Trip::reason)).isPresent();
    Instant refusedAt = t.plusSeconds(1);
    BlastRadiusGuard fresh = new BlastRadiusGuard(new io.podsweeper.policy.Guard(0.5, 1.0, OptionalInt.empty(), 1, 1, Duration.ofMinutes(10)));
    for (int i = 0; i < 3; i++) {
      fresh.count(d("ns", "n"), refusedAt);
      fresh.uncount(d("ns", "n"), refusedAt);
    }
    assertThat(fresh.check(d("ns", "n"), 2, 100, refusedAt).map(BlastRadiusGuard.Trip::reason)).as("refused attempts use up nothing").isEmpty();
    // Deleting finished pods is not an eviction: only the total cap counts it.
    Removal delete = new Removal("ns", "n", false);
    assertThat(g.check(delete, 5, 100, t).map(BlastRadiusGuard.Trip::reason)).isEmpty();
    // The window slides.
    assertThat(g.check(d("ns", "n"), 5, 100, t.plus(Duration.ofMinutes(11))).map(BlastRadiusGuard.Trip::reason)).isEmpty();
    g.reset();
    assertThat(g.check(d("other", "n"), 1, 100, t).map(BlastRadiusGuard.Trip::reason)).as("a one-pod namespace may lose its pod (minEvictions)").isEmpty();
  }

  @Test
  void guardWindowKeepsItsCountsThroughItsTextForm() {
    io.podsweeper.policy.Guard config = new io.podsweeper.policy.Guard(0.5, 1.0, OptionalInt.of(5), 0, 0, Duration.ofMinutes(10));
    BlastRadiusGuard g = new BlastRadiusGuard(config);
    Instant t = Instant.parse("2026-01-01T00:00:03.5Z");
    Removal delete = new Removal("ns", "n", false);
    g.count(d("ns", "n"), t);
    g.count(d("ns", "n"), t.plusSeconds(20));
    g.count(delete, t);
    String text = g.window(t.plusSeconds(30)).encode();
    // Rounded up to the next 10 s: remembered a little longer, never shorter.
    assertThat(text).isEqualTo("evict ns 1767225610:1 1767225630:1\ndelete 1767225610:1\n");
    BlastRadiusGuard restored = new BlastRadiusGuard(config);
    restored.restore(GuardWindow.decode(text));
    // 2 of 4 evicted: a third is over half; 3 removals + 3 more would pass maxRemovals 5.
    assertThat(restored.check(d("ns", "n"), 2, 100, t.plusSeconds(30)).map(BlastRadiusGuard.Trip::reason)).hasValue("would evict 3 of 4 running pods in namespace ns within 10m (guard.maxNamespaceShare 50%)");
    assertThat(restored.window(t.plusSeconds(30)).encode()).isEqualTo(text);
    assertThat(restored.check(delete, 2, 100, t.plusSeconds(631)).map(BlastRadiusGuard.Trip::reason)).as("the window slides on").isEmpty();
    assertThatThrownBy(() -> GuardWindow.decode("evict ns 12:x\n")).hasMessageContaining("guard window line 1");
  }

  /**
   * Two writers of one window: what the other added since this one last read is counted on top, what it dropped is
   * not taken (a count goes only through its own window's aging or a resume).
   */
  @Test
  void guardCountsWhatAnotherWriterAddedSinceItRead() {
    GuardWindow read = GuardWindow.decode("evict a 1767225610:2\ndelete 1767225610:1\n");
    GuardWindow theirs = GuardWindow.decode("evict a 1767225610:3 1767225620:1\nevict b 1767225620:1\n");
    assertThat(theirs.addedSince(read).encode()).isEqualTo("evict a 1767225610:1 1767225620:1\nevict b 1767225620:1\n");
    assertThat(read.addedSince(read)).isEqualTo(GuardWindow.EMPTY);

    BlastRadiusGuard g = new BlastRadiusGuard(new io.podsweeper.policy.Guard(0.5, 1.0, OptionalInt.empty(), 0, 0, Duration.ofMinutes(10)));
    Instant t = Instant.parse("2026-01-01T00:00:25Z");
    g.restore(read);
    g.count(d("a", "n"), t);
    g.absorb(theirs.addedSince(read));
    assertThat(g.window(t).encode()).isEqualTo("evict a 1767225610:3 1767225620:1 1767225630:1\nevict b 1767225620:1\ndelete 1767225610:1\n");
    // 5 of 10 in a evicted: a sixth is over half.
    assertThat(g.check(d("a", "n"), 5, 100, t).map(BlastRadiusGuard.Trip::reason)).hasValue(
        "would evict 6 of 10 running pods in namespace a within 10m (guard.maxNamespaceShare 50%)");
  }

  @Test
  void guardCapsAllRemovalsInAWindow() {
    BlastRadiusGuard g = new BlastRadiusGuard(new io.podsweeper.policy.Guard(1.0, 1.0, OptionalInt.of(2), 1, 1, Duration.ofMinutes(1)));
    Instant t = Instant.parse("2026-01-01T00:00:00Z");
    Removal delete = new Removal("ns", "n", false);
    for (int i = 0; i < 2; i++) {
      assertThat(g.check(delete, 0, 0, t).map(BlastRadiusGuard.Trip::reason)).isEmpty();
      g.count(delete, t);
    }
    assertThat(g.check(delete, 0, 0, t).map(BlastRadiusGuard.Trip::reason)).hasValue("would make 3 removals within 1m (guard.maxRemovals 2)");
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

  /** Koordinator's evictBurst: as many requests at once as the burst says, whatever the rate; a reload can change it. */
  @Test
  void tokenBucketHoldsAGivenBurst() {
    AtomicLong nanos = new AtomicLong();
    TokenBucket bucket = new TokenBucket(10, java.util.OptionalInt.of(1), nanos::get);
    assertThat(bucket.tryTake()).isZero();
    assertThat(bucket.tryTake()).isEqualTo(Duration.ofMillis(100));
    nanos.addAndGet(Duration.ofSeconds(60).toNanos());
    bucket.setRate(10, java.util.OptionalInt.of(3));
    assertThat(bucket.tryTake()).isZero();
    nanos.addAndGet(Duration.ofSeconds(60).toNanos());
    assertThat(bucket.tryTake()).isZero();
    assertThat(bucket.tryTake()).isZero();
    assertThat(bucket.tryTake()).isZero();
    assertThat(bucket.tryTake()).isPositive();
  }

  @Test
  void tokenBucketKeepsWhatWasSpentThroughANewRate() {
    AtomicLong nanos = new AtomicLong();
    TokenBucket bucket = new TokenBucket(2, nanos::get);
    bucket.tryTake();
    bucket.tryTake();
    bucket.setRate(4, java.util.OptionalInt.empty());
    assertThat(bucket.tryTake()).as("no fresh burst").isEqualTo(Duration.ofMillis(250));
    nanos.addAndGet(Duration.ofMillis(250).toNanos());
    assertThat(bucket.tryTake()).as("the new rate at once").isZero();
    nanos.addAndGet(Duration.ofSeconds(10).toNanos());
    bucket.setRate(1, java.util.OptionalInt.empty());
    assertThat(bucket.tryTake()).as("a lower rate, a smaller burst").isZero();
    assertThat(bucket.tryTake()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void hourlyNamespaceCapCountsPerNamespaceForgetsWhatDidNotHappenAndSlides() {
    HourlyNamespaceCap cap = new HourlyNamespaceCap();
    Instant t = Instant.parse("2026-01-01T12:00:00Z");
    cap.count("a", t);
    cap.count("a", t.plusSeconds(60));
    assertThat(cap.check("a", 2, t.plusSeconds(120)))
        .hasValue("namespaced policies removed 2 pods in namespace a within the last hour (maxRemovalsPerHourPerNamespace 2)");
    assertThat(cap.check("b", 2, t.plusSeconds(120))).as("per namespace").isEmpty();
    assertThat(cap.check("a", 0, t.plusSeconds(120))).as("0 allows none").isPresent();
    cap.uncount("a", t.plusSeconds(60));
    assertThat(cap.check("a", 2, t.plusSeconds(120))).as("a removal that did not happen is forgotten").isEmpty();
    cap.count("a", t.plusSeconds(120));
    assertThat(cap.check("a", 2, t.plus(HourlyNamespaceCap.WINDOW))).as("the first is exactly an hour old").isEmpty();
    assertThat(cap.check("a", 1, t.plus(HourlyNamespaceCap.WINDOW))).isPresent();
    assertThat(cap.check("a", 1, t.plus(HourlyNamespaceCap.WINDOW).plusSeconds(121))).isEmpty();
  }
}
