package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.Map;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kill switch's state in a ConfigMap ({@code data.paused: "true"|"false"}, {@code data.reason}), so
 * {@code kubectl patch configmap podsweeper-control -p '{"data":{"paused":"true"}}'} stops every replica at once and
 * the state survives restarts. Watched with an informer; written with a merge patch (created if missing).
 */
public final class ControlConfigMap implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ControlConfigMap.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private SharedIndexInformer<ConfigMap> informer;

  public ControlConfigMap(KubernetesClient client, String namespace, String name) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
  }

  /** Watches the ConfigMap; {@code observed} gets (paused, reason) on every change, and (false, "") if it is deleted. */
  public void start(BiConsumer<Boolean, String> observed) {
    informer = client.configMaps().inNamespace(namespace).withName(name).inform(new ResourceEventHandler<>() {
      @Override
      public void onAdd(ConfigMap cm) {
        Map<String, String> data = cm.getData() != null ? cm.getData() : Map.of();
        observed.accept("true".equalsIgnoreCase(data.getOrDefault("paused", "false").trim()), data.getOrDefault("reason", ""));
      }

      @Override
      public void onUpdate(ConfigMap oldCm, ConfigMap newCm) {
        onAdd(newCm);
      }

      @Override
      public void onDelete(ConfigMap cm, boolean finalStateUnknown) {
        observed.accept(false, "");
      }
    });
  }

  /** Writes the state; failures are logged, not thrown: the in-process switch already holds. */
  public void write(boolean paused, String reason) {
    Map<String, String> data = Map.of("paused", String.valueOf(paused), "reason", reason);
    try {
      ConfigMap existing = client.configMaps().inNamespace(namespace).withName(name).get();
      if (existing == null) {
        client.configMaps().inNamespace(namespace).resource(new ConfigMapBuilder().withNewMetadata().withName(name)
            .withNamespace(namespace).endMetadata().withData(data).build()).create();
      } else {
        client.configMaps().inNamespace(namespace).withName(name)
            .edit(cm -> new ConfigMapBuilder(cm).addToData(data).build());
      }
    } catch (KubernetesClientException e) {
      LOG.error("cannot write the kill switch state to configmap {}/{}: {}", namespace, name, e.getMessage());
    }
  }

  @Override
  public void close() {
    if (informer != null) {
      informer.stop();
    }
  }
}
