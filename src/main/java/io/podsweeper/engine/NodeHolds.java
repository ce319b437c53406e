package io.podsweeper.engine;

import java.time.Instant;
import java.util.Optional;

/**
 * What the executor of MakeRoom's plans ({@link RoomPlans}) writes about a node it empties: this service's NoSchedule
 * taint ({@link #TAINT_KEY}), whose value says until when it holds (epoch seconds), so that the scheduler puts the
 * replacements of the pods that move elsewhere and nothing new lands there while a scale-down takes the node. Any
 * replica that leads later can read the value on the node and take the taint off when its time is up, so a taint
 * outlives no process for longer than it said. {@code kube/NodeTaints} writes it to the API server.
 */
public interface NodeHolds {
  /** This service's taint: {@code podsweeper.io/emptying=<epoch seconds>:NoSchedule}. */
  String TAINT_KEY = io.podsweeper.strategy.RoomPlan.EMPTYING_TAINT;

  /** Taints the node (or moves its taint's time) until {@code until}; false when it could not (gone, refused). */
  boolean hold(String node, Instant until);

  /** Takes this service's taint off the node, if it is there; false when it could not (logged, not thrown). */
  boolean release(String node);

  /** A Kubernetes Event on the node ({@code type} Normal or Warning); a failure is logged, not thrown. */
  void event(String node, String type, String reason, String message);

  /** Until when the taint's value says it holds; empty when the value is not a time this service wrote. */
  static Optional<Instant> until(String value) {
    try {
      return Optional.of(Instant.ofEpochSecond(Long.parseLong(value)));
    } catch (NumberFormatException | java.time.DateTimeException e) {
      return Optional.empty();
    }
  }

  /** The taint's value for a hold until {@code until}: a label value (digits), as taint values must be. */
  static String value(Instant until) {
    return Long.toString(until.getEpochSecond());
  }

  /** Nowhere to write (a service built without an API server): no node is emptied, a plan to free one does not start. */
  NodeHolds NONE = new NodeHolds() {
    @Override
    public boolean hold(String node, Instant until) {
      return false;
    }

    @Override
    public boolean release(String node) {
      return false;
    }

    @Override
    public void event(String node, String type, String reason, String message) {}
  };
}
