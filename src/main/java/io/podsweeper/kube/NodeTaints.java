package io.podsweeper.kube;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.Taint;
import io.podsweeper.engine.NodeHolds;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This service's NoSchedule taint on a node MakeRoom empties, written and taken off, and the plan's Events on the
 * node. Every write is a JSON patch of the node with a test first, on the node as cached, so that it changes only this
 * service's taint: moving its time or taking it off tests that the taint at that index is this service's; adding it
 * to a node with other taints appends; adding the first one tests the node's resourceVersion (a taint written since
 * stays, the write fails and the next look tries again). A refused write is logged with the status the API server
 * gave; {@code patch nodes} is an opt-in grant (manifests/free-nodes/, or the chart's {@code rbac.freeNodes}).
 */
public final class NodeTaints implements NodeHolds {
  private static final Logger LOG = LoggerFactory.getLogger(NodeTaints.class);
  /** Where node Events go, as the kubelet's and the node controller's do. */
  static final String EVENT_NAMESPACE = "default";
  private final PodRemover http;
  private final EventRecorder events;
  private final ClusterCache cache;

  /** @param http sends the patches (its client has no HTTP-layer retries) */
  public NodeTaints(PodRemover http, EventRecorder events, ClusterCache cache) {
    this.http = http;
    this.events = events;
    this.cache = cache;
  }

  @Override
  public boolean hold(String node, Instant until) {
    Optional<NodeRecord> cached = cache.node(node);
    Optional<RecordStore.Version> version = cache.nodeVersion(node);
    if (cached.isEmpty() || version.isEmpty()) {
      LOG.warn("cannot taint node {}: it is not in the cache", node);
      return false;
    }
    String value = NodeHolds.value(until);
    List<Taint> taints = cached.get().taints();
    int ours = index(taints);
    String taint = "{\"key\":" + JsonPatch.quoted(TAINT_KEY) + ",\"value\":" + JsonPatch.quoted(value) + ",\"effect\":\"NoSchedule\"}";
    JsonPatch patch = new JsonPatch();
    if (ours >= 0) {
      patch.test("/spec/taints/" + ours + "/key", TAINT_KEY).op("replace", "/spec/taints/" + ours + "/value", JsonPatch.quoted(value));
    } else if (!taints.isEmpty()) {
      patch.test("/metadata/uid", version.get().uid()).op("add", "/spec/taints/-", taint);
    } else {
      patch.test("/metadata/resourceVersion", version.get().resourceVersion()).op("add", "/spec/taints", "[" + taint + "]");
    }
    return patch.send(http, path(node), LOG, "taint it " + TAINT_KEY + "=" + value + ":NoSchedule", "node " + node);
  }

  @Override
  public boolean release(String node) {
    int ours = cache.node(node).map(n -> index(n.taints())).orElse(-1);
    return ours < 0 || new JsonPatch().test("/spec/taints/" + ours + "/key", TAINT_KEY).op("remove", "/spec/taints/" + ours, null)
        .send(http, path(node), LOG, "take its taint " + TAINT_KEY + " off", "node " + node);
  }

  @Override
  public void event(String node, String type, String reason, String message) {
    String uid = cache.nodeVersion(node).map(RecordStore.Version::uid).orElse("");
    events.record(EVENT_NAMESPACE, "Node", node, uid, type, reason, message);
  }

  /** Where this service's taint is among the node's, or -1. */
  private static int index(List<Taint> taints) {
    for (int i = 0; i < taints.size(); i++) {
      if (TAINT_KEY.equals(taints.get(i).key())) {
        return i;
      }
    }
    return -1;
  }

  private static String path(String node) {
    return "/api/v1/nodes/" + PodRemover.encode(node);
  }
}
