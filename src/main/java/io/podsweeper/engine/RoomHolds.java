package io.podsweeper.engine;

import io.podsweeper.strategy.RoomPlan;

/**
 * What the executor of MakeRoom's plans ({@link RoomPlans}) writes about the pod it makes room for: its
 * {@code status.nominatedNodeName}, which keeps the scheduler from giving the room to the replacements of the pods that
 * move (docs/design.md "Holding the room"), and an Event per plan started, completed or abandoned. {@code kube/PodNominations}
 * writes them to the API server.
 */
public interface RoomHolds {
  /** Nominates the pod (that very uid) to {@code node}; false when it could not (gone, refused): the plan does not start. */
  boolean nominate(RoomPlan.PodRef pod, String node);

  /** Clears the pod's nomination if it still names {@code node} (someone else's stays); a failure is logged, not thrown. */
  void clear(RoomPlan.PodRef pod, String node);

  /** A Kubernetes Event on the pod ({@code type} Normal or Warning); a failure is logged, not thrown. */
  void event(RoomPlan.PodRef pod, String type, String reason, String message);

  /** Nowhere to write (a service built without an API server): plans start, nothing holds their room. */
  RoomHolds NONE = new RoomHolds() {
    @Override
    public boolean nominate(RoomPlan.PodRef pod, String node) {
      return true;
    }

    @Override
    public void clear(RoomPlan.PodRef pod, String node) {}

    @Override
    public void event(RoomPlan.PodRef pod, String type, String reason, String message) {}
  };
}
