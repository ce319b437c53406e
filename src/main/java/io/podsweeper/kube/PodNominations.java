package io.podsweeper.kube;

import io.podsweeper.engine.RoomHolds;
import io.podsweeper.strategy.RoomPlan;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pending pod's {@code status.nominatedNodeName}, written and cleared for MakeRoom's plans, and their Events on it.
 * Both writes are JSON patches of the {@code pods/status} subresource with a test first: nominating, that the pod is
 * still the one of the plan (its uid); clearing, that the nomination still names the plan's node (one the scheduler's
 * own preemption wrote since stays). Sent as {@link JsonPatch}es: {@code patch pods/status} is all it needs.
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
    return new JsonPatch().test("/metadata/uid", pod.uid()).op("add", "/status/nominatedNodeName", JsonPatch.quoted(node))
        .send(http, path(pod), LOG, "nominate it to " + node, "pod " + pod.key());
  }

  @Override
  public void clear(RoomPlan.PodRef pod, String node) {
    new JsonPatch().test("/metadata/uid", pod.uid()).test("/status/nominatedNodeName", node).op("remove", "/status/nominatedNodeName", null)
        .send(http, path(pod), LOG, "clear its nomination to " + node, "pod " + pod.key());
  }

  @Override
  public void event(RoomPlan.PodRef pod, String type, String reason, String message) {
    events.record(pod.namespace(), "Pod", pod.name(), pod.uid(), type, reason, message);
  }

  private static String path(RoomPlan.PodRef pod) {
    return "/api/v1/namespaces/" + PodRemover.encode(pod.namespace()) + "/pods/" + PodRemover.encode(pod.name()) + "/status";
  }
}
