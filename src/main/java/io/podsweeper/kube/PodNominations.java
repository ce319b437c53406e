package io.podsweeper.kube;

import com.fasterxml.jackson.databind.node.TextNode;
import io.podsweeper.engine.RoomHolds;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.strategy.RoomPlan;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pending pod's {@code status.nominatedNodeName}, written and cleared for MakeRoom's plans, and their Events on it.
 * Both writes are JSON patches of the {@code pods/status} subresource with a test first: nominating, that the pod is
 * still the one of the plan (its uid); clearing, that the nomination still names the plan's node (one the scheduler's
 * own preemption wrote since stays). Sent as they are, not through fabric8's patch, which reads the pod first (a
 * {@code get} the service's RBAC does not grant): {@code patch pods/status} is all it needs.
 */
public final class PodNominations implements RoomHolds {
  private static final Logger LOG = LoggerFactory.getLogger(PodNominations.class);
  private final PodRemover http;
  private final EventRecorder events;

  /** @param http sends the patches (its client has no HTTP-layer retries) */
  public PodNominations(PodRemover http, EventRecorder events) {
    this.http = http;
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
    String path = "/api/v1/namespaces/" + PodRemover.encode(pod.namespace()) + "/pods/" + PodRemover.encode(pod.name()) + "/status";
    RequestResult result = http.exchange(http.request(path).patch("application/json-patch+json", jsonPatch));
    if (result.outcome() != RequestResult.Outcome.REMOVED) {
      // 404: gone; 422: a test failed (another pod of the name, or another nomination); 403: not allowed.
      LOG.warn("cannot {} (pod {}): {} {}", what, pod.key(), result.code(), result.message());
      return false;
    }
    return true;
  }

  private static String test(String path, String value) {
    return "{\"op\":\"test\",\"path\":\"" + path + "\",\"value\":" + quoted(value) + "}";
  }

  private static String quoted(String value) {
    return TextNode.valueOf(value).toString();
  }
}
