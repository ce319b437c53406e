package io.podsweeper.kube;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.podsweeper.cluster.NodeUsage;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Measured node usage for LowNodeLoad and LowNodeUtilization's metricsUtilization on a live cluster. The source is
 * found on first use: Koordinator's NodeMetric objects where the server serves them (then watched by an informer),
 * else metrics-server's metrics.k8s.io (then listed again at most every {@link #REFRESH}), else none, which is logged:
 * those strategies then decide nothing. Found on first use, so a policy without them makes no extra calls and needs
 * no extra permissions; while there is no NodeMetric informer it looks again every REFRESH, so installing
 * metrics-server or Koordinator later needs no restart. Freshness is the strategy's to judge, by each measurement's
 * own time.
 */
final class NodeUsageSource implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeUsageSource.class);
  /** About metrics-server's own resolution: listing more often reads the same numbers. */
  static final Duration REFRESH = Duration.ofSeconds(15);
  private static final Duration SYNC_TIMEOUT = Duration.ofSeconds(30);

  private enum Kind {
    NODE_METRIC,
    METRICS_API,
    NONE
  }

  private final KubernetesClient client;
  private final Function<String, Optional<String>> nodeOfPod;
  private final Map<String, NodeUsage> byNode = new ConcurrentHashMap<>();
  private Kind kind;
  private long refreshedAt = System.nanoTime() - REFRESH.toNanos();
  private SharedIndexInformer<GenericKubernetesResource> informer;

  /** @param nodeOfPod the node a pod ({@code namespace/name}) runs on: metrics.k8s.io measures pods apart from nodes */
  NodeUsageSource(KubernetesClient client, Function<String, Optional<String>> nodeOfPod) {
    this.client = client;
    this.nodeOfPod = nodeOfPod;
  }

  synchronized Optional<NodeUsage> get(String node) {
    if (informer == null && System.nanoTime() - refreshedAt >= REFRESH.toNanos()) {
      refresh();
    }
    return Optional.ofNullable(byNode.get(node));
  }

  /**
   * One reading, for {@code explain}: NodeMetric objects, else metrics.k8s.io, else nothing. A failing metrics API
   * (metrics-server down) must not fail an explanation that may not need it: logged, and nothing is measured.
   */
  static List<NodeUsage> read(KubernetesClient client, Function<String, Optional<String>> nodeOfPod) {
    try {
      return switch (find(client)) {
        case NODE_METRIC -> client.genericKubernetesResources(NodeUsages.NODE_METRIC_API, NodeUsages.NODE_METRIC).list().getItems().stream()
            .map(r -> NodeUsages.fromNodeMetric(json(client, r))).flatMap(Optional::stream).toList();
        case METRICS_API -> metricsApi(client, nodeOfPod);
        case NONE -> List.of();
      };
    } catch (KubernetesClientException e) {
      LOG.warn("cannot read node usage ({}); measured-usage strategies decide nothing", e.getMessage());
      return List.of();
    }
  }

  private void refresh() {
    refreshedAt = System.nanoTime();
    try {
      Kind found = find(client);
      switch (found) {
        case NODE_METRIC -> watchNodeMetrics();
        case METRICS_API -> {
          Map<String, NodeUsage> fresh = new HashMap<>();
          metricsApi(client, nodeOfPod).forEach(u -> fresh.put(u.node(), u));
          byNode.keySet().retainAll(fresh.keySet());
          byNode.putAll(fresh);
        }
        case NONE -> byNode.clear();
      }
      if (found != kind) {
        switch (found) {
          case NODE_METRIC -> LOG.info("Measured node usage comes from Koordinator's NodeMetric objects ({})", NodeUsages.NODE_METRIC_API);
          case METRICS_API -> LOG.info("Measured node usage comes from {} (metrics-server), every {}s", NodeUsages.METRICS_API,
              REFRESH.toSeconds());
          case NONE -> LOG.warn("The server serves neither Koordinator's NodeMetric ({}) nor {}: no node's usage is known,"
              + " so measured-usage strategies (LowNodeLoad, LowNodeUtilization with metricsUtilization) decide nothing",
              NodeUsages.NODE_METRIC_API, NodeUsages.METRICS_API);
        }
      }
      kind = found;
    } catch (RuntimeException e) {
      LOG.warn("LowNodeLoad: cannot read node usage ({}); nodes without a fresh measurement are skipped", e.getMessage());
    }
  }

  private static Kind find(KubernetesClient client) {
    if (serves(client, NodeUsages.NODE_METRIC_API, "nodemetrics")) {
      return Kind.NODE_METRIC;
    }
    return serves(client, NodeUsages.METRICS_API, "nodes") ? Kind.METRICS_API : Kind.NONE;
  }

  private static boolean serves(KubernetesClient client, String groupVersion, String resource) {
    try {
      APIResourceList resources = client.getApiResources(groupVersion);
      return resources != null && resources.getResources().stream().anyMatch(r -> r.getName().equals(resource));
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return false;
      }
      throw e;
    }
  }

  private void watchNodeMetrics() {
    byNode.clear();
    SharedIndexInformer<GenericKubernetesResource> i =
        client.genericKubernetesResources(NodeUsages.NODE_METRIC_API, NodeUsages.NODE_METRIC).runnableInformer(0);
    i.addEventHandler(new ResourceEventHandler<>() {
      @Override
      public void onAdd(GenericKubernetesResource obj) {
        String node = obj.getMetadata().getName();
        // A NodeMetric koordlet has not filled in yet measures nothing.
        NodeUsages.fromNodeMetric(json(client, obj)).ifPresentOrElse(u -> byNode.put(node, u), () -> byNode.remove(node));
      }

      @Override
      public void onUpdate(GenericKubernetesResource oldObj, GenericKubernetesResource newObj) {
        onAdd(newObj);
      }

      @Override
      public void onDelete(GenericKubernetesResource obj, boolean finalStateUnknown) {
        byNode.remove(obj.getMetadata().getName());
      }
    });
    // The pass that asked reads them right after: wait for the first list.
    try {
      i.start().toCompletableFuture().get(SYNC_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      i.stop();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while listing NodeMetric objects", e);
    } catch (ExecutionException | TimeoutException e) {
      i.stop();
      throw new IllegalStateException("NodeMetric objects could not be listed: " + (e.getCause() != null ? e.getCause() : e), e);
    }
    informer = i;
  }

  static List<NodeUsage> metricsApi(KubernetesClient client, Function<String, Optional<String>> nodeOfPod) {
    List<NodeUsage> nodes = client.genericKubernetesResources(NodeUsages.METRICS_API, NodeUsages.NODE_METRICS).list().getItems().stream()
        .map(r -> NodeUsages.fromNodeMetrics(json(client, r))).flatMap(Optional::stream).toList();
    Map<String, Map<String, Long>> pods = new HashMap<>();
    for (GenericKubernetesResource r : client.genericKubernetesResources(NodeUsages.METRICS_API, NodeUsages.POD_METRICS).inAnyNamespace()
        .list().getItems()) {
      Map.Entry<String, Map<String, Long>> pod = NodeUsages.fromPodMetrics(json(client, r));
      pods.put(pod.getKey(), pod.getValue());
    }
    return NodeUsages.withPods(nodes, pods, nodeOfPod);
  }

  private static JsonNode json(KubernetesClient client, GenericKubernetesResource resource) {
    return client.getKubernetesSerialization().convertValue(resource, JsonNode.class);
  }

  @Override
  public synchronized void close() {
    if (informer != null) {
      informer.stop();
    }
  }
}
