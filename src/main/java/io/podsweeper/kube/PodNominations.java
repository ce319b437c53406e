package io.podsweeper.kube;

import com.fasterxml.jackson.databind.node.TextNode;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.podsweeper.engine.RoomHolds;
import io.podsweeper.strategy.RoomPlan;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pending pod's {@code status.nominatedNodeName}, written and cleared for MakeRoom's plans, and their Events on it.
 * Both writes are JSON patches of the {@code pods/status} subresource with a test first: nominating, that the pod is
 * still the one of the plan (its uid); clearing, that the nomination still names the plan's node (one the scheduler's
 * own preemption wrote since stays).
 */
public final class PodNominations implements RoomHolds {
  private static final Logger LOG = LoggerFactory.getLogger(PodNominations.class);
  private final KubernetesClient client;
  private final EventRecorder events;

  public PodNominations(KubernetesClient client, EventRecorder events) {
    this.client = client;
    this.events = events;
  }

  @Override
  public boolean nominate(RoomPlan.PodRef pod, String node) {
    return patch(pod, "[" + test("/metadata/uid", pod.uid()) + ",{\"op\":\"add\",\"path\":\"/status/nominatedNodeName\",\"value\":"
        + quoted(node) + "}]", "nominate it to " + node);
  }

  @Override
  public void clear(RoomPlan.PodRef pod, String node) {
    patch(pod, "[" + test("/metadata/uid", pod.uid()) + "," + test("/status/nominatedNodeName", node)
        + ",{\"op\":\"remove\",\"path\":\"/status/nominatedNodeName\"}]", "clear its nomination to " + node);
  }

  @Override
  public void event(RoomPlan.PodRef pod, String type, String reason, String message) {
    events.record(pod.namespace(), "Pod", pod.name(), pod.uid(), type, reason, message);
  }

  private boolean patch(RoomPlan.PodRef pod, String jsonPatch, String what) {
    try {
      client.pods().inNamespace(pod.namespace()).withName(pod.name()).subresource("status").patch(PatchContext.of(PatchType.JSON), jsonPatch);
      return true;
    } catch (KubernetesClientException e) {
      // 404: gone; 422: a test failed (another pod of the name, or another nomination); 403: not allowed.
      LOG.warn("cannot {} (pod {}): {} {}", what, pod.key(), e.getCode(), e.getMessage());
      return false;
    }
  }

  private static String test(String path, String value) {
    return "{\"op\":\"test\",\"path\":\"" + path + "\",\"value\":" + quoted(value) + "}";
  }

  private static String quoted(String value) {
    return TextNode.valueOf(value).toString();
  }
}
