package io.podsweeper.engine;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.http.HttpApi;
import io.podsweeper.kube.ClusterCache;
import io.podsweeper.kube.PodRemover;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.Policy;
import io.prometheus.client.Collector;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code podsweeper run}, assembled: informers feed the cache, the cache feeds the sweeper, the sweeper sends
 * removals; HTTP serves metrics, health and recent decisions. {@link #close} shuts down in the reverse order.
 */
public final class Service implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Service.class);

  /** What {@code run} is started with, besides the policy. */
  public record Options(String httpHost, int httpPort, long syncTimeoutSeconds) {}

  private final Metrics metrics = new Metrics();
  private final RecentDecisions recent = new RecentDecisions(500);
  private final KubernetesClient client;
  private final ClusterCache cache;
  private final PodRemover remover;
  private final Sweeper sweeper;
  private final HttpApi http;
  private volatile boolean synced;
  private int httpPort;

  public Service(Config config, Policy policy, Clock clock) {
    this.client = new KubernetesClientBuilder().withConfig(config).build();
    this.cache = new ClusterCache(client, metrics);
    this.remover = PodRemover.create(config, policy.gracePeriodSeconds());
    this.sweeper = new Sweeper(policy, cache, remover::remove, metrics, clock, recent);
    this.http = new HttpApi(metrics.registry(), () -> synced && cache.isCurrent(), recent);
    metrics.registerScrapeTimeGauge(
        "podsweeper_terminated_pods",
        "Finished (Succeeded/Failed) pods per namespace and phase: the backlog PodGC's terminated-pod-gc-threshold counts.",
        this::terminatedPodSamples);
  }

  public void start(Options options) throws Exception {
    httpPort = http.start(options.httpHost(), options.httpPort());
    LOG.info("HTTP on {}:{} (/metrics, /healthz, /readyz, /api/v1/decisions)", options.httpHost(), httpPort);
    try {
      cache.start(sweeper).get(options.syncTimeoutSeconds(), TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException("informers did not sync within " + options.syncTimeoutSeconds() + "s", e);
    }
    synced = true;
    LOG.info("informers synced: {} pods cached", cache.pods().size());
    sweeper.start();
  }

  public int httpPort() {
    return httpPort;
  }

  public Metrics metrics() {
    return metrics;
  }

  private List<Collector.MetricFamilySamples.Sample> terminatedPodSamples() {
    Map<List<String>, Integer> counts = new TreeMap<>((a, b) -> (a.get(0) + "/" + a.get(1)).compareTo(b.get(0) + "/" + b.get(1)));
    for (PodRecord pod : cache.pods()) {
      if (pod.terminated()) {
        counts.merge(List.of(pod.namespace(), pod.phase()), 1, Integer::sum);
      }
    }
    List<Collector.MetricFamilySamples.Sample> samples = new ArrayList<>();
    counts.forEach((labels, n) -> samples.add(new Collector.MetricFamilySamples.Sample(
        "podsweeper_terminated_pods", List.of("namespace", "phase"), labels, n)));
    return samples;
  }

  /** Stop deciding, let an in-flight request finish, close informers and HTTP. */
  @Override
  public void close() {
    LOG.info("shutting down");
    sweeper.close();
    cache.close();
    remover.close();
    client.close();
    http.close();
  }
}
