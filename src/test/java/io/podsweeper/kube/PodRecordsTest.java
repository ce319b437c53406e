package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.podsweeper.cluster.PodRecord;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The API object becomes the slim record the decision core reads. */
class PodRecordsTest {
  private static PodBuilder pod() {
    return new PodBuilder().withNewMetadata().withName("p").withNamespace("ns").withUid("u").withResourceVersion("1")
        .withCreationTimestamp("2026-01-01T00:00:00Z").endMetadata()
        .withNewSpec().withNodeName("n1").addNewContainer().withName("main").withImage("busybox").endContainer().endSpec();
  }

  /**
   * The informers' decoding skips what no record is made from (managedFields, a container's env, probes, mounts...),
   * and the record is the same as from the whole object: a field read by PodRecords must not be skipped.
   */
  @Test
  void decodingSkipsOnlyWhatNoRecordReads() {
    Pod full = pod().editMetadata().withLabels(Map.of("app", "web")).withAnnotations(Map.of(PodRecord.EVICT_ANNOTATION, "true", "x", "y"))
        .addNewOwnerReference().withKind("ReplicaSet").withName("web-1").withUid("rs").withController(true).endOwnerReference()
        .withManagedFields(new ManagedFieldsEntryBuilder().withManager("kubelet").withOperation("Update")
            .withNewFieldsV1().addToAdditionalProperties("f:status", Map.of("f:phase", Map.of())).endFieldsV1().build())
        .endMetadata()
        .editSpec().withPriority(100).withPriorityClassName("high").withNodeSelector(Map.of("zone", "a"))
        .editFirstContainer().addNewEnv().withName("A").withValue("1").endEnv().addNewPort().withContainerPort(80).endPort()
        .addNewVolumeMount().withName("tmp").withMountPath("/tmp").endVolumeMount()
        .withNewReadinessProbe().withNewHttpGet().withPath("/").withPort(new IntOrString(80)).endHttpGet().endReadinessProbe()
        .withNewResources().addToRequests("cpu", new Quantity("100m")).addToLimits("memory", new Quantity("1Gi")).endResources()
        .endContainer()
        .addNewInitContainer().withName("init").withImage("busybox").withCommand("true").endInitContainer()
        .addNewVolume().withName("tmp").withNewEmptyDir().endEmptyDir().endVolume()
        .addNewVolume().withName("data").withNewPersistentVolumeClaim().withClaimName("data").endPersistentVolumeClaim().endVolume()
        .addNewVolume().withName("token").withNewProjected().addNewSource().withNewServiceAccountToken().withPath("token").endServiceAccountToken()
        .endSource().endProjected().endVolume()
        .withNewSecurityContext().withRunAsUser(1000L).endSecurityContext().withRestartPolicy("Never").withServiceAccountName("web")
        .addNewToleration().withKey("k").withOperator("Exists").withEffect("NoSchedule").endToleration()
        .withNewAffinity().withNewPodAntiAffinity().addNewRequiredDuringSchedulingIgnoredDuringExecution().withTopologyKey("kubernetes.io/hostname")
        .withNewLabelSelector().addToMatchLabels("app", "web").endLabelSelector().endRequiredDuringSchedulingIgnoredDuringExecution()
        .endPodAntiAffinity().endAffinity()
        .addNewTopologySpreadConstraint().withMaxSkew(1).withTopologyKey("zone").withWhenUnsatisfiable("DoNotSchedule")
        .withNewLabelSelector().addToMatchLabels("app", "web").endLabelSelector().endTopologySpreadConstraint()
        .endSpec()
        .withNewStatus().withPhase("Running").withStartTime("2026-01-01T00:00:05Z").withQosClass("Burstable").withPodIP("10.0.0.7")
        .addNewCondition().withType("Ready").withStatus("True").withLastTransitionTime("2026-01-01T00:00:06Z").endCondition()
        .addNewContainerStatus().withName("main").withImageID("sha").withContainerID("c").withRestartCount(3)
        .withNewLastState().withNewTerminated().withExitCode(1).withReason("Error").endTerminated().endLastState()
        .withNewState().withNewWaiting().withReason("CrashLoopBackOff").endWaiting().endState().endContainerStatus()
        .endStatus().build();
    KubernetesSerialization fabric8 = new KubernetesSerialization();
    Pod slim = PodRecords.serialization().unmarshal(fabric8.asJson(full), Pod.class);

    assertThat(slim.getMetadata().getManagedFields()).isEmpty();
    assertThat(slim.getSpec().getContainers().get(0).getEnv()).isEmpty();
    assertThat(slim.getSpec().getContainers().get(0).getReadinessProbe()).isNull();
    assertThat(slim.getSpec().getSecurityContext()).isNull();
    assertThat(slim.getSpec().getVolumes()).extracting(Volume::getProjected).containsOnlyNulls();
    assertThat(slim.getStatus().getPodIP()).isNull();
    // Skipped, not kept aside as fabric8's additional properties.
    assertThat(slim.getSpec().getAdditionalProperties()).isEmpty();
    assertThat(slim.getSpec().getVolumes()).allSatisfy(v -> assertThat(v.getAdditionalProperties()).isEmpty());
    assertThat(slim.getStatus().getAdditionalProperties()).isEmpty();
    assertThat(PodRecords.pod(slim)).isEqualTo(PodRecords.pod(fabric8.unmarshal(fabric8.asJson(full), Pod.class)));
  }

  /** The same for nodes: a node's status lists every image it holds, and none of it is read. */
  @Test
  void nodeDecodingSkipsOnlyWhatNoRecordReads() {
    Node full = new NodeBuilder().withNewMetadata().withName("n1").withLabels(Map.of("zone", "a")).endMetadata()
        .withNewSpec().withUnschedulable(true).addNewTaint().withKey("k").withValue("v").withEffect("NoSchedule").endTaint().endSpec()
        .withNewStatus().addToAllocatable("cpu", new Quantity("4")).addToAllocatable("memory", new Quantity("8Gi"))
        .addNewCondition().withType("Ready").withStatus("True").endCondition()
        .addNewImage().withNames("registry/app:1").withSizeBytes(1000L).endImage()
        .withNewNodeInfo().withKubeletVersion("v1.20.2").endNodeInfo().endStatus().build();
    KubernetesSerialization fabric8 = new KubernetesSerialization();
    Node slim = PodRecords.serialization().unmarshal(fabric8.asJson(full), Node.class);

    assertThat(slim.getStatus().getImages()).isEmpty();
    assertThat(slim.getStatus().getNodeInfo()).isNull();
    assertThat(slim.getStatus().getAdditionalProperties()).isEmpty();
    assertThat(PodRecords.node(slim)).isEqualTo(PodRecords.node(fabric8.unmarshal(fabric8.asJson(full), Node.class)));
  }

  /** DefaultEvictor's PodsWithResourceClaims protection reads this. */
  @Test
  void resourceClaimsAreSeen() {
    Pod claiming = pod().editSpec().addNewResourceClaim().withName("gpu").endResourceClaim().endSpec().build();
    assertThat(PodRecords.pod(claiming).volumes().resourceClaims()).isTrue();
    assertThat(PodRecords.pod(pod().build()).volumes().resourceClaims()).isFalse();
  }

  /** Rules with ttlFrom read these keys on pods and namespaces; every other annotation is dropped. */
  @Test
  void thePerPodLifetimeAnnotationsAreKeptAndNoOthers() {
    Pod annotated = pod().editMetadata().addToAnnotations("podsweeper.io/ttl", "1h").addToAnnotations("janitor/expires", "2026-01-02")
        .addToAnnotations("kubectl.kubernetes.io/last-applied-configuration", "{}").endMetadata().build();
    assertThat(PodRecords.pod(annotated).annotations()).isEqualTo(java.util.Map.of("podsweeper.io/ttl", "1h", "janitor/expires", "2026-01-02"));
    io.fabric8.kubernetes.api.model.Namespace ns = new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName("dev")
        .addToAnnotations("podsweeper.io/expires", "2026-01-02T00:00:00Z").addToAnnotations("owner", "team-a").endMetadata().build();
    assertThat(PodRecords.namespace(ns).annotations()).isEqualTo(java.util.Map.of("podsweeper.io/expires", "2026-01-02T00:00:00Z"));
  }

  /** Match expressions read how a container's last run ended (lastState.terminated). */
  @Test
  void howAContainersLastRunEndedIsKept() {
    Pod restarted = pod().withNewStatus().addNewContainerStatus().withName("main").withRestartCount(21)
        .withNewLastState().withNewTerminated().withReason("OOMKilled").withExitCode(137).endTerminated().endLastState()
        .endContainerStatus().endStatus().build();
    var status = PodRecords.pod(restarted).containers().get(0);
    assertThat(status.lastTerminatedReason()).contains("OOMKilled");
    assertThat(status.lastExitCode()).hasValue(137);
    assertThat(PodRecords.pod(pod().build()).containers()).isEmpty();
  }

  /** Podsweeper's own rules protect system-critical pods by their priority class too. */
  @Test
  void thePriorityClassIsSeen() {
    Pod critical = pod().editSpec().withPriorityClassName("system-node-critical").endSpec().build();
    assertThat(PodRecords.pod(critical).priorityClassName()).isEqualTo("system-node-critical");
    assertThat(PodRecords.pod(pod().build()).priorityClassName()).isEmpty();
  }

  /**
   * A pod the kubelet evicted, as the API server returns it: its container ended as ContainerStatusUnknown without a
   * finishedAt, so its conditions say when it ended; the latest of them, never its creation a week before.
   */
  @Test
  void aKubeletEvictedPodEndsWhenItsConditionsSay() {
    Pod evicted = pod().withNewStatus().withPhase("Failed").withReason("Evicted").withStartTime("2026-01-01T00:00:05Z")
        .addNewContainerStatus().withName("main").withNewState().withNewTerminated().withReason("ContainerStatusUnknown")
        .withExitCode(137).withMessage("The container could not be located when the pod was terminated").endTerminated().endState()
        .endContainerStatus()
        .addNewCondition().withType("DisruptionTarget").withStatus("True").withReason("TerminationByKubelet")
        .withLastTransitionTime("2026-01-08T11:50:00Z").endCondition()
        .addNewCondition().withType("Ready").withStatus("False").withReason("PodFailed")
        .withLastTransitionTime("2026-01-08T11:50:02Z").endCondition()
        .endStatus().build();
    assertThat(PodRecords.pod(evicted).finish())
        .isEqualTo(new PodRecord.Finish(Instant.parse("2026-01-08T11:50:02Z"), Optional.of("Ready=False condition")));
  }

  /** Timestamps in the API server's shape are read without Instant.parse, to the same instant; anything else as Instant.parse reads it. */
  @Test
  void timestampsAreReadAsInstantParseReadsThem() {
    Random random = new Random(16);
    for (int i = 0; i < 10_000; i++) {
      String text = Instant.ofEpochSecond(random.nextLong(0, 4_102_444_800L)).toString(); // 1970 to 2100, to the second
      assertThat(PodRecords.time(text)).as(text).contains(Instant.parse(text));
    }
    for (String text : List.of("2024-02-29T23:59:59Z", "2026-11-25T10:00:00.123456Z", "2026-11-25T10:00:00+01:00", "2026-12-31T23:59:60Z",
        "2026-11-25T24:00:00Z", "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-25T10:60:00Z", "2026-11-25 10:00:00Z",
        "2026-1a-25T10:00:00Z", "-026-11-25T10:00:00Z", "yesterday", "")) {
      assertThat(PodRecords.time(text)).as(text).isEqualTo(instantParse(text));
    }
    assertThat(PodRecords.time("2026-02-29T00:00:00Z")).isEmpty();
    assertThat(PodRecords.time(null)).isEmpty();
  }

  private static Optional<Instant> instantParse(String text) {
    try {
      return Optional.of(Instant.parse(text));
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }
}
