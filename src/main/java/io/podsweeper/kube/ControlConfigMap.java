package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kill switch's state in a ConfigMap ({@code data.paused: "true"|"evictions"|"false"}, {@code data.reason}), so
 * {@code kubectl patch configmap podsweeper-control -p '{"data":{"paused":"true"}}'} stops every replica at once and
 * the state survives restarts. Watched by name with an informer (list and watch with a {@code metadata.name} field
 * selector, which RBAC's resourceNames covers); written with a merge patch, and created when missing.
 *
 * <p>It counts as watched ({@link #isWatching}) only while its informer watches and the observer has been told what the
 * informer holds. Its watch is never resumed ({@link ResumingInformers#unresumed}): a resumed watch is "watching" as
 * soon as it is open, before the server has replayed a pause written while this replica was cut off. And the
 * informer tells its observer on another thread after it has stored a change, so a pause listed or watched is
 * "watched" only once the observer has taken it.
 */
public final class ControlConfigMap implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ControlConfigMap.class);
  private static final String PAUSED = "paused";
  private static final String REASON = "reason";
  /** What {@link #observed} holds while the ConfigMap is absent. */
  private static final String ABSENT = "";

  private final KubernetesClient client;
  /** The informers' client ({@link KubeClients#informers}): its watches end instead of resuming. */
  private final KubernetesClient watching;
  private final String namespace;
  private final String name;
  private volatile SharedIndexInformer<ConfigMap> informer;
  /** The resourceVersion the observer was last told of; {@link #ABSENT} before any and after a delete. */
  private volatile String observed = ABSENT;

  public ControlConfigMap(KubeClients clients, String namespace, String name) {
    this.client = clients.main();
    this.watching = clients.informers();
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
    SharedIndexInformer<ConfigMap> started = ResumingInformers.unresumed(ConfigMap.class,
        watching.configMaps().inNamespace(namespace).withName(name));
    started.addEventHandler(new ResourceEventHandler<>() {
      @Override
      public void onAdd(ConfigMap cm) {
        Map<String, String> data = cm.getData() != null ? cm.getData() : Map.of();
        String version = cm.getMetadata().getResourceVersion();
        written.written(Optional.ofNullable(data.get(PAUSED)), data.getOrDefault(REASON, ""), version);
        observed = version;
      }

      @Override
      public void onUpdate(ConfigMap oldCm, ConfigMap newCm) {
        onAdd(newCm);
      }

      @Override
      public void onDelete(ConfigMap cm, boolean finalStateUnknown) {
        deleted.run();
        observed = ABSENT;
      }
    });
    informer = started;
    started.run();
    if (started.getStore().list().isEmpty()) {
      LOG.warn("the kill switch's configmap {}/{} does not exist: nothing pauses this replica until it is created (a pause written to a"
          + " configmap of that name in another namespace does not reach it); create it, or point --namespace or"
          + " --control-configmap at the one that exists", namespace, name);
    }
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

  /**
   * True while the ConfigMap is watched and the observer knows what it says: false from the moment its watch ends
   * until it has been listed and watched again, and while the observer has yet to be told of what the informer holds.
   */
  public boolean isWatching() {
    SharedIndexInformer<ConfigMap> now = informer;
    if (now == null || !now.isWatching()) {
      return false;
    }
    List<ConfigMap> held = now.getStore().list();
    return observed.equals(held.isEmpty() ? ABSENT : held.get(0).getMetadata().getResourceVersion());
  }

  @Override
  public void close() {
    if (informer != null) {
      informer.stop();
    }
  }
}
