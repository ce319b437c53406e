package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The service's serialization knows the kinds it watches and Status, and nothing else: fabric8's registry of every
 * kind (about 500 classes more, all held by the AOT cache) is never searched.
 */
class KubeSerializationTest {
  private static Object watched(KubernetesSerialization serialization, String apiVersion, String kind) {
    String event = "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"" + apiVersion + "\",\"kind\":\"" + kind
        + "\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"7\"}}}";
    return serialization.unmarshal(event, WatchEvent.class).getObject();
  }

  @Test
  void aWatchEventsObjectIsOfTheKindRegisteredForItsWatchOrStatusAndOtherwiseGeneric() {
    KubernetesSerialization serialization = KubeSerialization.of(new ObjectMapper());
    assertThat(watched(serialization, "v1", "Node")).isExactlyInstanceOf(GenericKubernetesResource.class);

    KubeSerialization.expect(serialization, Node.class);
    KubeSerialization.expect(serialization, PodDisruptionBudget.class);
    KubeSerialization.expect(serialization, GenericKubernetesResource.class); // the team policies' watch: nothing to register

    assertThat(watched(serialization, "v1", "Node")).isExactlyInstanceOf(Node.class);
    assertThat(watched(serialization, "policy/v1", "PodDisruptionBudget")).isExactlyInstanceOf(PodDisruptionBudget.class);
    assertThat(watched(serialization, "policy/v1beta1", "PodDisruptionBudget")).isExactlyInstanceOf(GenericKubernetesResource.class);
    assertThat(watched(serialization, "v1", "Status")).isExactlyInstanceOf(Status.class); // a watch's error event
  }

  @Test
  void fabric8sRegistryOfEveryKindIsNeverSearched() {
    KubernetesSerialization serialization = KubeSerialization.of(new ObjectMapper());
    watched(serialization, "gateway.networking.k8s.io/v1", "Gateway");
    assertThat(serialization.getRegisteredKubernetesResource("gateway.networking.k8s.io/v1", "Gateway")).isNull();
    assertThat(serialization.getRegisteredKubernetesResource("v1", "Node")).isNull();
    // fabric8's default serialization would have searched it: the test is not blind to the difference.
    assertThat(new KubernetesSerialization().getRegisteredKubernetesResource("gateway.networking.k8s.io/v1", "Gateway")).isNotNull();
  }

  @Test
  void theServicesClientsShareItsSerialization() {
    try (KubeClients clients = KubeClients.of(new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build())) {
      for (KubernetesClient client : new KubernetesClient[] {clients.main(), clients.unretried(Optional.empty()), clients.informers()}) {
        assertThat(client.getKubernetesSerialization().getRegisteredKubernetesResource("gateway.networking.k8s.io/v1", "Gateway"))
            .as("the registry of every kind").isNull();
        assertThat(client.getKubernetesSerialization().getRegisteredKubernetesResource("v1", "Status")).isEqualTo(Status.class);
      }
    }
  }

  @Test
  void eachInformerRegistersTheKindItWatches() {
    try (KubeClients clients = KubeClients.of(new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build())) {
      KubernetesClient client = clients.informers();
      KubernetesSerialization serialization = client.getKubernetesSerialization();
      assertThat(serialization.getRegisteredKubernetesResource("v1", "Node")).isNull();

      try (ResumingInformers informers = new ResumingInformers(client)) {
        informers.informer(Node.class, NodeList.class, c -> c.nodes(), new BasicItemStore<>(Cache::metaNamespaceKeyFunc));
      }
      ResumingInformers.unresumed(ConfigMap.class, client.configMaps().inNamespace("podsweeper").withName("control"));

      assertThat(serialization.getRegisteredKubernetesResource("v1", "Node")).isEqualTo(Node.class);
      assertThat(serialization.getRegisteredKubernetesResource("v1", "ConfigMap")).isEqualTo(ConfigMap.class);
    }
  }

  private static final String KUBECONFIG = """
      apiVersion: v1
      kind: Config
      clusters:
      - name: test
        cluster:
          server: https://127.0.0.1:6443
          certificate-authority-data: Y2E=
          extensions:
          - name: client.authentication.k8s.io/exec
            extension: {audience: test}
      users:
      - name: admin
        user: {token: abc}
      contexts:
      - name: admin@test
        context: {cluster: test, user: admin, namespace: team-a}
      - name: other
        context: {cluster: test, user: admin, namespace: team-b}
      current-context: admin@test
      """;

  @Test
  void aKubeconfigMeansWhatItMeansToFabric8() {
    Config ours = KubeSerialization.kubeconfig(KUBECONFIG);
    @SuppressWarnings("removal")
    Config fabric8s = Config.fromKubeconfig(KUBECONFIG);
    assertThat(ours.getMasterUrl()).isEqualTo(fabric8s.getMasterUrl()).isEqualTo("https://127.0.0.1:6443/");
    assertThat(ours.getAutoOAuthToken()).isEqualTo(fabric8s.getAutoOAuthToken()).isEqualTo("abc");
    assertThat(ours.getCaCertData()).isEqualTo(fabric8s.getCaCertData()).isEqualTo("Y2E=");
    assertThat(ours.getNamespace()).isEqualTo(fabric8s.getNamespace()).isEqualTo("team-a");
    assertThat(ours.getCurrentContext().getName()).isEqualTo("admin@test");
    assertThat(ours.getContexts()).hasSize(2);
  }

  @Test
  void anEmptyKubeconfigIsRefusedAsFabric8RefusesIt() {
    assertThatThrownBy(() -> KubeSerialization.kubeconfig("")).isInstanceOf(KubernetesClientException.class)
        .hasMessage("Could not create Config from kubeconfig");
  }
}
