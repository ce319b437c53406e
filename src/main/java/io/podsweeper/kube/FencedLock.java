package io.podsweeper.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.Lock;
import java.time.Duration;
import java.net.HttpURLConnection;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
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
  private final Consumer<Optional<String>> answered;
  private volatile long attemptStartedAt;
  /** Whether the last record written names this replica; guarded by this, like {@link #validUntil}. */
  private boolean held;
  /** When the fence falls, by {@link #nanoClock}. */
  private long validUntil;

  /**
   * @param answered told after each request about the lease: empty when it went through, else the API server's error
   *     answer in one line (not told of a request the server did not answer)
   */
  FencedLock(Lock delegate, Duration validFor, LongSupplier nanoClock, Consumer<Optional<String>> answered) {
    this.delegate = delegate;
    this.validForNanos = validFor.toNanos();
    this.nanoClock = nanoClock;
    this.answered = answered;
  }

  /** Whether the last record written was this replica's and its lease has not run out by the local clock. */
  synchronized boolean valid() {
    return held && nanoClock.getAsLong() - validUntil < 0;
  }

  @Override
  public LeaderElectionRecord get(KubernetesClient client) {
    attemptStartedAt = nanoClock.getAsLong();
    try {
      LeaderElectionRecord record = delegate.get(client);
      answered.accept(Optional.empty());
      return record;
    } catch (KubernetesClientException e) {
      throw refused(e);
    } catch (RuntimeException e) {
      // fabric8's acquire loop retries a KubernetesClientException only: anything else ends it without completing
      // its future, and the replica would never campaign again (e.g. a Lease edited by hand, without renewTime).
      throw new KubernetesClientException("cannot read " + describe() + ": " + e, e);
    }
  }

  @Override
  public void create(KubernetesClient client, LeaderElectionRecord record) {
    long started = attemptStartedAt;
    try {
      delegate.create(client, record);
    } catch (KubernetesClientException e) {
      throw refused(e);
    }
    written(record, started);
  }

  @Override
  public void update(KubernetesClient client, LeaderElectionRecord record) {
    long started = attemptStartedAt;
    try {
      delegate.update(client, record);
    } catch (KubernetesClientException e) {
      throw refused(e);
    }
    written(record, started);
  }

  /**
   * Tells of an error the API server answered; a conflict (another replica wrote first) and a lease not found yet are
   * the elector's ordinary course, not a refusal.
   */
  private KubernetesClientException refused(KubernetesClientException e) {
    int code = e.getCode();
    if (code > 0 && code != HttpURLConnection.HTTP_CONFLICT && code != HttpURLConnection.HTTP_NOT_FOUND) {
      answered.accept(Optional.of(ApiAnswers.oneLine(e)));
    }
    return e;
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
