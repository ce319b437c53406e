package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NodeSelectorTerm;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodCondition;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.cluster.Toleration;
import io.podsweeper.cluster.Volumes;
import io.podsweeper.policy.EndedBy;
import io.podsweeper.policy.LabelSelector;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The API object becomes the slim record the decision core reads. */
class PodRecordsTest {
  private static PodBuilder pod() {
    return new PodBuilder().withNewMetadata().withName("p").withNamespace("ns").withUid("u").withResourceVersion("1")
        .withCreationTimestamp("2026-01-01T00:00:00Z").endMetadata()
        .withNewSpec().withNodeName("n1").addNewContainer().withName("main").withImage("busybox").endContainer().endSpec();
  }

  /** The informers' serialization as the pods' informer leaves it: it knows the pods' kind (KubeSerialization.expect). */
  private static KubernetesSerialization podsWatched() {
    KubernetesSerialization serialization = PodRecords.serialization();
    KubeSerialization.expect(serialization, Pod.class);
    return serialization;
  }

  /**
   * The informers read a pod's JSON straight into its record (PodJson): every field a record is made of, from a pod
   * with most of what a real one carries (managedFields, env, probes, mounts, projected volumes) around them. The
   * same record comes of a fabric8 Pod (snapshots, the CLI), of a list's items and of a watch event's object.
   */
  /** A pod with most of what a real one carries, every field a record is made of set (PodProtoIT reads it from a server). */
  static Pod full() {
    return pod().editMetadata().withLabels(Map.of("app", "web")).withAnnotations(Map.of(PodRecord.EVICT_ANNOTATION, "true", "x", "y"))
        .withDeletionTimestamp("2026-01-02T00:00:00Z")
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
        .addNewContainer().withName("sidecar").withImage("envoy").withNewResources().addToRequests("cpu", new Quantity("0.2"))
        .addToRequests("memory", new Quantity("64Mi")).endResources().endContainer()
        .addNewInitContainer().withName("init").withImage("busybox").withCommand("true").endInitContainer()
        .addNewInitContainer().withName("proxy").withImage("envoy").withRestartPolicy("Always").endInitContainer()
        .addNewVolume().withName("tmp").withNewEmptyDir().endEmptyDir().endVolume()
        .addNewVolume().withName("data").withNewPersistentVolumeClaim().withClaimName("data").endPersistentVolumeClaim().endVolume()
        .addNewVolume().withName("token").withNewProjected().addNewSource().withNewServiceAccountToken().withPath("token").endServiceAccountToken()
        .endSource().endProjected().endVolume()
        .withNewSecurityContext().withRunAsUser(1000L).endSecurityContext().withRestartPolicy("Never").withServiceAccountName("web")
        .addNewToleration().withKey("k").withOperator("Exists").withEffect("NoExecute").withTolerationSeconds(30L).endToleration()
        .withNewAffinity().withNewPodAntiAffinity().addNewRequiredDuringSchedulingIgnoredDuringExecution().withTopologyKey("kubernetes.io/hostname")
        .withNewLabelSelector().addToMatchLabels("app", "web").addNewMatchExpression().withKey("tier").withOperator("In").withValues("a", "b")
        .endMatchExpression().endLabelSelector().withNamespaces("shop").withNewNamespaceSelector().endNamespaceSelector()
        .endRequiredDuringSchedulingIgnoredDuringExecution().endPodAntiAffinity()
        .withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution().addNewNodeSelectorTerm().addNewMatchExpression().withKey("disk")
        .withOperator("In").withValues("ssd").endMatchExpression().endNodeSelectorTerm().endRequiredDuringSchedulingIgnoredDuringExecution()
        .addNewPreferredDuringSchedulingIgnoredDuringExecution().withWeight(7).withNewPreference().addNewMatchExpression().withKey("zone")
        .withOperator("Exists").endMatchExpression().endPreference().endPreferredDuringSchedulingIgnoredDuringExecution().endNodeAffinity()
        .endAffinity()
        .addNewTopologySpreadConstraint().withMaxSkew(2).withTopologyKey("zone").withWhenUnsatisfiable("DoNotSchedule")
        .withNewLabelSelector().addToMatchLabels("app", "web").endLabelSelector().withMatchLabelKeys("pod-template-hash")
        .withNodeTaintsPolicy("Honor").endTopologySpreadConstraint()
        .endSpec()
        .withNewStatus().withPhase("Running").withReason("Testing").withMessage(EndedBy.NODE_SHUTDOWN_MESSAGE).withStartTime("2026-01-01T00:00:05Z").withPodIP("10.0.0.7")
        .addNewCondition().withType("Ready").withStatus("True").withReason("Fine").withLastTransitionTime("2026-01-01T00:00:06Z").endCondition()
        .addNewInitContainerStatus().withName("init").withNewState().withNewTerminated().withReason("Completed").withExitCode(0)
        .withFinishedAt("2026-01-01T00:00:04Z").endTerminated().endState().endInitContainerStatus()
        .addNewInitContainerStatus().withName("proxy").withRestartCount(2).withNewState().withNewRunning().endRunning().endState()
        .endInitContainerStatus()
        .addNewContainerStatus().withName("main").withImageID("sha").withContainerID("c").withRestartCount(3)
        .withNewLastState().withNewTerminated().withExitCode(1).withReason("Error").endTerminated().endLastState()
        .withNewState().withNewWaiting().withReason("CrashLoopBackOff").endWaiting().endState().endContainerStatus()
        .endStatus().build();
  }

  @Test
  void aPodsJsonBecomesItsRecord() {
    Pod full = full();
    LabelSelector web = new LabelSelector(Map.of("app", "web"), List.of());
    PodRecord expected = new PodRecord("ns", "p", "u", "1", Instant.parse("2026-01-01T00:00:00Z"), Optional.of(Instant.parse("2026-01-02T00:00:00Z")),
        "n1", "Running", Optional.of("Testing"), Map.of("app", "web"), Map.of(PodRecord.EVICT_ANNOTATION, "true"),
        List.of(new OwnerRef("ReplicaSet", "web-1", "rs", true)),
        List.of(new ContainerStatus("main", ContainerStatus.Kind.MAIN, Optional.of("CrashLoopBackOff"), Optional.empty(), OptionalInt.empty(),
                Optional.empty(), 3, Optional.of("Error"), OptionalInt.of(1)),
            new ContainerStatus("init", ContainerStatus.Kind.INIT, Optional.empty(), Optional.of("Completed"), OptionalInt.of(0),
                Optional.of(Instant.parse("2026-01-01T00:00:04Z")), 0),
            new ContainerStatus("proxy", ContainerStatus.Kind.SIDECAR, Optional.empty(), Optional.empty(), OptionalInt.empty(),
                Optional.empty(), 2)),
        OptionalInt.of(100), "high", Optional.of(Instant.parse("2026-01-01T00:00:05Z")),
        List.of(new PodCondition("Ready", "True", Optional.of("Fine"), Optional.of(Instant.parse("2026-01-01T00:00:06Z")))),
        new Volumes(true, List.of("data"), false),
        new Scheduling(Map.of("zone", "a"),
            List.of(new NodeSelectorTerm(List.of(new NodeSelectorTerm.Requirement("disk", "In", List.of("ssd"))))),
            List.of(new Scheduling.PreferredTerm(7, new NodeSelectorTerm(List.of(new NodeSelectorTerm.Requirement("zone", "Exists", List.of()))))),
            List.of(new Toleration("k", "Exists", "", "NoExecute")),
            List.of(new Scheduling.PodAffinityTerm(new LabelSelector(Map.of("app", "web"),
                List.of(new LabelSelector.Requirement("tier", LabelSelector.Operator.In, Set.of("a", "b")))), Set.of("shop"),
                Optional.of(LabelSelector.EVERYTHING), "kubernetes.io/hostname")),
            Map.of("cpu", 300L, "memory", 64L * 1024 * 1024), "Burstable",
            List.of(new Scheduling.SpreadConstraint(2, "zone", "DoNotSchedule", web, List.of("pod-template-hash"), true, true))),
        List.of("busybox", "envoy"), List.of(), true);
    KubernetesSerialization fabric8 = new KubernetesSerialization();
    String json = fabric8.asJson(full);

    assertThat(PodRecords.pod(PodRecords.serialization().unmarshal(json, Pod.class))).isEqualTo(expected);
    assertThat(PodRecords.pod(full)).isEqualTo(expected);
    PodList list = PodRecords.serialization().unmarshal("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":[" + json + "]}", PodList.class);
    assertThat(list.getItems()).singleElement().satisfies(p -> assertThat(PodRecords.pod(p)).isEqualTo(expected));
    WatchEvent event = podsWatched().unmarshal("{\"type\":\"MODIFIED\",\"object\":" + json + "}", WatchEvent.class);
    assertThat(PodRecords.pod((Pod) event.getObject())).isEqualTo(expected);
    // The QoS class the API server would give, when the status has none; the whole pod becomes one identity for fabric8.
    Pod noQos = new PodBuilder(full).editStatus().withQosClass(null).endStatus().build();
    assertThat(PodRecords.pod(noQos).scheduling().qosClass()).isEqualTo("Burstable");
    assertThat(PodRecords.serialization().unmarshal(json, Pod.class).getMetadata())
        .isEqualTo(RecordStore.identity("ns", "p", "u", "1"));
  }

  /**
   * What a pod takes of a node is what the scheduler's NodeResourcesFit counts (component-helpers' PodRequests): the
   * main containers and the sidecars summed, each other init container with the sidecars started before it where that
   * is more, then the overhead. Summing the main containers alone would let a pod "fit" where its init container cannot.
   */
  @Test
  void requestsAreWhatTheSchedulerCounts() {
    Pod pod = pod().editSpec().editFirstContainer().withNewResources().addToRequests("cpu", new Quantity("500m"))
        .addToRequests("memory", new Quantity("1Gi")).endResources().endContainer()
        .addNewInitContainer().withName("proxy").withImage("envoy").withRestartPolicy("Always").withNewResources()
        .addToRequests("cpu", new Quantity("100m")).endResources().endInitContainer()
        .addNewInitContainer().withName("migrate").withImage("m").withNewResources().addToRequests("cpu", new Quantity("1"))
        .addToRequests("memory", new Quantity("256Mi")).endResources().endInitContainer()
        .withOverhead(Map.of("cpu", new Quantity("50m"))).endSpec().build();

    // cpu: max(500 + 100 sidecar, 100 sidecar + 1000 init) + 50 overhead; memory: max(1Gi, 256Mi).
    assertThat(PodRecords.pod(pod).scheduling().requests()).isEqualTo(Map.of("cpu", 1150L, "memory", 1L << 30));
    Pod plain = pod().editSpec().editFirstContainer().withNewResources().addToRequests("cpu", new Quantity("500m")).endResources()
        .endContainer().addNewInitContainer().withName("small").withImage("i").withNewResources().addToRequests("cpu", new Quantity("200m"))
        .endResources().endInitContainer().endSpec().build();
    assertThat(PodRecords.pod(plain).scheduling().requests()).isEqualTo(Map.of("cpu", 500L));
  }

  /** The scheduler's NodePorts counts the main containers' host ports (the API's defaults: TCP, every address); InterPodAffinity the required pod affinity. */
  @Test
  void hostPortsAndRequiredPodAffinityAreRead() {
    Pod pod = pod().editSpec().editFirstContainer().addNewPort().withContainerPort(80).withHostPort(8080).endPort()
        .addNewPort().withContainerPort(53).withHostPort(53).withProtocol("UDP").withHostIP("10.0.0.1").endPort()
        .addNewPort().withContainerPort(9090).endPort().endContainer()
        .addNewInitContainer().withName("init").withImage("i").addNewPort().withContainerPort(1).withHostPort(9000).endPort().endInitContainer()
        .withNewAffinity().withNewPodAffinity().addNewRequiredDuringSchedulingIgnoredDuringExecution().withTopologyKey("zone")
        .withNewLabelSelector().addToMatchLabels("app", "db").endLabelSelector().endRequiredDuringSchedulingIgnoredDuringExecution()
        .endPodAffinity().endAffinity().endSpec().build();

    Scheduling scheduling = PodRecords.pod(pod).scheduling();

    assertThat(scheduling.hostPorts()).containsExactly(new Scheduling.HostPort("0.0.0.0", "TCP", 8080),
        new Scheduling.HostPort("10.0.0.1", "UDP", 53));
    assertThat(scheduling.requiredPodAffinity()).containsExactly(new Scheduling.PodAffinityTerm(new LabelSelector(Map.of("app", "db"), List.of()),
        Set.of(), Optional.empty(), "zone"));
    assertThat(scheduling.requiredPodAntiAffinity()).isEmpty();
  }

  /** One pod the record cannot be made of does not fail the list it came in: the others are read, and it is reported. */
  @Test
  void anUnreadablePodFailsAloneNotItsList() {
    KubernetesSerialization fabric8 = new KubernetesSerialization();
    Pod odd = pod().editMetadata().withName("odd").endMetadata().editSpec().withNewAffinity().withNewPodAntiAffinity()
        .addNewRequiredDuringSchedulingIgnoredDuringExecution().withTopologyKey("zone").withNewLabelSelector().addNewMatchExpression()
        .withKey("app").withOperator("Near").endMatchExpression().endLabelSelector().endRequiredDuringSchedulingIgnoredDuringExecution()
        .endPodAntiAffinity().endAffinity().endSpec().build();
    String items = fabric8.asJson(pod().editMetadata().withName("a").endMetadata().build()) + "," + fabric8.asJson(odd) + ","
        + fabric8.asJson(pod().editMetadata().withName("b").endMetadata().build());

    PodList list = PodRecords.serialization().unmarshal("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":[" + items + "]}", PodList.class);

    assertThat(list.getItems()).extracting(p -> p.getMetadata().getName()).containsExactly("a", "odd", "b");
    assertThat(PodRecords.pod(list.getItems().get(2)).name()).isEqualTo("b");
    assertThatThrownBy(() -> PodRecords.pod(list.getItems().get(1))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Near");
    WatchEvent event = podsWatched().unmarshal("{\"type\":\"ADDED\",\"object\":" + fabric8.asJson(odd) + "}", WatchEvent.class);
    assertThat(((Pod) event.getObject()).getMetadata().getName()).isEqualTo("odd");
    assertThatThrownBy(() -> PodRecords.pod((Pod) event.getObject())).isInstanceOf(IllegalArgumentException.class);
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

  /** Koordinator's MigrationController never evicts a pod of the maximum eviction cost: the annotation is kept. */
  @Test
  void koordinatorsEvictionCostIsKept() {
    Pod annotated = pod().editMetadata().addToAnnotations("scheduling.koordinator.sh/eviction-cost", "2147483647").endMetadata().build();
    assertThat(PodRecords.pod(annotated).annotations()).containsEntry("scheduling.koordinator.sh/eviction-cost", "2147483647");
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

  /**
   * Kubernetes 1.27+ {@code spec.schedulingGates} (Kueue's admission gate) and 1.29+ native sidecars
   * ({@code spec.initContainers[].restartPolicy: Always}): the gates' names are kept, and a sidecar's status is told from
   * an ordinary init container's by its spec, whichever comes first in the JSON; what the kubelet writes on a graceful
   * node shutdown is kept as a flag, not as its message.
   */
  @Test
  void schedulingGatesSidecarsAndTheNodeShutdownMessageAreKept() {
    String json = "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
        + "\"status\":{\"phase\":\"Failed\",\"reason\":\"Terminated\",\"message\":\"" + EndedBy.NODE_SHUTDOWN_MESSAGE + "\","
        + "\"initContainerStatuses\":[{\"name\":\"setup\",\"restartCount\":1},{\"name\":\"proxy\",\"restartCount\":5}]},"
        + "\"spec\":{\"schedulingGates\":[{\"name\":\"kueue.x-k8s.io/admission\"}],\"containers\":[{\"name\":\"main\",\"image\":\"app\"}],"
        + "\"initContainers\":[{\"name\":\"setup\",\"image\":\"busybox\",\"restartPolicy\":\"OnFailure\"},"
        + "{\"name\":\"proxy\",\"image\":\"envoy\",\"restartPolicy\":\"Always\"}]}}";
    PodRecord watched = PodRecords.pod(PodRecords.serialization().unmarshal(json, Pod.class));
    PodRecord fromSnapshot = PodRecords.pod(new KubernetesSerialization().unmarshal(json, Pod.class));

    assertThat(watched).isEqualTo(fromSnapshot);
    assertThat(watched.schedulingGates()).containsExactly("kueue.x-k8s.io/admission");
    assertThat(watched.containers()).extracting(c -> c.name() + " " + c.kind()).containsExactly("setup INIT", "proxy SIDECAR");
    assertThat(watched.endedBy()).containsExactly(EndedBy.NodeShutdown);
    assertThat(PodRecords.pod(pod().withNewStatus().withReason("Terminated").withMessage("something else").endStatus().build()).endedBy())
        .isEmpty();
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
