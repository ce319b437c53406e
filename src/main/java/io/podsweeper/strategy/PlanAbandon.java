package io.podsweeper.strategy;

import java.util.Locale;

/**
 * Why a {@link RoomPlan} in progress is given up: the first four are found by {@link RoomPlan#progress} on the cluster
 * as it is; the others only the executor that carries the plan out knows. {@link #wireName} is the value of a metric's
 * {@code reason} label and of the audit trail.
 */
public enum PlanAbandon {
  /** The pod room was made for is gone, or was replaced by another pod of its name. */
  PENDING_POD_GONE,
  /** The pod room was made for was bound to another node than the plan's. */
  SCHEDULED_ELSEWHERE,
  /** The plan's node is gone, no longer Ready, or cordoned. */
  NODE_GONE,
  /** As the cluster is now, the remaining moves or the pod itself no longer fit (say, another pod took the room). */
  NO_LONGER_FITS,
  /** An eviction of the plan was refused (a PodDisruptionBudget, the removal gate's limits, guard or kill switch). */
  EVICTION_REFUSED,
  /** The plan was not complete within its profile's {@code planTimeout} from its start. */
  TIMED_OUT,
  /** The policy in force no longer makes this plan (a reload removed the strategy or changed its profile). */
  POLICY_CHANGED,
  /** This replica no longer leads: the plan ends here, its hold let go, and the new leader plans afresh. */
  LEADERSHIP_LOST;

  public String wireName() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
