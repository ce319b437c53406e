package io.podsweeper.bench;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.api.model.PodListBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.kube.PodRecords;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One page of a pod list (500 pods, as ResumingInformers asks for them): read into the informers' records
 * ({@link PodRecords#serialization}, pods read straight into records by PodJson), and, for reference, decoded into
 * fabric8's whole Pod objects (no records made). The pods are shaped as a Deployment's pods are on a real cluster
 * (managedFields, env, probes, mounts, the service-account token's projected volume, a security context, pod IPs),
 * where the load test's pods are bare. Run with the Deployment's JIT setting:
 * {@code java -jar target/benchmarks.jar PageDecodeBenchmark -jvmArgsAppend "-XX:TieredStopAtLevel=1 -XX:C1MaxInlineSize=15" -prof gc}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class PageDecodeBenchmark {
  private static final int PAGE = 500;
  private final KubernetesSerialization slim = PodRecords.serialization();
  private final KubernetesSerialization whole = new KubernetesSerialization();
  private final byte[] page = whole.asJson(new PodListBuilder().withNewMetadata().withResourceVersion("1").endMetadata()
      .withItems(IntStream.range(0, PAGE).mapToObj(PageDecodeBenchmark::deploymentPod).toList()).build()).getBytes(StandardCharsets.UTF_8);

  @Benchmark
  public List<PodRecord> records() {
    PodList list = slim.unmarshal(new ByteArrayInputStream(page), PodList.class);
    return list.getItems().stream().map(PodRecords::pod).toList();
  }

  @Benchmark
  public List<Pod> wholeObjects() {
    return whole.unmarshal(new ByteArrayInputStream(page), PodList.class).getItems();
  }

  /**
   * 10,000 pods (20 pages) read once into records by a fresh JVM: the start-up case, where most of the work runs before
   * the JIT has compiled it. Five forks, one shot each.
   */
  @Benchmark
  @BenchmarkMode(Mode.SingleShotTime)
  @Warmup(iterations = 0)
  @Measurement(iterations = 1)
  @Fork(5)
  public int coldTenThousandRecords() {
    int read = 0;
    for (int i = 0; i < 20; i++) {
      read += records().size();
    }
    return read;
  }

  static Pod deploymentPod(int i) {
    String name = "web-7d9f8c6b5-" + i;
    return new PodBuilder().withNewMetadata().withName(name).withNamespace("shop").withUid("uid-" + i).withResourceVersion(String.valueOf(1000 + i))
        .withCreationTimestamp("2026-11-20T10:00:00Z").withLabels(Map.of("app", "web", "pod-template-hash", "7d9f8c6b5", "tier", "frontend"))
        .withAnnotations(Map.of("kubectl.kubernetes.io/restartedAt", "2026-11-20T09:59:00Z", "prometheus.io/scrape", "true"))
        .addNewOwnerReference().withApiVersion("apps/v1").withKind("ReplicaSet").withName("web-7d9f8c6b5").withUid("rs-uid").withController(true)
        .withBlockOwnerDeletion(true).endOwnerReference()
        .withManagedFields(new ManagedFieldsEntryBuilder().withManager("kube-controller-manager").withOperation("Update").withApiVersion("v1")
            .withNewFieldsV1().addToAdditionalProperties("f:metadata", Map.of("f:labels", Map.of("f:app", Map.of(), "f:tier", Map.of())))
            .addToAdditionalProperties("f:spec", Map.of("f:containers", Map.of("k:{\"name\":\"web\"}", Map.of("f:image", Map.of(), "f:env", Map.of()))))
            .endFieldsV1().build(),
            new ManagedFieldsEntryBuilder().withManager("kubelet").withOperation("Update").withApiVersion("v1").withSubresource("status")
                .withNewFieldsV1().addToAdditionalProperties("f:status", Map.of("f:conditions", Map.of(), "f:podIP", Map.of())).endFieldsV1().build())
        .endMetadata()
        .withNewSpec().withNodeName("node-" + (i % 20)).withServiceAccountName("web").withRestartPolicy("Always").withDnsPolicy("ClusterFirst")
        .withSchedulerName("default-scheduler").withTerminationGracePeriodSeconds(30L).withPriority(0).withEnableServiceLinks(true)
        .withNewSecurityContext().withRunAsNonRoot(true).withRunAsUser(1000L).withFsGroup(2000L).endSecurityContext()
        .addNewContainer().withName("web").withImage("registry.example/shop/web:1.42.0").withImagePullPolicy("IfNotPresent")
        .addNewPort().withName("http").withContainerPort(8080).withProtocol("TCP").endPort()
        .withEnv(IntStream.range(0, 10).mapToObj(e -> new io.fabric8.kubernetes.api.model.EnvVar("SETTING_" + e, "value-" + e, null)).toList())
        .withNewResources().addToRequests("cpu", new Quantity("250m")).addToRequests("memory", new Quantity("256Mi"))
        .addToLimits("memory", new Quantity("512Mi")).endResources()
        .withNewReadinessProbe().withNewHttpGet().withPath("/ready").withPort(new IntOrString(8080)).endHttpGet().withPeriodSeconds(5).endReadinessProbe()
        .withNewLivenessProbe().withNewHttpGet().withPath("/live").withPort(new IntOrString(8080)).endHttpGet().withPeriodSeconds(10).endLivenessProbe()
        .addNewVolumeMount().withName("config").withMountPath("/etc/web").endVolumeMount()
        .addNewVolumeMount().withName("kube-api-access").withMountPath("/var/run/secrets/kubernetes.io/serviceaccount").withReadOnly(true).endVolumeMount()
        .withTerminationMessagePath("/dev/termination-log").withTerminationMessagePolicy("File").endContainer()
        .addNewVolume().withName("config").withNewConfigMap().withName("web-config").withDefaultMode(420).endConfigMap().endVolume()
        .addNewVolume().withName("kube-api-access").withNewProjected().withDefaultMode(420)
        .addNewSource().withNewServiceAccountToken().withExpirationSeconds(3607L).withPath("token").endServiceAccountToken().endSource()
        .addNewSource().withNewConfigMap().withName("kube-root-ca.crt").addNewItem().withKey("ca.crt").withPath("ca.crt").endItem().endConfigMap().endSource()
        .addNewSource().withNewDownwardAPI().addNewItem().withPath("namespace").withNewFieldRef().withApiVersion("v1").withFieldPath("metadata.namespace")
        .endFieldRef().endItem().endDownwardAPI().endSource().endProjected().endVolume()
        .addNewToleration().withKey("node.kubernetes.io/not-ready").withOperator("Exists").withEffect("NoExecute").withTolerationSeconds(300L).endToleration()
        .addNewToleration().withKey("node.kubernetes.io/unreachable").withOperator("Exists").withEffect("NoExecute").withTolerationSeconds(300L).endToleration()
        .endSpec()
        .withNewStatus().withPhase("Running").withHostIP("10.1.0." + (i % 20)).withPodIP("10.2." + (i / 250) + "." + (i % 250)).withQosClass("Burstable")
        .withStartTime("2026-11-20T10:00:01Z")
        .addNewCondition().withType("Initialized").withStatus("True").withLastTransitionTime("2026-11-20T10:00:01Z").endCondition()
        .addNewCondition().withType("Ready").withStatus("True").withLastTransitionTime("2026-11-20T10:00:09Z").endCondition()
        .addNewCondition().withType("ContainersReady").withStatus("True").withLastTransitionTime("2026-11-20T10:00:09Z").endCondition()
        .addNewCondition().withType("PodScheduled").withStatus("True").withLastTransitionTime("2026-11-20T10:00:00Z").endCondition()
        .addNewContainerStatus().withName("web").withImage("registry.example/shop/web:1.42.0").withImageID("registry.example/shop/web@sha256:abc")
        .withContainerID("containerd://" + i).withReady(true).withStarted(true).withRestartCount(0)
        .withNewState().withNewRunning().withStartedAt("2026-11-20T10:00:03Z").endRunning().endState().endContainerStatus()
        .endStatus().build();
  }
}
