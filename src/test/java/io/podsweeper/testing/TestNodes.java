package io.podsweeper.testing;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Nodes in the real test API server that the scheduler takes pods to: no kubelet runs, so the test writes what one
 * would (allocatable, a Ready condition) and, in place of the node lifecycle controller (not run), lifts the
 * {@code node.kubernetes.io/not-ready} taint the API server puts on every new node.
 */
public final class TestNodes {
  private TestNodes() {}

  /** A Ready, schedulable node with this much cpu (millicores), 8 GiB of memory and 110 pod slots, labelled as given plus its hostname. */
  public static Node ready(KubernetesClient client, String name, long cpuMillis, Map<String, String> labels) {
    Map<String, String> all = new HashMap<>(labels);
    all.put("kubernetes.io/hostname", name);
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).withLabels(all).endMetadata().build()).create();
    Map<String, Quantity> resources = Map.of("cpu", new Quantity(cpuMillis + "m"), "memory", new Quantity("8Gi"), "pods", new Quantity("110"));
    String now = Instant.now().toString();
    client.nodes().withName(name).editStatus(n -> new NodeBuilder(n).editStatus().withAllocatable(resources).withCapacity(resources)
        .withConditions(List.of(new NodeConditionBuilder().withType("Ready").withStatus("True").withReason("KubeletReady")
            .withLastHeartbeatTime(now).withLastTransitionTime(now).build())).endStatus().build());
    return client.nodes().withName(name).edit(n -> new NodeBuilder(n).editSpec().withTaints(List.of()).endSpec().build());
  }
}
