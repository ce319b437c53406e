package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfig;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.podsweeper.policy.Durations;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election on a coordination.k8s.io Lease (fabric8's LeaderElector): of several replicas only the leader
 * removes pods; when it dies, another takes over within the lease duration.
 *
 * <p>fabric8's elector is single-use: once it loses the lease (e.g. the API server was away past the renew deadline)
 * it never campaigns again. So each time one ends, short of {@link #close}, a new one campaigns; if that cannot
 * start, {@link #whyNotCampaigning} says why (and /healthz fails), rather than a ready replica that can never lead.
 *
 * <p>Leading is fenced ({@link FencedLock}): {@link #holdsValidLease} is true only while fabric8 says this replica
 * leads and the lease it last renewed has not run out by the local monotonic clock, and the {@code leading} callback
 * follows it, so a replica that stalled or lost the API server stops before another can acquire.
 */
public final class Leadership implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Leadership.class);
  /** How often the callback is brought in line with the fence: its expiry is noticed by nobody else. */
  private static final Duration FENCE_CHECK = Duration.ofMillis(200);

  public record Timing(Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {
    public static final Timing DEFAULT = new Timing(Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2));
    /** fabric8 waits up to this many retry periods between attempts (its jitter is 1.2), and wants them within the renew deadline. */
    public static final double RETRY_SPREAD = 2.2;

    /** How long a renewal keeps the fence up: the lease duration less max(1 s, a tenth of it). */
    Duration fenceValidity() {
      Duration margin = leaseDuration.dividedBy(10);
      return leaseDuration.minus(margin.compareTo(Duration.ofSeconds(1)) > 0 ? margin : Duration.ofSeconds(1));
    }
  }

  private final KubernetesClient client;
  private final String namespace;
  private final String lease;
  private final String identity;
  /** Where this replica's HTTP port is (host:port), for followers to forward to while it leads; empty: nowhere said. */
  private final Optional<String> address;
  private final Timing timing;
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "leadership");
    t.setDaemon(true);
    return t;
  });
  private Consumer<Boolean> leading;
  private BooleanSupplier dryRun = () -> false;
  /** What the lease's last refused request was, logged once until a request goes through; guarded by this. */
  private String refusal;
  private volatile FencedLock fence;
  /** What fabric8's current elector last said: this replica leads. */
  private volatile boolean elected;
  private volatile Optional<String> notCampaigning = Optional.empty();
  /** Guarded by this, like the fields below. */
  private CompletableFuture<?> running;
  private boolean told;
  private boolean closed;

  /**
   * @param clients where leader election gets a client of its own, as kube-controller-manager does: each request
   *     bounded by the renew deadline and not retried by the HTTP layer
   * @param address where this replica's HTTP port is reached (host:port): written on the Lease with every acquire and
   *     renewal ({@link #ADDRESS_ANNOTATION}), so a follower can forward to the leader; empty: not written
   */
  public Leadership(KubeClients clients, String namespace, String lease, String identity, Optional<String> address, Timing timing) {
    this.client = clients.unretried(Optional.of(timing.renewDeadline()));
    this.namespace = namespace;
    this.lease = lease;
    this.identity = identity;
    this.address = address;
    this.timing = timing;
    this.fence = newFence();
  }

  /**
   * Campaigns for the lease in the background, again after each loss; {@code leading} follows {@link #holdsValidLease}.
   *
   * @param dryRun whether the policy in force removes nothing: a leader then says it would remove, not that it removes
   */
  public void start(Consumer<Boolean> leading, BooleanSupplier dryRun) {
    this.leading = leading;
    this.dryRun = dryRun;
    scheduler.execute(this::campaign);
    scheduler.scheduleWithFixedDelay(this::tell, FENCE_CHECK.toMillis(), FENCE_CHECK.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The fence: this replica leads and, by the local monotonic clock, its lease has not run out. */
  public boolean holdsValidLease() {
    return elected && fence.valid();
  }

  /** Empty while this replica campaigns for the lease (or holds it); why not, once it has given up. */
  public Optional<String> whyNotCampaigning() {
    return notCampaigning;
  }

  private FencedLock newFence() {
    ObjectMetaBuilder meta = new ObjectMetaBuilder().withNamespace(namespace).withName(lease);
    // fabric8 writes the lock's metadata with every acquire and renewal (a merge patch): the holder and its address
    // are always written together.
    address.ifPresent(a -> meta.addToAnnotations(ADDRESS_ANNOTATION, identity + "@" + a));
    return new FencedLock(new LeaseLock(meta.build(), identity), timing.fenceValidity(), System::nanoTime, this::answered);
  }

  /** On the Lease: {@code identity@host:port}, written by the holder with the lease itself. */
  public static final String ADDRESS_ANNOTATION = "podsweeper.io/leader-address";

  /** Who holds the Lease, and where its HTTP port is if it said so on the Lease itself (an older holder's is not taken). */
  public record Holder(String identity, Optional<String> address) {
    public static Optional<Holder> of(Lease lease) {
      Optional<String> identity = Optional.ofNullable(lease.getSpec()).map(LeaseSpec::getHolderIdentity).filter(h -> !h.isBlank());
      return identity.map(id -> new Holder(id, Optional.ofNullable(lease.getMetadata().getAnnotations())
          .map(a -> a.get(ADDRESS_ANNOTATION)).filter(v -> v.startsWith(id + "@")).map(v -> v.substring(id.length() + 1))));
    }
  }

  /** {@code host:port}, brackets around an IPv6 host. */
  public static String address(String host, int port) {
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }

  private synchronized void campaign() {
    if (closed) {
      return;
    }
    fence = newFence();
    try {
      running = client.leaderElector().withConfig(electionConfig(fence)).build().start();
    } catch (RuntimeException e) {
      LOG.error("{} cannot campaign for the lease: {}; it will never lead", identity, e.toString());
      notCampaigning = Optional.of("leader election stopped: " + e);
      return;
    }
    running.whenComplete((done, failure) -> campaignEnded(failure));
  }

  private synchronized void campaignEnded(Throwable failure) {
    elected = false;
    tell();
    if (closed) {
      return;
    }
    // fabric8's elector ends for good when it loses the lease, which "lost leadership" has said: a new one campaigns.
    if (failure == null) {
      LOG.debug("{}'s campaign for the lease ended; campaigning again", identity);
    } else {
      LOG.warn("{}'s campaign for the lease ended ({}); campaigning again", identity, failure.toString());
    }
    // Not at once: an elector that ends as soon as it starts must not spin.
    scheduler.schedule(this::campaign, timing.retryPeriod().toMillis(), TimeUnit.MILLISECONDS);
  }

  private LeaderElectionConfig electionConfig(FencedLock lock) {
    return new LeaderElectionConfigBuilder()
        .withName("podsweeper")
        .withLock(lock)
        .withLeaseDuration(timing.leaseDuration())
        .withRenewDeadline(timing.renewDeadline())
        .withRetryPeriod(timing.retryPeriod())
        .withReleaseOnCancel(true)
        .withLeaderCallbacks(new LeaderCallbacks(
            () -> elected(true),
            () -> elected(false),
            newLeader -> LOG.info(newLeader == null ? "nobody leads now (the Lease was given up)" : "leader is now {}", newLeader)))
        .build();
  }

  private synchronized void elected(boolean value) {
    elected = value;
    tell();
  }

  /** Tells {@code leading} when {@link #holdsValidLease} changed, also when only the fence ran out. */
  private synchronized void tell() {
    boolean valid = holdsValidLease();
    if (valid != told) {
      told = valid;
      if (valid) {
        LOG.info(dryRun.getAsBoolean() ? "{} is the leader: dry-run, it would remove pods and removes none" : "{} is the leader: removing pods",
            identity);
      } else if (elected) {
        // INFO, as every change of leadership: what caused it (an outage, a stall) is the warning, said where it is seen.
        LOG.info("{}'s lease ran out by its own clock before it could renew: no removals until it does", identity);
      } else {
        LOG.info("{} lost leadership: no more removals from this replica", identity);
      }
      leading.accept(valid);
    }
  }

  /**
   * The API server's answer to a request of the elector about the lease: empty when it went through, else the error it
   * answered (e.g. 403 when RBAC no longer grants the Lease). fabric8's elector, whose log is off ({@code cli/Logging}),
   * retries every retry period; this says a refusal once, and again only when it changes. An unanswered request (the API
   * server away) is the outage the service reports itself.
   */
  private synchronized void answered(Optional<String> error) {
    if (error.isEmpty()) {
      if (refusal != null) {
        LOG.info("{}: the API server grants the Lease {}/{} again", identity, namespace, lease);
      }
      refusal = null;
    } else if (!error.get().equals(refusal)) {
      refusal = error.get();
      LOG.warn("{} cannot lead: the API server answered {} to a request for the Lease {}/{}; retrying every {}", identity, refusal, namespace,
          lease, Durations.format(timing.retryPeriod()));
    }
  }

  /** Steps down (releasing the lease, so another replica takes over at once). */
  @Override
  public void close() {
    CompletableFuture<?> campaign;
    synchronized (this) {
      closed = true;
      campaign = running;
    }
    // Outside this lock: cancelling releases the lease under the elector's lock, whose callbacks take this one.
    if (campaign != null) {
      campaign.cancel(true);
    }
    scheduler.shutdownNow();
  }
}
