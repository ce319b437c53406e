package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodCondition;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.MakeRoomArgs;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Podsweeper's MakeRoom: for each pod the scheduler has failed to place for {@code pendingFor}, highest priority first,
 * a {@link RoomPlan} of the fewest, least disruptive moves after which it fits a node ({@link RoomPlanner}); with
 * {@code freeNodes}, plans that empty the least used nodes. Plans are the pass's {@link PassResult#plans}, never
 * decisions: an executor carries each out one step at a time.
 */
final class MakeRoom implements NodeStrategy {
  /** At most this many under-used nodes are tried per pass, each search bounded as a pending pod's. */
  static final int FREE_NODE_ATTEMPTS = 20;

  private final MakeRoomArgs args;

  MakeRoom(MakeRoomArgs args) {
    this.args = args;
  }

  @Override
  public void run(NodePass pass) {
    RoomPlanner planner = new RoomPlanner(pass, new Simulation(pass.view));
    List<PodRecord> pending = pass.view.pods().stream()
        .filter(p -> args.namespaces().matches(p.namespace()) && args.labelSelector().matches(p.labels()))
        .filter(p -> unschedulableSince(p).map(since -> !pass.now.isBefore(since.plus(args.pendingFor()))).orElse(false))
        .filter(p -> p.owners().stream().map(OwnerRef::kind).noneMatch("DaemonSet"::equals))
        .sorted(Comparator.comparingInt((PodRecord p) -> -p.priority().orElse(0))
            .thenComparing(p -> unschedulableSince(p).orElseThrow()).thenComparing(PodRecord::key))
        .toList();
    int made = 0;
    for (int i = 0; i < pending.size(); i++) {
      if (made >= args.maxPlans()) {
        pass.note(MakeRoomArgs.NAME, (pending.size() - i) + " more pending pod(s) wait for a later pass (maxPlans " + args.maxPlans() + ")");
        return;
      }
      PodRecord pod = pending.get(i);
      RoomPlanner.Outcome outcome = planner.makeRoom(pod, args.maxMovesPerPlan());
      if (outcome.plan().isPresent()) {
        pass.plan(outcome.plan().get());
        made++;
      } else {
        pass.note(MakeRoomArgs.NAME, pod.key() + " (Pending): no plan: " + outcome.why());
      }
    }
    if (args.freeNodes().isPresent() && made < args.maxPlans()) {
      freeNodes(pass, planner, args.freeNodes().get(), args.maxPlans() - made);
    }
  }

  /** Empties the least used nodes under the thresholds, as many as {@code maxNodes} and the plans left allow. */
  private static void freeNodes(NodePass pass, RoomPlanner planner, MakeRoomArgs.FreeNodes free, int plansLeft) {
    Map<String, Double> used = new java.util.HashMap<>();
    List<NodeRecord> underused = new ArrayList<>();
    for (NodeRecord n : pass.nodes()) {
      Map<String, Long> requested = planner.requested(n.name());
      double most = 0;
      boolean under = !n.unschedulable() && n.taints().stream().noneMatch(t -> RoomPlan.EMPTYING_TAINT.equals(t.key()));
      for (Map.Entry<String, Double> t : free.thresholds().entrySet()) {
        long allocatable = n.allocatable().getOrDefault(t.getKey(), 0L);
        double percent = allocatable <= 0 ? 100 : requested.getOrDefault(t.getKey(), 0L) * 100.0 / allocatable;
        under &= percent <= t.getValue();
        most = Math.max(most, percent);
      }
      if (under) {
        used.put(n.name(), most);
        underused.add(n);
      }
    }
    if (underused.isEmpty()) {
      pass.note(MakeRoomArgs.NAME, "freeNodes: no schedulable node is under-used (" + UtilizationBalance.describe(free.thresholds(), "<=") + ")");
      return;
    }
    underused.sort(Comparator.comparing((NodeRecord n) -> used.get(n.name())).thenComparing(NodeRecord::name));
    int freed = 0;
    List<String> failures = new ArrayList<>();
    for (NodeRecord n : underused.subList(0, Math.min(FREE_NODE_ATTEMPTS, underused.size()))) {
      if (freed >= Math.min(free.maxNodes(), plansLeft)) {
        break;
      }
      RoomPlanner.Outcome outcome = planner.free(n, free.maxMovesPerNode());
      if (outcome.plan().isPresent()) {
        pass.plan(outcome.plan().get());
        freed++;
      } else {
        failures.add(n.name() + ": " + outcome.why());
      }
    }
    if (freed == 0) {
      pass.note(MakeRoomArgs.NAME, "freeNodes: no under-used node can be emptied: " + String.join("; ", failures.subList(0, Math.min(3, failures.size()))));
    }
  }

  /**
   * Since when the scheduler has found no node for the pod: its PodScheduled condition is False for reason
   * Unschedulable, the pod is Pending, bound to no node and not terminating. Empty for any other pod, a pod held by
   * scheduling gates included ({@link #gated}).
   */
  static Optional<Instant> unschedulableSince(PodRecord pod) {
    if (!"Pending".equals(pod.phase()) || pod.scheduled() || pod.terminating() || gated(pod)) {
      return Optional.empty();
    }
    for (PodCondition c : pod.conditions()) {
      if ("PodScheduled".equals(c.type()) && "False".equals(c.status()) && c.reason().filter("Unschedulable"::equals).isPresent()) {
        return Optional.of(c.lastTransitionTime().orElse(pod.creationTimestamp()));
      }
    }
    return Optional.empty();
  }

  /**
   * Held by scheduling gates: the scheduler does not try the pod, so no room helps it. Read from the PodScheduled
   * condition's reason SchedulingGated, which the API server sets while {@code spec.schedulingGates} is not empty.
   */
  static boolean gated(PodRecord pod) {
    return pod.conditions().stream().anyMatch(c -> "PodScheduled".equals(c.type()) && c.reason().filter("SchedulingGated"::equals).isPresent());
  }
}
