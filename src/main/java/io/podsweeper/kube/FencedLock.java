package io.podsweeper.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.Lock;
import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * fabric8's resource {@link Lock}, delegated to, that also keeps the fence: until when, by this process's monotonic
 * clock, the lease it last wrote as holder is surely still its own.
 *
 * <p>Each attempt of fabric8's elector to acquire or renew stamps the record's renewTime, reads the Lease ({@link
 * #get}) and writes it ({@link #create} or {@link #update}); another replica may take the Lease once its clock passes
 * that renewTime + leaseDuration. So the fence runs from just before the read (right after the stamp, before any
 * request of the attempt), for {@code validFor}: the lease duration less a margin for the instant between stamp and
 * read and for clock skew between replicas. A replica that cannot renew, or was stopped, then stops acting before
 * another can acquire, whatever fabric8 has noticed.
 */
final class FencedLock implements Lock {
  private final Lock delegate;
  private final long validForNanos;
  private final LongSupplier nanoClock;
  private volatile long attemptStartedAt;
  /** Whether the last record written names this replica; guarded by this, like {@link #validUntil}. */
  private boolean held;
  /** When the fence falls, by {@link #nanoClock}. */
  private long validUntil;

  FencedLock(Lock delegate, Duration validFor, LongSupplier nanoClock) {
    this.delegate = delegate;
    this.validForNanos = validFor.toNanos();
    this.nanoClock = nanoClock;
  }

  /** Whether the last record written was this replica's and its lease has not run out by the local clock. */
  synchronized boolean valid() {
    return held && nanoClock.getAsLong() - validUntil < 0;
  }

  @Override
  public LeaderElectionRecord get(KubernetesClient client) {
    attemptStartedAt = nanoClock.getAsLong();
    try {
      return delegate.get(client);
    } catch (KubernetesClientException e) {
      throw e;
    } catch (RuntimeException e) {
      // fabric8's acquire loop retries a KubernetesClientException only: anything else ends it without completing
      // its future, and the replica would never campaign again (e.g. a Lease edited by hand, without renewTime).
      throw new KubernetesClientException("cannot read " + describe() + ": " + e, e);
    }
  }

  @Override
  public void create(KubernetesClient client, LeaderElectionRecord record) {
    long started = attemptStartedAt;
    delegate.create(client, record);
    written(record, started);
  }

  @Override
  public void update(KubernetesClient client, LeaderElectionRecord record) {
    long started = attemptStartedAt;
    delegate.update(client, record);
    written(record, started);
  }

  /** A write went through: the fence moves on if it made us the holder, and falls if it did not (a release). */
  private synchronized void written(LeaderElectionRecord record, long attemptStarted) {
    held = Objects.equals(record.getHolderIdentity(), identity());
    validUntil = attemptStarted + validForNanos;
  }

  @Override
  public String identity() {
    return delegate.identity();
  }

  @Override
  public String describe() {
    return delegate.describe();
  }
}
