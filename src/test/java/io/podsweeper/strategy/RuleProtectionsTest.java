package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.NOW;
import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.cluster.PodFixtures.terminatedAt;
import static io.podsweeper.cluster.PodFixtures.waiting;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.PolicyLoader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Podsweeper's own rules never evict a system-critical, DaemonSet, mirror or bare pod that still runs, unless the
 * rule opts in by name ({@code evict}); finished pods stay garbage. Pods crash-loop for 6h, under the shipped policy's
 * stuck-containers rule (CrashLoopBackOff for 2h, outside kube-system) or a rule like it.
 */
class RuleProtectionsTest {
  private static final PolicyEvaluator SHIPPED = new PolicyEvaluator(PolicyLoader.load(Path.of("config/policy.yaml")));

  private static PolicyEvaluator rules(String rules) {
    return new PolicyEvaluator(
        PolicyLoader.parse("apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules:\n" + rules.stripIndent(), "test"));
  }

  /** Crash-looping for 6h in namespace {@code ns}, owned by a ReplicaSet unless the test says otherwise. */
  private static PodFixtures.PodBuilder crashLooping(String ns, String name) {
    return pod(name).ns(ns).age(Duration.ofHours(6)).container(waiting("main", "CrashLoopBackOff", 40));
  }

  /** An ingress controller: a cluster add-on with system-cluster-critical priority, outside kube-*. */
  private static PodRecord ingressController() {
    return crashLooping("ingress-nginx", "ingress-nginx-controller-7c9d").priority(2_000_000_000)
        .priorityClassName("system-cluster-critical").build();
  }

  private static List<String> decided(PolicyEvaluator policy, PodRecord... pods) {
    return policy.plan(ClusterSnapshot.of(List.of(pods), List.of(), List.of()), NOW).stream()
        .map(d -> d.podKey() + " " + d.action().wireName()).toList();
  }

  private static List<String> explain(PolicyEvaluator policy, PodRecord pod) {
    return policy.explain(pod, ClusterSnapshot.of(List.of(pod), List.of(), List.of()), NOW);
  }

  @Test
  void aSystemCriticalPodOutsideKubeSystemIsKeptAndExplainSaysWhy() {
    PodRecord ingress = ingressController();
    assertThat(decided(SHIPPED, ingress)).isEmpty();
    assertThat(explain(SHIPPED, ingress)).contains("profile rules: no profile-wide protection",
        "  PodLifeTime: rule stuck-containers selects it, but it is protected: system-critical priority (system-cluster-critical);"
            + " a rule evicts it only with evict: [SystemCriticalPods]",
        "verdict: never, as the pod is now");
  }

  @Test
  void aRuleThatOptsInEvictsTheSystemCriticalPod() {
    PolicyEvaluator optIn = rules("""
          - {name: stuck, states: [CrashLoopBackOff], maxAge: 2h}
          - {name: stuck-add-ons, states: [CrashLoopBackOff], maxAge: 3h, evict: [SystemCriticalPods]}
        """);
    assertThat(decided(optIn, ingressController())).containsExactly("ingress-nginx/ingress-nginx-controller-7c9d evict");
    assertThat(explain(optIn, ingressController())).anySatisfy(line ->
        assertThat(line).startsWith("verdict: evict now, by PodLifeTime (rule stuck-add-ons)"));
  }

  @Test
  void aPriorityClassNameAloneMarksASystemCriticalPod() {
    PodRecord unresolved = crashLooping("calico-system", "calico-node-x2").priorityClassName("system-node-critical").build();
    assertThat(decided(SHIPPED, unresolved)).isEmpty();
    assertThat(explain(SHIPPED, unresolved)).anySatisfy(line ->
        assertThat(line).contains("protected: system-critical priority (system-node-critical)"));
  }

  @Test
  void aBarePodIsKeptAsNothingWouldRecreateIt() {
    PodRecord bare = crashLooping("web", "debug").bare().build();
    assertThat(decided(SHIPPED, bare)).isEmpty();
    assertThat(explain(SHIPPED, bare)).contains("  PodLifeTime: rule stuck-containers selects it, but it is protected:"
        + " a bare pod (no controller recreates it); a rule evicts it only with evict: [BarePods]");
    assertThat(decided(rules("  - {name: r, states: [CrashLoopBackOff], evict: [BarePods]}\n"), bare)).containsExactly("web/debug evict");
    PodRecord annotated = crashLooping("web", "debug").bare().annotation(PodRecord.EVICT_ANNOTATION, "").build();
    assertThat(decided(SHIPPED, annotated)).as("the pod's own upstream evict annotation, as upstream").containsExactly("web/debug evict");
  }

  @Test
  void aDaemonSetPodIsKeptAsItWouldComeStraightBack() {
    PodRecord agent = crashLooping("logging", "fluent-bit-9k2").ownedBy("DaemonSet", "fluent-bit").build();
    assertThat(decided(SHIPPED, agent)).isEmpty();
    assertThat(explain(SHIPPED, agent)).anySatisfy(line ->
        assertThat(line).endsWith("protected: a DaemonSet pod; a rule evicts it only with evict: [DaemonSetPods]"));
    assertThat(decided(rules("  - {name: r, states: [CrashLoopBackOff], evict: [DaemonSetPods]}\n"), agent))
        .containsExactly("logging/fluent-bit-9k2 evict");
  }

  /** A rule must opt in to every protection that applies; it is told them all. */
  @Test
  void aPodUnderSeveralProtectionsNeedsEveryOptIn() {
    PodRecord bareCritical = crashLooping("cert-manager", "webhook").bare().priority(2_000_000_000).build();
    PolicyEvaluator partly = rules("  - {name: r, states: [CrashLoopBackOff], evict: [SystemCriticalPods]}\n");
    assertThat(decided(partly, bareCritical)).isEmpty();
    assertThat(explain(partly, bareCritical)).anySatisfy(line -> assertThat(line).endsWith(
        "protected: a bare pod (no controller recreates it); a rule evicts it only with evict: [SystemCriticalPods, BarePods]"));
    assertThat(decided(rules("  - {name: r, states: [CrashLoopBackOff], evict: [BarePods, SystemCriticalPods]}\n"), bareCritical))
        .containsExactly("cert-manager/webhook evict");
  }

  /**
   * A pod held by scheduling gates (Kubernetes 1.27+ {@code spec.schedulingGates}) stays under every rule, by age, by the
   * Pending state or by a written TTL, until a rule opts in; upstream's evict annotation does not lift it.
   */
  @Test
  void aPodHeldBySchedulingGatesIsKeptUntilARuleOptsIn() {
    PodRecord held = pod("train-1").ns("batch").age(Duration.ofHours(20)).ownedBy("Job", "train").gated("kueue.x-k8s.io/admission")
        .annotation(PodRecord.EVICT_ANNOTATION, "true").annotation("podsweeper.io/ttl", "1h").build();
    PolicyEvaluator byAge = rules("""
          - {name: pending, states: [Pending], maxAge: 12h}
          - {name: old, maxAge: 1d}
          - {name: ttl, ttlFrom: [podsweeper.io]}
          - {name: cel, maxAge: 1h, match: "pod.spec.nodeName == ''"}
        """);
    assertThat(decided(byAge, held)).isEmpty();
    assertThat(decided(SHIPPED, held)).isEmpty();
    assertThat(explain(byAge, held)).contains("    rule pending: selects it, but it is protected: held by scheduling gates"
        + " kueue.x-k8s.io/admission (held back on purpose, not stuck); a rule evicts it only with evict: [SchedulingGatedPods]");
    assertThat(decided(rules("  - {name: r, states: [Pending], maxAge: 12h, evict: [SchedulingGatedPods]}\n"), held))
        .containsExactly("batch/train-1 evict");
    // Released, it is an ordinary pending pod, its age from creation (the pod does not show its release).
    PodRecord released = pod("train-1").ns("batch").age(Duration.ofHours(20)).ownedBy("Job", "train").unscheduled()
        .condition("PodScheduled", "False", "Unschedulable", NOW.minus(Duration.ofHours(20))).build();
    assertThat(decided(byAge, released)).containsExactly("batch/train-1 evict");
  }

  /** Mirror pods have no opt-in: their kubelet owns them, as upstream's evictor says. */
  @Test
  void aMirrorPodIsNeverEvictedWhateverARuleOptsInTo() {
    PodRecord mirror = crashLooping("ingress-nginx", "proxy-node-a").bare().annotation(PodRecord.MIRROR_ANNOTATION, "abc").build();
    PolicyEvaluator all = rules("  - {name: r, states: [CrashLoopBackOff], evict: [SystemCriticalPods, DaemonSetPods, BarePods]}\n");
    assertThat(decided(all, mirror)).isEmpty();
    assertThat(explain(all, mirror)).contains("profile rules: protected: a mirror pod");
  }

  /** Finished pods are garbage: a rule naming finished states deletes them, bare, DaemonSet or system-critical. */
  @Test
  void theProtectionsGuardRunningPodsOnly() {
    PodRecord finishedBare = pod("build-1841").ns("ci-frontend").age(Duration.ofHours(6)).bare().phase("Failed")
        .containers(terminatedAt("build", "Error", 1, NOW.minus(Duration.ofHours(3)))).build();
    PodRecord finishedCriticalAgent = pod("agent-old").ns("ci-frontend").age(Duration.ofHours(6)).ownedBy("DaemonSet", "agent")
        .priority(2_000_000_000)
        .phase("Failed").containers(terminatedAt("agent", "Error", 1, NOW.minus(Duration.ofHours(3)))).build();
    PodRecord runningBare = crashLooping("ci-frontend", "debug").bare().build();
    assertThat(decided(SHIPPED, finishedBare, finishedCriticalAgent, runningBare))
        .containsExactlyInAnyOrder("ci-frontend/build-1841 delete", "ci-frontend/agent-old delete");
  }
}
