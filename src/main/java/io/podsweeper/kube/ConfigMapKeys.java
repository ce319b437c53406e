package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.HttpURLConnection;
import java.util.Map;
import java.util.Optional;

/** Writes some keys of a ConfigMap of the service's own, whoever else writes the others. */
final class ConfigMapKeys {
  private ConfigMapKeys() {}

  /**
   * A merge patch of {@code data} (no read-modify-write race with an operator editing other keys); the ConfigMap is
   * created, with {@code labels}, when it is missing. Throws the client's exception when the server refuses.
   */
  static void write(KubernetesClient client, String namespace, String name, Map<String, String> data, Map<String, String> labels) {
    try {
      mergePatch(client, namespace, name, Map.of("data", data));
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_NOT_FOUND) {
        throw e;
      }
      create(client, namespace, name, data, labels);
    }
  }

  /**
   * Writes {@code data} and {@code annotations} only over the ConfigMap's {@code resourceVersion} (a merge patch that
   * carries it, which the server takes as a precondition), or, for {@code ""}, only where there is none (a create, with
   * {@code labels}). Returns the resourceVersion written, or empty when the ConfigMap has changed, been deleted or been
   * created since. Throws the client's exception when the server refuses.
   */
  static Optional<String> writeOver(KubernetesClient client, String namespace, String name, Map<String, String> data,
      Map<String, String> annotations, String resourceVersion, Map<String, String> labels) {
    try {
      ConfigMap written;
      if (resourceVersion.isEmpty()) {
        ConfigMap created = configMap(namespace, name, data, labels);
        created.getMetadata().setAnnotations(annotations);
        written = client.configMaps().inNamespace(namespace).resource(created).create();
      } else {
        written = mergePatch(client, namespace, name,
            Map.of("metadata", Map.of("resourceVersion", resourceVersion, "annotations", annotations), "data", data));
      }
      return Optional.of(written.getMetadata().getResourceVersion());
    } catch (KubernetesClientException e) {
      if (e.getCode() == HttpURLConnection.HTTP_CONFLICT || e.getCode() == HttpURLConnection.HTTP_NOT_FOUND) {
        return Optional.empty();
      }
      throw e;
    }
  }

  private static ConfigMap mergePatch(KubernetesClient client, String namespace, String name, Map<String, ?> body) {
    return client.configMaps().inNamespace(namespace).withName(name)
        .patch(PatchContext.of(PatchType.JSON_MERGE), client.getKubernetesSerialization().asJson(body));
  }

  /** Another replica may create it between our 404 and our create: then it exists, and the patch applies. */
  private static void create(KubernetesClient client, String namespace, String name, Map<String, String> data,
      Map<String, String> labels) {
    try {
      client.configMaps().inNamespace(namespace).resource(configMap(namespace, name, data, labels)).create();
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
      mergePatch(client, namespace, name, Map.of("data", data));
    }
  }

  private static ConfigMap configMap(String namespace, String name, Map<String, String> data, Map<String, String> labels) {
    return new ConfigMapBuilder().withNewMetadata().withName(name).withNamespace(namespace).withLabels(labels).endMetadata()
        .withData(data).build();
  }
}
