package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.safety.GuardWindowStore;
import java.util.Map;
import java.util.Optional;

/**
 * The blast-radius guard's window in a ConfigMap of its own beside the kill switch's ({@code data.window}), so a
 * restart or a new leader continues the window instead of starting it over. Machine-written: operators read it, and
 * resume (which clears it) through the kill switch.
 */
public final class GuardWindowConfigMap implements GuardWindowStore {
  static final String KEY = "window";
  /** Which write of which replica stored the window (GuardWindowStore.Stored#writeId). */
  static final String WRITE = "podsweeper.io/guard-window-write";

  private final KubernetesClient client;
  private final String namespace;
  private final String name;

  public GuardWindowConfigMap(KubernetesClient client, String namespace, String name) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
  }

  @Override
  public Stored load() {
    ConfigMap cm = client.configMaps().inNamespace(namespace).withName(name).get();
    if (cm == null) {
      return Stored.NOTHING;
    }
    String window = Optional.ofNullable(cm.getData()).map(d -> d.get(KEY)).orElse("");
    String writeId = Optional.ofNullable(cm.getMetadata().getAnnotations()).map(a -> a.get(WRITE)).orElse("");
    return new Stored(window, cm.getMetadata().getResourceVersion(), writeId);
  }

  /** A merge patch of the one key and annotation over {@code version} (a create for {@code ""}): an operator may annotate it. */
  @Override
  public Optional<String> saveOver(String window, String version, String writeId) {
    return ConfigMapKeys.writeOver(client, namespace, name, Map.of(KEY, window), Map.of(WRITE, writeId), version,
        Map.of("app.kubernetes.io/name", "podsweeper"));
  }
}
