package io.podsweeper.testing;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudgetStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Pods in the real test API server, and their disruption budgets. No kubelet runs there, so a pod's status is
 * whatever the test writes through the status subresource.
 */
public final class TestPods {
  private TestPods() {}

  /**
   * A pod as a controller creates it: controlled by a ReplicaSet {@code rs-<name>} of its own (which does not exist: no
   * controller or garbage collector runs here), as Podsweeper's own rules never evict a running bare pod by default.
   */
  public static Pod create(KubernetesClient client, String namespace, String name, String node, Map<String, String> labels) {
    PodBuilder pod = new PodBuilder()
        .withNewMetadata().withName(name).withNamespace(namespace).withLabels(labels)
        .addNewOwnerReference().withApiVersion("apps/v1").withKind("ReplicaSet").withName("rs-" + name)
        .withUid(UUID.randomUUID().toString()).withController(true).endOwnerReference().endMetadata()
        .withNewSpec().addNewContainer().withName("main").withImage("busybox:1.36").endContainer()
        .withTerminationGracePeriodSeconds(0L).endSpec();
    if (node != null) {
      pod.editSpec().withNodeName(node).endSpec();
    }
    return client.pods().inNamespace(namespace).resource(pod.build()).create();
  }

  /** A pod on node-a that has failed: its one container ended with exit code 1 at {@code finishedAt}. */
  public static Pod failed(KubernetesClient client, String namespace, String name, Instant finishedAt) {
    return setStatus(client, create(client, namespace, name, "node-a", Map.of()), "Failed", null, List.of(terminated("Error", 1, finishedAt)));
  }

  public static Pod setStatus(KubernetesClient client, Pod pod, String phase, String reason, List<ContainerStatus> containers) {
    Pod current = client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName()).get();
    current.getStatus().setPhase(phase);
    current.getStatus().setReason(reason);
    current.getStatus().setContainerStatuses(containers);
    return client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(current).updateStatus();
  }

  public static ContainerStatus terminated(String reason, int exitCode, Instant finishedAt) {
    return new ContainerStatusBuilder().withName("main").withImage("busybox:1.36").withImageID("").withReady(false)
        .withRestartCount(0)
        .withNewState().withNewTerminated().withReason(reason).withExitCode(exitCode)
        .withStartedAt(finishedAt.minusSeconds(60).toString()).withFinishedAt(finishedAt.toString())
        .endTerminated().endState().build();
  }

  public static ContainerStatus waiting(String reason, int restarts) {
    return new ContainerStatusBuilder().withName("main").withImage("busybox:1.36").withImageID("").withReady(false)
        .withRestartCount(restarts)
        .withNewState().withNewWaiting().withReason(reason).endWaiting().endState().build();
  }

  /**
   * A PDB over the pods labelled {@code app=<app>} that allows no disruption, with the status the disruption controller
   * would write (none runs here): policy/v1beta1, what the test API server (1.20) serves.
   */
  public static void forbidDisruption(KubernetesClient client, String namespace, String app) {
    var budgets = client.policy().v1beta1().podDisruptionBudget().inNamespace(namespace);
    PodDisruptionBudget pdb = budgets.resource(new PodDisruptionBudgetBuilder().withNewMetadata().withName(app).endMetadata()
        .withNewSpec().withNewMinAvailable(1).withNewSelector().addToMatchLabels("app", app).endSelector().endSpec().build()).create();
    pdb.setStatus(new PodDisruptionBudgetStatusBuilder().withObservedGeneration(pdb.getMetadata().getGeneration())
        .withDisruptionsAllowed(0).withCurrentHealthy(0).withDesiredHealthy(1).withExpectedPods(1).build());
    budgets.resource(pdb).updateStatus();
  }
}
