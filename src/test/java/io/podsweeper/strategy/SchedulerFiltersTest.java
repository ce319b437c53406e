package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.node;
import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeSelectorTerm;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling.HostPort;
import io.podsweeper.cluster.Toleration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The node-only filters against the kube-scheduler's (v1.29) semantics, each case a rule of the scheduler's plugin
 * (pkg/scheduler/framework/plugins: nodeunschedulable, tolerationtoleration, nodeaffinity, nodeports, noderesources).
 */
class SchedulerFiltersTest {
  private static Optional<String> reason(Optional<SchedulerFilters.Unfit> unfit) {
    return unfit.map(SchedulerFilters.Unfit::reason);
  }

  /** NodeUnschedulable: a cordoned node refuses every pod but one tolerating node.kubernetes.io/unschedulable:NoSchedule. */
  @Test
  void nodeUnschedulable() {
    NodeRecord cordoned = node("n").unschedulable().build();
    assertThat(reason(SchedulerFilters.nodeUnschedulable(pod("p").build(), cordoned))).hasValue("node(s) were unschedulable");
    PodRecord tolerating = pod("p").toleration(new Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")).build();
    assertThat(SchedulerFilters.nodeUnschedulable(tolerating, cordoned)).isEmpty();
    PodRecord everything = pod("p").toleration(new Toleration("", "Exists", "", "")).build();
    assertThat(SchedulerFilters.nodeUnschedulable(everything, cordoned)).isEmpty();
    assertThat(SchedulerFilters.nodeUnschedulable(pod("p").build(), node("n").build())).isEmpty();
  }

  /**
   * TaintToleration: NoSchedule and NoExecute taints must be tolerated (PreferNoSchedule is only scored); a toleration
   * matches by key (empty with Exists: every key), value (Equal) and effect (empty: every effect).
   */
  @Test
  void taintToleration() {
    NodeRecord tainted = node("n").taint("gpu", "true", "NoSchedule").taint("soft", "x", "PreferNoSchedule").build();
    assertThat(reason(SchedulerFilters.taintToleration(pod("p").build(), tainted))).hasValue("node(s) had untolerated taint {gpu: true}");
    assertThat(SchedulerFilters.taintToleration(pod("p").tolerates("gpu", "true", "NoSchedule").build(), tainted)).isEmpty();
    assertThat(SchedulerFilters.taintToleration(pod("p").tolerates("gpu", "false", "NoSchedule").build(), tainted)).isPresent();
    assertThat(SchedulerFilters.taintToleration(pod("p").toleration(new Toleration("gpu", "Exists", "", "")).build(), tainted)).isEmpty();
    assertThat(SchedulerFilters.taintToleration(pod("p").toleration(new Toleration("gpu", "Exists", "", "NoExecute")).build(), tainted))
        .isPresent();
    NodeRecord draining = node("n").taint("maintenance", "", "NoExecute").build();
    assertThat(SchedulerFilters.taintToleration(pod("p").build(), draining)).isPresent();
    assertThat(SchedulerFilters.taintToleration(pod("p").build(), node("n").taint("soft", "x", "PreferNoSchedule").build())).isEmpty();
  }

  /**
   * NodeAffinity: every nodeSelector label, and one of the required terms (ORed), each term's requirements ANDed; a term
   * without requirements matches no node; Gt and Lt compare whole numbers.
   */
  @Test
  void nodeAffinity() {
    NodeRecord n = node("n").label("zone", "a").label("disk", "ssd").label("cores", "16").build();
    assertThat(SchedulerFilters.nodeAffinity(pod("p").nodeSelector(Map.of("zone", "a")).build(), n)).isEmpty();
    assertThat(reason(SchedulerFilters.nodeAffinity(pod("p").nodeSelector(Map.of("zone", "a", "gpu", "yes")).build(), n)))
        .hasValue("node(s) didn't match Pod's node affinity/selector");
    NodeSelectorTerm zoneB = new NodeSelectorTerm(List.of(new NodeSelectorTerm.Requirement("zone", "In", List.of("b"))));
    NodeSelectorTerm ssdBig = new NodeSelectorTerm(List.of(new NodeSelectorTerm.Requirement("disk", "In", List.of("ssd")),
        new NodeSelectorTerm.Requirement("cores", "Gt", List.of("8"))));
    NodeSelectorTerm ssdHuge = new NodeSelectorTerm(List.of(new NodeSelectorTerm.Requirement("disk", "In", List.of("ssd")),
        new NodeSelectorTerm.Requirement("cores", "Gt", List.of("32"))));
    assertThat(SchedulerFilters.nodeAffinity(pod("p").requiredNodeAffinity(zoneB, ssdBig).build(), n)).isEmpty();
    assertThat(SchedulerFilters.nodeAffinity(pod("p").requiredNodeAffinity(zoneB, ssdHuge).build(), n)).isPresent();
    assertThat(SchedulerFilters.nodeAffinity(pod("p").requiredNodeAffinity(new NodeSelectorTerm(List.of())).build(), n)).isPresent();
    assertThat(SchedulerFilters.nodeAffinity(pod("p").nodeSelector(Map.of("zone", "a")).requiredNodeAffinity(zoneB).build(), n)).isPresent();
  }

  /**
   * NodePorts: a wanted host port conflicts with a used one of the same number and protocol on the same address, or on
   * any address when either is 0.0.0.0.
   */
  @Test
  void nodePorts() {
    PodRecord wants = pod("p").hostPort("0.0.0.0", "TCP", 8080).build();
    assertThat(reason(SchedulerFilters.nodePorts(wants, List.of(new HostPort("10.0.0.1", "TCP", 8080)))))
        .hasValue("node(s) didn't have free ports for the requested pod ports");
    assertThat(SchedulerFilters.nodePorts(wants, List.of(new HostPort("0.0.0.0", "UDP", 8080), new HostPort("0.0.0.0", "TCP", 8081))))
        .isEmpty();
    PodRecord onOneAddress = pod("p").hostPort("10.0.0.1", "TCP", 8080).build();
    assertThat(SchedulerFilters.nodePorts(onOneAddress, List.of(new HostPort("10.0.0.2", "TCP", 8080)))).isEmpty();
    assertThat(SchedulerFilters.nodePorts(onOneAddress, List.of(new HostPort("0.0.0.0", "TCP", 8080)))).isPresent();
    assertThat(SchedulerFilters.nodePorts(pod("p").build(), List.of(new HostPort("0.0.0.0", "TCP", 8080)))).isEmpty();
  }

  /**
   * NodeResourcesFit: one pod slot more than the node's pods within allocatable pods (none given: none); each requested
   * resource within allocatable less the requests there (exactly full fits); a zero request is not checked; a resource
   * the node does not offer refuses a pod requesting it.
   */
  @Test
  void nodeResourcesFit() {
    NodeRecord n = node("n").cpu(2000).podSlots(3).build();
    PodRecord half = pod("p").requests("cpu", 1000).build();
    assertThat(SchedulerFilters.resourcesFit(half, n, Map.of("cpu", 1000L), 1)).isEmpty();
    assertThat(reason(SchedulerFilters.resourcesFit(half, n, Map.of("cpu", 1001L), 1))).hasValue("Insufficient cpu");
    assertThat(reason(SchedulerFilters.resourcesFit(half, n, Map.of(), 3))).hasValue("Too many pods");
    assertThat(SchedulerFilters.resourcesFit(pod("p").requests("cpu", 0).build(), n, Map.of("cpu", 5000L), 0)).isEmpty();
    assertThat(reason(SchedulerFilters.resourcesFit(pod("p").requests("nvidia.com/gpu", 1).build(), n, Map.of(), 0)))
        .hasValue("Insufficient nvidia.com/gpu");
    assertThat(SchedulerFilters.resourcesFit(pod("p").requests("nvidia.com/gpu", 1).build(),
        node("g").allocatable("nvidia.com/gpu", 1).build(), Map.of(), 0)).isEmpty();
    assertThat(reason(SchedulerFilters.resourcesFit(pod("p").build(), node("n").withoutAllocatable("pods").build(), Map.of(), 0)))
        .hasValue("Too many pods");
  }
}
