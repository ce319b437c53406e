package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeSelectorTerm;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * The builders of the descheduler's and Koordinator's unit tests ({@code test/test_utils.go} in both), in PodFixtures'
 * terms, so a translated table reads like its original: {@code testPod("p1", 400, 0, N1, UpstreamFixtures::rsOwner)}.
 * As there, a pod is bare (no ownerReferences) in namespace {@code default} and requests its cpu (millicores) and
 * memory (bytes); a node is Ready with that cpu, memory and pod slots allocatable and no labels.
 */
final class UpstreamFixtures {
  static final String N1 = "n1";
  static final String N2 = "n2";
  static final String N3 = "n3";
  /** Both tables' {@code extendedResource}. */
  static final String EXTENDED = "example.com/foo";
  static final int LOW_PRIORITY = 0;
  static final int HIGH_PRIORITY = 10000;
  /** {@code utils.SystemCriticalPriority}. */
  static final int SYSTEM_CRITICAL = 2_000_000_000;

  private UpstreamFixtures() {}

  /** A pod under construction: what the Go tests' {@code apply} functions change. */
  static final class TestPod {
    final PodFixtures.PodBuilder builder;
    long cpu;
    long memory;

    private TestPod(PodFixtures.PodBuilder builder, long cpu, long memory) {
      this.builder = builder;
      this.cpu = cpu;
      this.memory = memory;
    }
  }

  @SafeVarargs
  static PodRecord testPod(String name, long millicpu, long memory, String node, Consumer<TestPod>... apply) {
    TestPod pod = new TestPod(PodFixtures.pod(name).on(node).bare(), millicpu, memory);
    for (Consumer<TestPod> a : apply) {
      a.accept(pod);
    }
    return pod.builder.requests("cpu", pod.cpu).requests("memory", pod.memory).build();
  }

  @SafeVarargs
  static NodeRecord testNode(String name, long millicpu, long memory, long pods, Consumer<PodFixtures.NodeBuilder>... apply) {
    PodFixtures.NodeBuilder node = PodFixtures.node(name).cpu(millicpu).allocatable("memory", memory).podSlots(pods);
    for (Consumer<PodFixtures.NodeBuilder> a : apply) {
      a.accept(node);
    }
    return node.build();
  }

  /** The tables' usual three nodes: n1 of 9 pod slots, n2 of 10, n3 of 10 and unschedulable; 4 cores and 3000 bytes each. */
  static List<NodeRecord> threeNodes() {
    return List.of(testNode(N1, 4000, 3000, 9), testNode(N2, 4000, 3000, 10), testNode(N3, 4000, 3000, 10, UpstreamFixtures::unschedulable));
  }

  @SafeVarargs
  static PodRecord[] pods(Stream<PodRecord>... parts) {
    return Stream.of(parts).flatMap(s -> s).toArray(PodRecord[]::new);
  }

  /** Pods of the ReplicaSet on n1. */
  static Stream<PodRecord> rsPods(long cpu, long memory, String... names) {
    return Stream.of(names).map(n -> testPod(n, cpu, memory, N1, UpstreamFixtures::rsOwner));
  }

  /**
   * The pods no case may evict, on n1: p6 (a DaemonSet's), p7 (local storage, a mirror pod) and p8 (system-critical;
   * bare, or with a normal owner when {@code owned}, as the case has it).
   */
  static Stream<PodRecord> unevictable(long cpu, long memory, boolean owned) {
    return Stream.of(testPod("p6", cpu, memory, N1, UpstreamFixtures::dsOwner), testPod("p7", cpu, memory, N1, UpstreamFixtures::localStorageMirror),
        owned ? testPod("p8", cpu, memory, N1, UpstreamFixtures::normalOwner, UpstreamFixtures::critical)
            : testPod("p8", cpu, memory, N1, UpstreamFixtures::critical));
  }

  /** p9, the ReplicaSet's pod on n2. */
  static PodRecord p9(long cpu) {
    return testPod("p9", cpu, 0, N2, UpstreamFixtures::rsOwner);
  }

  /** The "only other node doesn't match" cases' nodes: n1, and n2 (10 pod slots) labelled {@code datacenter: east}. */
  static List<NodeRecord> eastN2() {
    return List.of(testNode(N1, 4000, 3000, 9), testNode(N2, 4000, 3000, 10, label("datacenter", "east")));
  }

  /** Their p4 and p5 on n1, with a normal owner, selecting {@code datacenter: west} by node selector or required affinity. */
  static Stream<PodRecord> westOnly(boolean byAffinity) {
    return Stream.of("p4", "p5").map(n -> testPod(n, 400, 0, N1, UpstreamFixtures::normalOwner,
        byAffinity ? requiredAffinity("datacenter", "west") : nodeSelector("datacenter", "west")));
  }

  /** "without priorities evicting best-effort pods only": p1-p5 of 400m on n1, all BestEffort but p3. */
  static Stream<PodRecord> bestEffortButP3() {
    return Stream.of("p1", "p2", "p3", "p4", "p5").map(n -> n.equals("p3") ? testPod(n, 400, 0, N1, UpstreamFixtures::rsOwner)
        : testPod(n, 400, 0, N1, UpstreamFixtures::rsOwner, UpstreamFixtures::bestEffort));
  }

  /** {@code SetRSOwnerRef}: every such pod has the same owner, ReplicaSet {@code replicaset-1}. */
  static void rsOwner(TestPod pod) {
    owner(pod, "ReplicaSet", "replicaset-1");
  }

  /** {@code SetDSOwnerRef}. */
  static void dsOwner(TestPod pod) {
    owner(pod, "DaemonSet", "");
  }

  /** {@code SetNormalOwnerRef}: an ownerReference of kind Pod, which is no controller. */
  static void normalOwner(TestPod pod) {
    owner(pod, "Pod", "");
  }

  private static void owner(TestPod pod, String kind, String name) {
    pod.builder.owners(List.of(new OwnerRef(kind, name, "", false)));
  }

  /** {@code withLocalStorage}: a normal owner, a hostPath and emptyDir volume, and the mirror pod annotations. */
  static void localStorageMirror(TestPod pod) {
    normalOwner(pod);
    pod.builder.localStorage().annotation("kubernetes.io/created-by", "{\"kind\":\"SerializedReference\",\"apiVersion\":\"v1\","
        + "\"reference\":{\"kind\":\"Pod\"}}").annotation("kubernetes.io/config.source", "api").annotation("kubernetes.io/config.mirror", "mirror");
  }

  /** {@code withCriticalPod}'s namespace and priority (the Go cases set the owner themselves). */
  static void critical(TestPod pod) {
    pod.builder.ns("kube-system").priority(SYSTEM_CRITICAL);
  }

  /** {@code MakeBestEffortPod}: no requests at all. */
  static void bestEffort(TestPod pod) {
    pod.cpu = 0;
    pod.memory = 0;
  }

  static Consumer<TestPod> priority(int value) {
    return pod -> pod.builder.priority(value);
  }

  static Consumer<TestPod> namespace(String value) {
    return pod -> pod.builder.ns(value);
  }

  /** {@code SetPodExtendedResourceRequest(pod, extendedResource, n)}. */
  static Consumer<TestPod> extended(long amount) {
    return pod -> pod.builder.requests(EXTENDED, amount);
  }

  static Consumer<TestPod> nodeSelector(String key, String value) {
    return pod -> pod.builder.nodeSelector(Map.of(key, value));
  }

  /** A required node affinity of one term: {@code key In [value]}. */
  static Consumer<TestPod> requiredAffinity(String key, String value) {
    return pod -> pod.builder.requiredNodeAffinity(new NodeSelectorTerm(List.of(new NodeSelectorTerm.Requirement(key, "In", List.of(value)))));
  }

  /** A toleration of {@code key=value} for every effect (the Go tests' toleration without an effect). */
  static Consumer<TestPod> tolerates(String key, String value) {
    return pod -> pod.builder.tolerates(key, value, "");
  }

  /** {@code SetNodeUnschedulable}. */
  static void unschedulable(PodFixtures.NodeBuilder node) {
    node.unschedulable();
  }

  /** {@code SetNodeExtendedResource(node, extendedResource, n)}. */
  static Consumer<PodFixtures.NodeBuilder> extendedCapacity(long amount) {
    return node -> node.allocatable(EXTENDED, amount);
  }

  static Consumer<PodFixtures.NodeBuilder> label(String key, String value) {
    return node -> node.label(key, value);
  }

  static Consumer<PodFixtures.NodeBuilder> taint(String key, String value, String effect) {
    return node -> node.taint(key, value, effect);
  }
}
