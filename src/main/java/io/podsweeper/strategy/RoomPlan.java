package io.podsweeper.strategy;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.MakeRoomArgs;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * A plan of MakeRoom, as data: which pod it makes room for (or which node it empties), on which node, and the moves,
 * in the order they must happen. Each move is an eviction of one pod (the version it was planned on) whose replacement
 * the simulation put on another node. The plan says nothing to do by itself: an executor takes one step at a time,
 * asking {@link #progress} on the cluster as it is now what comes next, and evicts through the one removal path with
 * {@link #decision}.
 *
 * @param pending the pod room is made for; empty for {@link Kind#FREE_NODE}
 * @param pendingWhy why the scheduler leaves it pending, in a few words (e.g. "anti-affinity, insufficient cpu")
 * @param target the node the pending pod will fit, or the node to empty
 */
public record RoomPlan(Kind kind, String profile, Optional<PodRef> pending, String pendingWhy, String target, List<Move> moves,
    Instant plannedAt) {
  /**
   * The NoSchedule taint a node being emptied carries while its plan is carried out, and after for a scale-down; its
   * value is until when (epoch seconds). A node that carries it is not planned to be emptied again.
   */
  public static final String EMPTYING_TAINT = "podsweeper.io/emptying";

  public RoomPlan {
    moves = List.copyOf(moves);
  }

  public enum Kind {
    /** Moves that let a pod the scheduler cannot place fit {@code target}. */
    MAKE_ROOM,
    /** Moves that empty {@code target} (for a scale-down), every pod fitting elsewhere. */
    FREE_NODE;

    public String wireName() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  public record PodRef(String namespace, String name, String uid) {
    public String key() {
      return namespace + "/" + name;
    }
  }

  /**
   * One step: evict the pod (uid, resourceVersion) from {@code from}; the simulation put its replacement on {@code to}
   * ({@code why}: what made it fit there). A step is done once the pod has left its node and its controller
   * ({@code ownerUid}) has as many pods bound to nodes again as when the plan was made ({@code ownerPlaced}).
   */
  public record Move(String namespace, String name, String uid, String resourceVersion, String owner, String ownerUid, int ownerPlaced,
      String from, String to, String why) {
    public String key() {
      return namespace + "/" + name;
    }
  }

  /** What the executor does next, by {@link #progress}. */
  public enum Step {
    /** Evict move {@code index}'s pod now (through the removal path, with {@link #decision}). */
    EVICT,
    /** Move {@code index} is under way: its pod is leaving, or its replacement is not bound yet. */
    WAIT,
    /** Every move is done; the pending pod fits the target and waits for the scheduler to bind it. */
    BIND,
    /** The pending pod is bound to the target (or, freeing a node, every move is done). */
    COMPLETE,
    /** Give the plan up, for {@code abandon}. */
    ABANDON
  }

  /** Where a plan stands on the cluster as it is now; {@code detail} says it to a person. */
  public record Progress(Step step, int index, Optional<PlanAbandon> abandon, String detail) {
    static Progress abandon(PlanAbandon reason, String detail) {
      return new Progress(Step.ABANDON, -1, Optional.of(reason), detail);
    }

    static Progress at(Step step, int index, String detail) {
      return new Progress(step, index, Optional.empty(), detail);
    }
  }

  /**
   * Where the plan stands on {@code view}, and whether it still holds: the pending pod is still there, unbound (bound
   * to the target: complete; elsewhere: abandoned); the target is Ready (and, making room, not cordoned); each move either done, under
   * way (its pod terminating, or gone with its replacement not bound yet: wait), or still to come; and, replayed on
   * the cluster as it is now with the pending pod held on the target (its nomination), the moves to come still find
   * nodes (the planned one, else any other) and the pending pod still fits the target after them. Pure.
   */
  public Progress progress(ClusterView view) {
    Optional<PodRecord> pendingNow = Optional.empty();
    if (pending.isPresent()) {
      PodRef ref = pending.get();
      pendingNow = find(view, ref.namespace(), ref.name(), ref.uid());
      if (pendingNow.isEmpty() || pendingNow.get().terminating()) {
        return Progress.abandon(PlanAbandon.PENDING_POD_GONE, ref.key() + " is gone");
      }
      if (pendingNow.get().scheduled()) {
        return pendingNow.get().nodeName().equals(target) ? Progress.at(Step.COMPLETE, moves.size(), ref.key() + " is bound to " + target)
            : Progress.abandon(PlanAbandon.SCHEDULED_ELSEWHERE, ref.key() + " was bound to " + pendingNow.get().nodeName() + ", not " + target);
      }
    }
    Optional<NodeRecord> node = view.node(target);
    // A node being emptied is cordoned on purpose (its executor keeps the replacements off it so).
    if (node.isEmpty() || !node.get().ready() || (kind == Kind.MAKE_ROOM && node.get().unschedulable())) {
      return Progress.abandon(PlanAbandon.NODE_GONE, "node " + target + (node.isEmpty() ? " is gone" : node.get().ready() ? " is cordoned" : " is not Ready"));
    }
    int next = -1;
    List<PodRecord> toMove = new ArrayList<>();
    for (int k = 0; k < moves.size(); k++) {
      Move m = moves.get(k);
      Optional<PodRecord> pod = find(view, m.namespace(), m.name(), m.uid());
      if (pod.isPresent() && !pod.get().terminating()) {
        next = next < 0 ? k : next;
        toMove.add(pod.get());
      } else if (pod.isPresent()) {
        return Progress.at(Step.WAIT, k, m.key() + " is leaving " + m.from());
      } else if (next < 0 && placed(view, m) < m.ownerPlaced()) {
        return Progress.at(Step.WAIT, k, "waiting for the replacement of " + m.key() + " (" + m.owner() + ") to be bound to a node");
      }
    }
    Simulation sim = new Simulation(view);
    Optional<String> broken = replay(sim, pendingNow, toMove);
    if (broken.isPresent()) {
      return Progress.abandon(PlanAbandon.NO_LONGER_FITS, broken.get());
    }
    if (next >= 0) {
      return Progress.at(Step.EVICT, next, "evict " + moves.get(next).key() + " from " + moves.get(next).from());
    }
    return pending.isPresent() ? Progress.at(Step.BIND, moves.size(), pending.get().key() + " fits " + target + "; waiting for the scheduler")
        : Progress.at(Step.COMPLETE, moves.size(), "node " + target + " is empty of the pods the plan moves");
  }

  /**
   * The moves to come, replayed in order with the pending pod held on the target: why one no longer fits, or empty.
   * Each goes to its planned node where it fits, else to the first other Ready node (not the target, not its own).
   */
  private Optional<String> replay(Simulation sim, Optional<PodRecord> pendingNow, List<PodRecord> toMove) {
    pendingNow.ifPresent(p -> sim.move(p, target));
    List<NodeRecord> nodes = sim.view().nodes().stream().filter(NodeRecord::ready).sorted(Comparator.comparing(NodeRecord::name)).toList();
    for (PodRecord pod : toMove) {
      String planned = moves.stream().filter(m -> m.uid().equals(pod.uid())).findFirst().map(Move::to).orElse("");
      sim.move(pod, "");
      List<NodeRecord> order = new ArrayList<>();
      sim.node(planned).ifPresent(order::add);
      nodes.stream().filter(n -> !n.name().equals(planned) && !n.name().equals(target) && !n.name().equals(pod.nodeName())).forEach(order::add);
      Optional<NodeRecord> at = sim.firstFit(pod, order);
      if (at.isEmpty()) {
        return Optional.of(pod.key() + " would fit no other node now");
      }
      sim.move(pod, at.get().name());
    }
    if (pendingNow.isPresent()) {
      sim.move(pendingNow.get(), "");
      Optional<SchedulerFilters.Unfit> unfit = sim.refusal(pendingNow.get(), sim.node(target).orElseThrow());
      if (unfit.isPresent()) {
        return Optional.of(pendingNow.get().key() + " would no longer fit " + target + ": " + unfit.get().reason());
      }
    }
    return Optional.empty();
  }

  /** The pod of that name, if it is still the one of that uid. */
  private static Optional<PodRecord> find(ClusterView view, String namespace, String name, String uid) {
    for (PodRecord p : view.podsInNamespace(namespace)) {
      if (p.name().equals(name) && p.uid().equals(uid)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  /** The pods of the move's controller bound to a node and not terminating now. */
  private static int placed(ClusterView view, Move m) {
    return placed(view.podsInNamespace(m.namespace()), m.ownerUid());
  }

  static int placed(java.util.Collection<PodRecord> pods, String ownerUid) {
    int n = 0;
    for (PodRecord p : pods) {
      if (p.runningOnNode() && controlledBy(p, ownerUid)) {
        n++;
      }
    }
    return n;
  }

  /** A plain loop: this runs over a namespace's pods for every move planned. */
  private static boolean controlledBy(PodRecord pod, String ownerUid) {
    for (io.podsweeper.cluster.OwnerRef o : pod.owners()) {
      if (o.controller() && o.uid().equals(ownerUid)) {
        return true;
      }
    }
    return false;
  }

  /** The removal of move {@code step}'s pod, as it is now ({@code pod}: the same uid), for the removal path. */
  public Decision decision(int step, PodRecord pod, Instant now) {
    Move m = moves.get(step);
    if (!pod.uid().equals(m.uid())) {
      throw new IllegalArgumentException("step " + step + " moves " + m.key() + " (uid " + m.uid() + "), not uid " + pod.uid());
    }
    String reason = (kind == Kind.MAKE_ROOM ? "makes room for " + pending.orElseThrow().key() + " on " + target : "empties node " + target)
        + ": step " + (step + 1) + " of " + moves.size() + ", its replacement fits " + m.to() + " (" + m.why() + ")";
    return Decision.of(pod, MakeRoomArgs.NAME, profile, profile, reason, now);
  }

  /**
   * The plan in a line, e.g. {@code shop/cache-2 (Pending: anti-affinity) fits n3 after moving web-7 n3→n1 (400m cpu
   * free there) and batch-3 n3→n2 (...)}.
   */
  public String describe() {
    List<String> steps = new ArrayList<>();
    String namespace = pending.map(PodRef::namespace).orElse("");
    for (Move m : moves) {
      steps.add((m.namespace().equals(namespace) ? m.name() : m.key()) + " " + m.from() + "→" + m.to() + " (" + m.why() + ")");
    }
    String moving = joined(steps);
    return kind == Kind.MAKE_ROOM
        ? pending.orElseThrow().key() + " (Pending: " + pendingWhy + ") fits " + target + " after moving " + moving
        : "node " + target + " can be emptied by moving " + moving;
  }

  static String joined(List<String> parts) {
    if (parts.size() <= 1) {
      return String.join("", parts);
    }
    return String.join(", ", parts.subList(0, parts.size() - 1)) + " and " + parts.get(parts.size() - 1);
  }

  /** The one JSON shape of a plan, for {@code plan --output json}, the forecast and the HTTP API. */
  public ObjectNode writeTo(ObjectNode o) {
    o.put("kind", kind.wireName()).put("profile", profile);
    pending.ifPresent(p -> o.putObject("pending").put("namespace", p.namespace()).put("name", p.name()).put("uid", p.uid())
        .put("why", pendingWhy));
    o.put("target", target).put("plannedAt", plannedAt.toString()).put("summary", describe());
    ArrayNode array = o.putArray("moves");
    for (Move m : moves) {
      array.addObject().put("namespace", m.namespace()).put("name", m.name()).put("uid", m.uid()).put("resourceVersion", m.resourceVersion())
          .put("owner", m.owner()).put("from", m.from()).put("to", m.to()).put("why", m.why());
    }
    return o;
  }
}
