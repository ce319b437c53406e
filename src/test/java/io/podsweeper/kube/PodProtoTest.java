package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.CodedOutputStream;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.EndedBy;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Pods read from the API server's protobuf. PodProtoIT compares the two formats on what a 1.20 API server writes;
 * these are the fields it does not have (newer Kubernetes), and the list around the pods, with the bytes written
 * here by field number as k8s.io/api's generated.proto gives them.
 */
class PodProtoTest {
  /** A protobuf message, written field by field. */
  private static final class Message {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final CodedOutputStream out = CodedOutputStream.newInstance(bytes);

    Message text(int field, String value) {
      return write(() -> out.writeString(field, value));
    }

    Message number(int field, long value) {
      return write(() -> out.writeInt64(field, value));
    }

    Message message(int field, Message value) {
      return write(() -> out.writeByteArray(field, value.bytes()));
    }

    /** Bytes as they are, tags and all (for malformed input). */
    Message raw(byte... value) {
      return write(() -> out.writeRawBytes(value));
    }

    /** A map<string, string> entry. */
    Message entry(int field, String key, String value) {
      return message(field, new Message().text(1, key).text(2, value));
    }

    byte[] bytes() {
      write(() -> {});
      return bytes.toByteArray();
    }

    private Message write(IoAction action) {
      try {
        action.run();
        out.flush();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return this;
    }

    private interface IoAction {
      void run() throws IOException;
    }
  }

  private static Message metadata(String name) {
    return new Message().text(1, name).text(3, "ns").text(5, "uid-" + name).text(6, "7").message(8, new Message().number(1, 1_767_225_600L));
  }

  /** A list as the API server sends it: "k8s\0", then an Unknown whose raw (field 2) is the list. */
  private static byte[] list(Message list) {
    byte[] envelope = new Message().message(1, new Message().text(1, "PodList").text(2, "v1")).message(2, list).text(4, "application/vnd.kubernetes.protobuf").bytes();
    byte[] body = new byte[envelope.length + 4];
    System.arraycopy("k8s\0".getBytes(StandardCharsets.ISO_8859_1), 0, body, 0, 4);
    System.arraycopy(envelope, 0, body, 4, envelope.length);
    return body;
  }

  private static PodList read(byte[] body) throws IOException {
    InputStream in = PagedLists.inflated(body);
    KubeProtobuf.Body read = KubeProtobuf.body(in);
    assertThat(read.protobuf()).isTrue();
    return PodProto.list(read.in());
  }

  @Test
  void whatA120ServerDoesNotWriteIsReadAsItsJsonIs() throws IOException {
    Message spec = new Message()
        .message(2, new Message().text(1, "main").text(2, "busybox"))
        .message(18, new Message().message(3, new Message().message(1, new Message().text(3, "zone").message(4, new Message()))))
        .message(33, new Message().number(1, 1).text(2, "zone").text(3, "ScheduleAnyway").message(4, new Message().entry(1, "app", "web"))
            .text(6, "Ignore").text(7, "Honor").text(8, "pod-template-hash"))
        .message(39, new Message().text(1, "gpu").text(3, "gpu-claim"))
        // 1.29+: a native sidecar (an init container, 20, with restartPolicy, 24, Always) and an ordinary init container;
        // 1.27+: scheduling gates (38, each a PodSchedulingGate whose name is field 1)
        .message(20, new Message().text(1, "proxy").text(2, "envoy").text(24, "Always"))
        .message(20, new Message().text(1, "setup").text(2, "busybox"))
        .message(38, new Message().text(1, "kueue.x-k8s.io/admission")).message(38, new Message().text(1, "example.com/b"));
    Message status = new Message().text(1, "Running").text(9, "BestEffort")
        .text(3, EndedBy.NODE_SHUTDOWN_MESSAGE)
        .message(10, new Message().text(1, "setup").message(2, new Message().message(1, new Message().text(1, "CrashLoopBackOff"))).number(5, 4))
        .message(10, new Message().text(1, "proxy").message(2, new Message().message(1, new Message().text(1, "CrashLoopBackOff"))).number(5, 7))
        .message(13, new Message().text(1, "debug").message(2, new Message().message(3, new Message().number(1, 0).text(3, "Completed")
            .message(6, new Message()))));
    Message pod = new Message().message(1, metadata("p").entry(11, "empty", "")).message(2, spec).message(3, status);

    PodRecord fromProtobuf = PodRecords.pod(read(list(new Message().message(1, new Message().text(2, "9")).message(2, pod))).getItems().get(0));

    Pod same = new PodBuilder().withNewMetadata().withName("p").withNamespace("ns").withUid("uid-p").withResourceVersion("7")
        .withCreationTimestamp("2026-01-01T00:00:00Z").addToLabels("empty", "").endMetadata()
        .withNewSpec().addNewContainer().withName("main").withImage("busybox").endContainer()
        .withNewAffinity().withNewPodAntiAffinity().addNewRequiredDuringSchedulingIgnoredDuringExecution().withTopologyKey("zone")
        .withNewNamespaceSelector().endNamespaceSelector().endRequiredDuringSchedulingIgnoredDuringExecution().endPodAntiAffinity().endAffinity()
        .addNewTopologySpreadConstraint().withMaxSkew(1).withTopologyKey("zone").withWhenUnsatisfiable("ScheduleAnyway")
        .withNewLabelSelector().addToMatchLabels("app", "web").endLabelSelector().withNodeAffinityPolicy("Ignore").withNodeTaintsPolicy("Honor")
        .withMatchLabelKeys("pod-template-hash").endTopologySpreadConstraint()
        .addNewResourceClaim().withName("gpu").withResourceClaimName("gpu-claim").endResourceClaim()
        .addNewInitContainer().withName("proxy").withImage("envoy").withRestartPolicy("Always").endInitContainer()
        .addNewInitContainer().withName("setup").withImage("busybox").endInitContainer()
        .addNewSchedulingGate().withName("kueue.x-k8s.io/admission").endSchedulingGate().addNewSchedulingGate().withName("example.com/b")
        .endSchedulingGate()
        .endSpec()
        .withNewStatus().withPhase("Running").withQosClass("BestEffort").withMessage(EndedBy.NODE_SHUTDOWN_MESSAGE)
        .addNewInitContainerStatus().withName("setup").withRestartCount(4).withNewState().withNewWaiting().withReason("CrashLoopBackOff")
        .endWaiting().endState().endInitContainerStatus()
        .addNewInitContainerStatus().withName("proxy").withRestartCount(7).withNewState().withNewWaiting().withReason("CrashLoopBackOff")
        .endWaiting().endState().endInitContainerStatus()
        .addNewEphemeralContainerStatus().withName("debug").withNewState()
        .withNewTerminated().withExitCode(0).withReason("Completed").endTerminated().endState().endEphemeralContainerStatus().endStatus().build();
    PodRecord fromJson = PodRecords.pod(PodRecords.serialization().unmarshal(new KubernetesSerialization().asJson(same), Pod.class));
    assertThat(fromProtobuf).isEqualTo(fromJson);
    // Read, not equal for want of reading: each is there.
    assertThat(fromProtobuf.scheduling().requiredPodAntiAffinity()).singleElement().satisfies(t -> assertThat(t.namespaceSelector()).isPresent());
    assertThat(fromProtobuf.scheduling().spreadConstraints()).singleElement().satisfies(c -> {
      assertThat(c.matchLabelKeys()).containsExactly("pod-template-hash");
      assertThat(c.honorNodeAffinity()).isFalse();
      assertThat(c.honorNodeTaints()).isTrue();
    });
    assertThat(fromProtobuf.volumes().resourceClaims()).isTrue();
    assertThat(fromProtobuf.containers()).extracting(c -> c.name() + " " + c.kind() + " " + c.restartCount())
        .containsExactly("setup INIT 4", "proxy SIDECAR 7", "debug EPHEMERAL 0");
    assertThat(fromProtobuf.containers().get(2).finishedAt()).isEmpty(); // the zero time
    assertThat(fromProtobuf.schedulingGates()).containsExactly("kueue.x-k8s.io/admission", "example.com/b");
    assertThat(fromProtobuf.nodeShutdownMessage()).isTrue();
    assertThat(fromProtobuf.labels()).containsEntry("empty", "");
  }

  /**
   * What the scheduler filters on and a 1.20 server does not write (sidecars) or PodProtoIT's pod leaves out: init
   * containers' requests and restartPolicy, the overhead, host ports, required pod affinity; read as the JSON is.
   */
  @Test
  void schedulingFieldsAreReadAsTheJsonIs() throws IOException {
    Message spec = new Message()
        .message(2, new Message().text(1, "main").text(2, "busybox").message(8, new Message().message(2, new Message().text(1, "cpu")
            .message(2, new Message().text(1, "500m")))).message(6, new Message().number(2, 8080).number(3, 80))
            .message(6, new Message().number(2, 53).number(3, 53).text(4, "UDP").text(5, "10.0.0.1")))
        .message(20, new Message().text(1, "proxy").text(2, "envoy").message(8, new Message().message(2, new Message().text(1, "cpu")
            .message(2, new Message().text(1, "100m")))).text(24, "Always"))
        .message(32, new Message().text(1, "cpu").message(2, new Message().text(1, "50m")))
        .message(18, new Message().message(2, new Message().message(1, new Message().message(1, new Message().entry(1, "app", "db")).text(3, "zone"))));
    Message pod = new Message().message(1, metadata("p")).message(2, spec);

    PodRecord fromProtobuf = onlyPod(pod);

    Pod same = new PodBuilder().withNewMetadata().withName("p").withNamespace("ns").withUid("uid-p").withResourceVersion("7")
        .withCreationTimestamp("2026-01-01T00:00:00Z").endMetadata()
        .withNewSpec().addNewContainer().withName("main").withImage("busybox").withNewResources().addToRequests("cpu", new io.fabric8.kubernetes.api.model.Quantity("500m"))
        .endResources().addNewPort().withHostPort(8080).withContainerPort(80).endPort()
        .addNewPort().withHostPort(53).withContainerPort(53).withProtocol("UDP").withHostIP("10.0.0.1").endPort().endContainer()
        .addNewInitContainer().withName("proxy").withImage("envoy").withRestartPolicy("Always").withNewResources()
        .addToRequests("cpu", new io.fabric8.kubernetes.api.model.Quantity("100m")).endResources().endInitContainer()
        .withOverhead(java.util.Map.of("cpu", new io.fabric8.kubernetes.api.model.Quantity("50m")))
        .withNewAffinity().withNewPodAffinity().addNewRequiredDuringSchedulingIgnoredDuringExecution().withTopologyKey("zone")
        .withNewLabelSelector().addToMatchLabels("app", "db").endLabelSelector().endRequiredDuringSchedulingIgnoredDuringExecution()
        .endPodAffinity().endAffinity().endSpec().build();
    assertThat(fromProtobuf).isEqualTo(fromJson(new KubernetesSerialization().asJson(same)));
    assertThat(fromProtobuf.scheduling().requests()).isEqualTo(java.util.Map.of("cpu", 650L));
    assertThat(fromProtobuf.scheduling().hostPorts()).hasSize(2);
    assertThat(fromProtobuf.scheduling().requiredPodAffinity()).hasSize(1);
  }

  /** One pod the record cannot be made of does not fail the list it came in, as with JSON (PodRecordsTest). */
  @Test
  void anUnreadablePodFailsAloneNotItsList() throws IOException {
    Message odd = new Message().message(1, metadata("odd")).message(2, new Message().message(18, new Message().message(3,
        new Message().message(1, new Message().text(3, "zone").message(1, new Message().message(2, new Message().text(1, "app").text(2, "Near")))))));
    Message list = new Message().message(1, new Message().text(2, "9")).message(2, new Message().message(1, metadata("a")))
        .message(2, odd).message(2, new Message().message(1, metadata("b")));

    PodList read = read(PagedListsTest.gzip(list(list)));

    assertThat(read.getItems()).extracting(p -> p.getMetadata().getName()).containsExactly("a", "odd", "b");
    assertThat(PodRecords.pod(read.getItems().get(2)).name()).isEqualTo("b");
    assertThatThrownBy(() -> PodRecords.pod(read.getItems().get(1))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Near");
  }

  @Test
  void aListsMetadataIsReadAndItsContinueTokenBeforeItsItems() throws IOException {
    byte[] body = list(new Message().message(1, new Message().text(2, "42").text(3, "next-page").number(4, 1500))
        .message(2, new Message().message(1, metadata("a"))));

    PodList read = read(body);

    assertThat(read.getMetadata().getResourceVersion()).isEqualTo("42");
    assertThat(read.getMetadata().getContinue()).isEqualTo("next-page");
    assertThat(read.getMetadata().getRemainingItemCount()).isEqualTo(1500L);
    assertThat(PagedLists.continueToken(body)).hasValue("next-page");
    assertThat(PagedLists.continueToken(PagedListsTest.gzip(body))).hasValue("next-page");
    assertThat(PagedLists.continueToken(list(new Message().message(1, new Message().text(2, "42"))))).isEmpty();
  }

  @Test
  void aBodyThatIsNotTheApiServersProtobufIsAClearError() {
    byte[] json = "{\"kind\":\"PodList\"}".getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> KubeProtobuf.list(new ByteArrayInputStream(json), PodProto::decoded)).isInstanceOf(IOException.class)
        .hasMessageContaining("not the API server's protobuf");
    byte[] truncated = java.util.Arrays.copyOf(list(new Message().message(2, new Message().message(1, metadata("a")))), 20);
    assertThatThrownBy(() -> read(truncated)).isInstanceOf(IOException.class);
  }

  /** A Status the server wrote as protobuf is read; one without a code gets the response's. */
  @Test
  void anErrorsStatusIsReadAndKeepsTheResponsesCodeWhenItHasNone() {
    byte[] gone = list(new Message().text(2, "Failure").text(3, "the continue token expired").text(4, "Expired").number(6, 410));
    assertThat(KubeProtobuf.status(gone, 500)).hasValueSatisfying(status -> {
      assertThat(status.getCode()).isEqualTo(410);
      assertThat(status.getReason()).isEqualTo("Expired");
      assertThat(status.getMessage()).isEqualTo("the continue token expired");
    });
    assertThat(KubeProtobuf.status(list(new Message().text(2, "Failure")), 503)).hasValueSatisfying(status -> assertThat(status.getCode()).isEqualTo(503));
    assertThat(KubeProtobuf.status("{\"kind\":\"Status\"}".getBytes(StandardCharsets.UTF_8), 500)).isEmpty();
  }

  // ---- audit of 7b55012 -------------------------------------------------------------------------------------------

  /** The record the watch (JSON) makes of a pod given as the API server's JSON. */
  private static PodRecord fromJson(String json) {
    return PodRecords.pod(PodRecords.serialization().unmarshal(new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)), Pod.class));
  }

  private static PodRecord onlyPod(Message pod) throws IOException {
    return PodRecords.pod(read(list(new Message().message(1, new Message().text(2, "9")).message(2, pod))).getItems().get(0));
  }

  private static final String JSON_METADATA =
      "\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"uid-p\",\"resourceVersion\":\"7\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"}";

  /**
   * A topology spread constraint's labelSelector requirement with an empty key (a 1.20-1.26 server does not validate
   * the spread constraint's selector; from 1.27 such pods are still served and updatable): LabelSelectorRequirement.key
   * has no omitempty, so JSON says "key":"" and protobuf writes field 1 empty. PodJson keeps "", PodProto makes null.
   */
  @Test
  void aSpreadSelectorRequirementWithAnEmptyKeyIsReadAsItsJsonIs() throws IOException {
    Message spec = new Message().message(2, new Message().text(1, "main").text(2, "busybox"))
        .message(33, new Message().number(1, 1).text(2, "zone").text(3, "DoNotSchedule")
            .message(4, new Message().message(2, new Message().text(1, "").text(2, "Exists"))));
    PodRecord fromProtobuf = onlyPod(new Message().message(1, metadata("p")).message(2, spec).message(3, new Message()));

    PodRecord fromJson = fromJson("{" + JSON_METADATA + ",\"spec\":{\"containers\":[{\"name\":\"main\",\"image\":\"busybox\"}],"
        + "\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\","
        + "\"labelSelector\":{\"matchExpressions\":[{\"key\":\"\",\"operator\":\"Exists\"}]}}]},\"status\":{}}");

    assertThat(fromProtobuf).isEqualTo(fromJson);
    // What TopologySpread does with every pod of the namespace on a counted node: with a null key, an NPE (the
    // record's labels are Map.copyOf, which rejects get(null)), and the whole balance pass fails.
    java.util.Map<String, String> labels = java.util.Map.copyOf(java.util.Map.of("app", "web"));
    assertThat(fromJson.scheduling().spreadConstraints().get(0).selector().matches(labels)).isFalse();
    assertThat(fromProtobuf.scheduling().spreadConstraints().get(0).selector().matches(labels)).isFalse();
  }

  /**
   * A container status with an empty name (ContainerStatus.name has no omitempty; a pods/status update is not checked
   * for names on a 1.20 server): JSON "name":"" makes "", protobuf's empty field 1 makes null.
   */
  @Test
  void aContainerStatusWithAnEmptyNameIsReadAsItsJsonIs() throws IOException {
    Message status = new Message().text(1, "Running")
        .message(8, new Message().text(1, "").message(2, new Message()).message(3, new Message()).number(4, 0).number(5, 0).text(6, "").text(7, ""));
    PodRecord fromProtobuf = onlyPod(new Message().message(1, metadata("p")).message(2, new Message()).message(3, status));

    PodRecord fromJson = fromJson("{" + JSON_METADATA + ",\"spec\":{},\"status\":{\"phase\":\"Running\",\"containerStatuses\":"
        + "[{\"name\":\"\",\"state\":{},\"lastState\":{},\"ready\":false,\"restartCount\":0,\"image\":\"\",\"imageID\":\"\"}]}}");

    assertThat(fromProtobuf).isEqualTo(fromJson);
  }

  /**
   * A pod whose own bytes are malformed (a negative length inside it) fails alone, as a pod the record cannot be made of
   * does: the list is read on from the end of that pod's bytes, wherever inside them its reader stopped.
   */
  @Test
  void aMalformedPodFailsAloneNotItsList() throws IOException {
    Message odd = new Message().message(1, metadata("odd")).raw((byte) 0x12, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0x0f);
    Message list = new Message().message(1, new Message().text(2, "9")).message(2, new Message().message(1, metadata("a")))
        .message(2, odd).message(2, new Message().message(1, metadata("b")));

    PodList read = read(list(list));

    assertThat(read.getItems()).extracting(p -> p.getMetadata().getName()).containsExactly("a", "odd", "b");
    assertThatThrownBy(() -> PodRecords.pod(read.getItems().get(1))).isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * A timestamp with a wrong wire type: int32 fields are checked (IllegalArgumentException: that pod alone), a Time's
   * seconds are not, and the misread runs past the Time's end: the whole page fails.
   */
  @Test
  void aTimestampOfTheWrongWireTypeFailsAloneNotItsList() throws IOException {
    Message odd = new Message().message(1, new Message().text(1, "odd").text(3, "ns").message(8, new Message().text(1, "abc")));
    Message list = new Message().message(1, new Message().text(2, "9")).message(2, new Message().message(1, metadata("a")))
        .message(2, odd).message(2, new Message().message(1, metadata("b")));

    PodList read = read(list(list));

    assertThat(read.getItems()).extracting(p -> p.getMetadata().getName()).containsExactly("a", "odd", "b");
  }

  /**
   * A time after 9999 (only a protobuf client can write one: Go's RFC 3339 parser takes four-digit years): the API
   * server's JSON writes it with a five-digit year, "10000-01-01T00:00:00Z", which PodRecords.time cannot parse
   * (Instant.parse wants "+10000-..."), so JSON makes no finishedAt where protobuf makes one.
   */
  @Test
  void aTimeAfterTheYear9999IsReadAsItsJsonIs() throws IOException {
    long year10000 = java.time.Instant.parse("+10000-01-01T00:00:00Z").getEpochSecond();
    Message status = new Message().text(1, "Failed").message(8, new Message().text(1, "main").message(2, new Message().message(3,
        new Message().number(1, 1).text(3, "Error").message(6, new Message().number(1, year10000).number(2, 0)))).number(5, 0));
    PodRecord fromProtobuf = onlyPod(new Message().message(1, metadata("p")).message(2, new Message()).message(3, status));

    PodRecord fromJson = fromJson("{" + JSON_METADATA + ",\"spec\":{},\"status\":{\"phase\":\"Failed\",\"containerStatuses\":"
        + "[{\"name\":\"main\",\"state\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\",\"startedAt\":null,"
        + "\"finishedAt\":\"10000-01-01T00:00:00Z\"}},\"lastState\":{},\"ready\":false,\"restartCount\":0,\"image\":\"\",\"imageID\":\"\"}]}}");

    assertThat(fromProtobuf).isEqualTo(fromJson);
  }
}
