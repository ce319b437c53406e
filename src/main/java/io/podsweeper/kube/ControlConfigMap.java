package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.Map;
import java.util.Optional;

/**
 * The kill switch's state in a ConfigMap ({@code data.paused: "true"|"evictions"|"false"}, {@code data.reason}), so
 * {@code kubectl patch configmap podsweeper-control -p '{"data":{"paused":"true"}}'} stops every replica at once and
 * the state survives restarts. Watched by name with an informer (list and watch with a {@code metadata.name} field
 * selector, which RBAC's resourceNames covers); written with a merge patch, and created when missing.
 */
public final class ControlConfigMap implements AutoCloseable {
  private static final String PAUSED = "paused";
  private static final String REASON = "reason";

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private volatile SharedIndexInformer<ConfigMap> informer;

  public ControlConfigMap(KubernetesClient client, String namespace, String name) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
  }

  /** Told what the ConfigMap says now: {@code data.paused} (empty when absent), the reason, and its resourceVersion. */
  @FunctionalInterface
  public interface Observer {
    void written(Optional<String> paused, String reason, String version);
  }

  /**
   * Watches the ConfigMap (blocks for the first list). {@code written} hears of every add and change;
   * {@code deleted} runs when it is deleted.
   */
  public void start(Observer written, Runnable deleted) {
    informer = resource().inform(new ResourceEventHandler<>() {
      @Override
      public void onAdd(ConfigMap cm) {
        Map<String, String> data = cm.getData() != null ? cm.getData() : Map.of();
        written.written(Optional.ofNullable(data.get(PAUSED)), data.getOrDefault(REASON, ""), cm.getMetadata().getResourceVersion());
      }

      @Override
      public void onUpdate(ConfigMap oldCm, ConfigMap newCm) {
        onAdd(newCm);
      }

      @Override
      public void onDelete(ConfigMap cm, boolean finalStateUnknown) {
        deleted.run();
      }
    });
  }

  /**
   * Writes the state for every replica: a merge patch of {@code data}, or a create when the ConfigMap is missing;
   * with {@code over}, only over that resourceVersion ({@code ""}: only a create), as {@code KillSwitch.Store} says.
   *
   * @return false when the ConfigMap is no longer at {@code over}
   * @throws IllegalStateException when the API server refuses or cannot be reached; the message says why, in one line
   */
  public boolean write(String paused, String reason, Optional<String> over) {
    Map<String, String> data = Map.of(PAUSED, paused, REASON, reason);
    try {
      if (over.isEmpty()) {
        ConfigMapKeys.write(client, namespace, name, data, Map.of());
        return true;
      }
      return ConfigMapKeys.writeOver(client, namespace, name, data, Map.of(), over.get(), Map.of()).isPresent();
    } catch (KubernetesClientException e) {
      throw new IllegalStateException("cannot write configmap " + namespace + "/" + name + ": " + ApiAnswers.oneLine(e), e);
    }
  }

  /** True while the ConfigMap is watched: false from the moment its watch ends until a new one runs. */
  public boolean isWatching() {
    SharedIndexInformer<ConfigMap> now = informer;
    return now != null && now.isWatching();
  }

  private Resource<ConfigMap> resource() {
    return client.configMaps().inNamespace(namespace).withName(name);
  }

  @Override
  public void close() {
    if (informer != null) {
      informer.stop();
    }
  }
}
