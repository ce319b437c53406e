package io.podsweeper.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election on a coordination.k8s.io Lease (fabric8's LeaderElector): of several replicas only the leader
 * removes pods; when it dies, another takes over within the lease duration.
 */
public final class Leadership implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Leadership.class);

  public record Timing(Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {
    public static final Timing DEFAULT = new Timing(Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2));
  }

  private final KubernetesClient client;
  private final String namespace;
  private final String lease;
  private final String identity;
  private final Timing timing;
  private CompletableFuture<?> running;

  public Leadership(KubernetesClient client, String namespace, String lease, String identity, Timing timing) {
    this.client = client;
    this.namespace = namespace;
    this.lease = lease;
    this.identity = identity;
    this.timing = timing;
  }

  /** Campaigns for the lease in the background; {@code leading} is told true on winning, false on losing it. */
  public void start(Consumer<Boolean> leading) {
    running = client.leaderElector().withConfig(new LeaderElectionConfigBuilder()
            .withName("podsweeper")
            .withLock(new LeaseLock(namespace, lease, identity))
            .withLeaseDuration(timing.leaseDuration())
            .withRenewDeadline(timing.renewDeadline())
            .withRetryPeriod(timing.retryPeriod())
            .withReleaseOnCancel(true)
            .withLeaderCallbacks(new LeaderCallbacks(
                () -> {
                  LOG.info("{} is the leader: removing pods", identity);
                  leading.accept(true);
                },
                () -> {
                  LOG.warn("{} lost leadership: no more removals from this replica", identity);
                  leading.accept(false);
                },
                newLeader -> LOG.info("leader is now {}", newLeader)))
            .build())
        .build()
        .start();
  }

  /** Steps down (releasing the lease, so another replica takes over at once). */
  @Override
  public void close() {
    if (running != null) {
      running.cancel(true);
    }
  }
}
