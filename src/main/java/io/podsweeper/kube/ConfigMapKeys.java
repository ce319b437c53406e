package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.HttpURLConnection;
import java.util.Map;

/** Writes some keys of a ConfigMap of the service's own, whoever else writes the others. */
final class ConfigMapKeys {
  private ConfigMapKeys() {}

  /**
   * A merge patch of {@code data} (no read-modify-write race with an operator editing other keys); the ConfigMap is
   * created, with {@code labels}, when it is missing. Throws the client's exception when the server refuses.
   */
  static void write(KubernetesClient client, String namespace, String name, Map<String, String> data, Map<String, String> labels) {
    try {
      patch(client, namespace, name, data);
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_NOT_FOUND) {
        throw e;
      }
      create(client, namespace, name, data, labels);
    }
  }

  private static void patch(KubernetesClient client, String namespace, String name, Map<String, String> data) {
    client.configMaps().inNamespace(namespace).withName(name)
        .patch(PatchContext.of(PatchType.JSON_MERGE), client.getKubernetesSerialization().asJson(Map.of("data", data)));
  }

  /** Another replica may create it between our 404 and our create: then it exists, and the patch applies. */
  private static void create(KubernetesClient client, String namespace, String name, Map<String, String> data,
      Map<String, String> labels) {
    try {
      client.configMaps().inNamespace(namespace).resource(new ConfigMapBuilder().withNewMetadata().withName(name)
          .withNamespace(namespace).withLabels(labels).endMetadata().withData(data).build()).create();
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
      patch(client, namespace, name, data);
    }
  }
}
