package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.Lock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The fence's arithmetic on a clock the test moves, around a Lease kept in memory. */
class FencedLockTest {
  private static final Leadership.Timing FAST = new Leadership.Timing(Duration.ofSeconds(4), Duration.ofSeconds(3), Duration.ofSeconds(1));

  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final MemoryLease lease = new MemoryLease();
  private final FencedLock fence = new FencedLock(lease, FAST.fenceValidity(), nanos::get, answer -> {});

  @Test
  void aRenewalHoldsForTheLeaseLessItsMargin() {
    assertThat(FAST.fenceValidity()).isEqualTo(Duration.ofSeconds(3));
    assertThat(Leadership.Timing.DEFAULT.fenceValidity()).isEqualTo(Duration.ofMillis(13_500));
  }

  @Test
  void theFenceRunsFromBeforeTheReadNotFromTheAnswer() {
    assertThat(fence.valid()).as("nothing written yet").isFalse();
    long attemptStarted = nanos.get();
    renew("me", Duration.ofMillis(800));
    assertThat(fence.valid()).isTrue();
    nanos.set(attemptStarted + Duration.ofSeconds(3).toNanos() - 1);
    assertThat(fence.valid()).isTrue();
    nanos.set(attemptStarted + Duration.ofSeconds(3).toNanos());
    assertThat(fence.valid()).as("3 s after the attempt began, though only 2.2 s after the write").isFalse();
  }

  @Test
  void aFailedRenewalLeavesTheFenceWhereTheLastSuccessPutIt() {
    long lastSuccess = nanos.get();
    renew("me", Duration.ZERO);
    nanos.addAndGet(Duration.ofSeconds(1).toNanos());
    lease.refuse = new KubernetesClientException("connection refused");
    assertThatThrownBy(() -> renew("me", Duration.ZERO)).isInstanceOf(KubernetesClientException.class);
    nanos.set(lastSuccess + Duration.ofSeconds(3).toNanos());
    assertThat(fence.valid()).isFalse();
  }

  @Test
  void releasingOrLosingTheLeaseDropsTheFenceAtOnce() {
    renew("me", Duration.ZERO);
    renew(null, Duration.ZERO);
    assertThat(fence.valid()).isFalse();
  }

  @Test
  void anUnreadableLeaseIsAnErrorFabric8Retries() {
    lease.unreadable = true;
    assertThatThrownBy(() -> fence.get(null)).isInstanceOf(KubernetesClientException.class).hasMessageContaining("renewTime is required");
  }

  /** One attempt as fabric8's elector makes it: read, then write a record naming {@code holder}, taking {@code took}. */
  private void renew(String holder, Duration took) {
    fence.get(null);
    nanos.addAndGet(took.toNanos());
    ZonedDateTime now = ZonedDateTime.now();
    fence.update(null, new LeaderElectionRecord(holder, Duration.ofSeconds(4), now, now, 0));
  }

  /** A Lease in memory, whose reads and writes the test can make fail. */
  private static final class MemoryLease implements Lock {
    LeaderElectionRecord stored;
    KubernetesClientException refuse;
    boolean unreadable;

    @Override
    public LeaderElectionRecord get(KubernetesClient client) {
      if (unreadable) {
        return new LeaderElectionRecord("someone", Duration.ofSeconds(4), ZonedDateTime.now(), null, 0);
      }
      return stored;
    }

    @Override
    public void create(KubernetesClient client, LeaderElectionRecord record) {
      update(client, record);
    }

    @Override
    public void update(KubernetesClient client, LeaderElectionRecord record) {
      if (refuse != null) {
        throw refuse;
      }
      stored = record;
    }

    @Override
    public String identity() {
      return "me";
    }

    @Override
    public String describe() {
      return "LeaseLock in memory";
    }
  }
}
