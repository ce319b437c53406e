package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import java.util.Optional;

/**
 * The blast-radius guard's window in a ConfigMap of its own beside the kill switch's ({@code data.window}), so a
 * restart or a new leader continues the window instead of starting it over. Machine-written: operators read it, and
 * resume (which clears it) through the kill switch.
 */
public final class GuardWindowConfigMap {
  static final String KEY = "window";

  private final KubernetesClient client;
  private final String namespace;
  private final String name;

  public GuardWindowConfigMap(KubernetesClient client, String namespace, String name) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
  }

  public Optional<String> load() {
    ConfigMap cm = client.configMaps().inNamespace(namespace).withName(name).get();
    return Optional.ofNullable(cm).map(ConfigMap::getData).map(d -> d.get(KEY));
  }

  /** A merge patch of the one key (no read-modify-write race with anyone); created on first use. */
  public void save(String window) {
    ConfigMapKeys.write(client, namespace, name, Map.of(KEY, window), Map.of("app.kubernetes.io/name", "podsweeper"));
  }
}
