package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.TestApiServer;
import java.io.ByteArrayInputStream;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The informers ask for pods as protobuf (PodProto) and get pod events as JSON (PodJson): from a real API server, the
 * same pods read both ways make the same records, for pods with every field a record is made of set, by the server's
 * own encoders.
 */
@ExtendWith(ApiServerExtension.class)
class PodProtoIT {
  private final KubernetesClient client;

  PodProtoIT(KubernetesClient client) {
    this.client = client;
  }

  @Test
  void aListReadAsProtobufMakesTheRecordsItsJsonMakes(TestApiServer server) throws Exception {
    String ns = server.newNamespace("proto");
    client.scheduling().v1().priorityClasses().resource(new PriorityClassBuilder().withNewMetadata().withName("high").endMetadata()
        .withValue(100).build()).create();
    // PodRecordsTest's pod, less what a create cannot carry (the server sets them), and held by a finalizer once deleted.
    Pod full = PodRecordsTest.full();
    Pod created = client.pods().inNamespace(ns).resource(new PodBuilder(full).editMetadata().withNamespace(ns).withName("full")
        .withResourceVersion(null).withUid(null).withCreationTimestamp(null).withDeletionTimestamp(null).withManagedFields(List.of())
        .withFinalizers("podsweeper.io/test").endMetadata().withStatus(null).build()).create();
    client.pods().inNamespace(ns).resource(new PodBuilder(created).withStatus(full.getStatus()).build()).updateStatus();
    client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("bare").endMetadata().withNewSpec()
        .addNewContainer().withName("main").withImage("busybox").withNewResources().addToRequests("cpu", new Quantity("1"))
        .addToLimits("cpu", new Quantity("1")).addToRequests("memory", new Quantity("1Gi")).addToLimits("memory", new Quantity("1Gi"))
        .endResources().endContainer().endSpec().build()).create();
    // Empty strings where the JSON writes them (no omitempty), which the server accepts here.
    Pod edge = client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("edge").withLabels(Map.of("app", "web"))
        .endMetadata().withNewSpec().addNewContainer().withName("main").withImage("busybox").endContainer()
        .addNewTopologySpreadConstraint().withMaxSkew(1).withTopologyKey("zone").withWhenUnsatisfiable("DoNotSchedule")
        .withNewLabelSelector().addNewMatchExpression().withKey("").withOperator("Exists").endMatchExpression().endLabelSelector()
        .endTopologySpreadConstraint().endSpec().build()).create();
    client.pods().inNamespace(ns).resource(new PodBuilder(edge).withNewStatus().withPhase("Running").addNewContainerStatus().withName("")
        .withNewState().withNewRunning().endRunning().endState().endContainerStatus().endStatus().build()).updateStatus();
    client.pods().inNamespace(ns).withName("full").delete(); // held by its finalizer: a pod being deleted
    try {
      byte[] protobuf = list(ns, KubeProtobuf.ACCEPT);
      byte[] json = list(ns, "application/json");

      assertThat(new String(protobuf, 0, 4, java.nio.charset.StandardCharsets.ISO_8859_1)).isEqualTo("k8s\0");
      List<PodRecord> fromProtobuf = records(PodProto.list(KubeProtobuf.body(new ByteArrayInputStream(protobuf)).in()));
      List<PodRecord> fromJson = records(PodRecords.serialization().unmarshal(new ByteArrayInputStream(json), PodList.class));
      assertThat(fromProtobuf).hasSize(3).isEqualTo(fromJson);
      PodRecord read = fromProtobuf.stream().filter(p -> p.name().equals("full")).findFirst().orElseThrow();
      // Set by the server's encoder, and read: not a pair of empty records that happen to be equal.
      assertThat(read.deletionTimestamp()).isPresent();
      assertThat(read.owners()).hasSize(1);
      // A 1.20 server drops an init container's restartPolicy (1.29+), so its sidecar reads as an init container both
      // ways (PodProtoTest reads one as the 1.29+ server writes it); it keeps status.message.
      assertThat(read.containers()).extracting(c -> c.name() + " " + c.kind()).containsExactly("main MAIN", "init INIT", "proxy INIT");
      assertThat(read.nodeShutdownMessage()).isTrue();
      assertThat(read.conditions()).singleElement().satisfies(c -> assertThat(c.lastTransitionTime()).isPresent());
      assertThat(read.scheduling().requiredPodAntiAffinity()).hasSize(1);
      assertThat(read.scheduling().spreadConstraints()).hasSize(1);
      assertThat(read.volumes().persistentVolumeClaims()).containsExactly("data");
      assertThat(read.priority()).hasValue(100);
      assertThat(fromProtobuf.stream().filter(p -> p.name().equals("bare")).findFirst().orElseThrow().scheduling().qosClass())
          .isEqualTo("Guaranteed");
    } finally {
      client.pods().inNamespace(ns).withName("full").edit(p -> new PodBuilder(p).editMetadata().withFinalizers(List.of()).endMetadata().build());
      client.scheduling().v1().priorityClasses().withName("high").delete();
    }
  }

  /** Asked for as protobuf, the server's errors are protobuf too: they are read, so an error says what the server said. */
  @Test
  void anErrorAnsweredAsProtobufSaysWhatTheServerSaid(TestApiServer server) throws Exception {
    HttpResponse<byte[]> response = get("api/v1/pods?limit=10&continue=not-a-token", KubeProtobuf.ACCEPT);

    assertThat(response.code()).isEqualTo(400);
    assertThat(KubeProtobuf.status(response.body(), 0)).hasValueSatisfying(status -> { // the code read from the body
      assertThat(status.getCode()).isEqualTo(400);
      assertThat(status.getReason()).isEqualTo("BadRequest");
      assertThat(status.getMessage()).contains("continue");
    });
    assertThat(KubeProtobuf.status(get("api/v1/pods?limit=10&continue=not-a-token", "application/json").body(), 400)).isEmpty();
  }

  private byte[] list(String namespace, String accept) throws Exception {
    HttpResponse<byte[]> response = get("api/v1/namespaces/" + namespace + "/pods", accept);
    assertThat(response.code()).isEqualTo(200);
    return response.body();
  }

  private HttpResponse<byte[]> get(String path, String accept) throws Exception {
    HttpClient http = client.getHttpClient();
    HttpRequest request = http.newHttpRequestBuilder().uri(client.getMasterUrl() + path).header("Accept", accept).build();
    return http.sendAsync(request, byte[].class).get();
  }

  private static List<PodRecord> records(PodList list) {
    return list.getItems().stream().map(PodRecords::pod).toList();
  }
}
