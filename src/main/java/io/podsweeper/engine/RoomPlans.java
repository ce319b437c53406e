package io.podsweeper.engine;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Taint;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.MakeRoomArgs;
import io.podsweeper.policy.Policy;
import io.podsweeper.removal.Result;
import io.podsweeper.removal.Rules;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.PlanAbandon;
import io.podsweeper.strategy.RoomPlan;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor of MakeRoom's plans in the live service. Each balance pass offers its plans; a plan starts unless it
 * touches a node (its target, or a node a move leaves or goes to) of a plan in flight, and starts by nominating the
 * pending pod to the target ({@link RoomHolds}), which holds the room against the replacements of the pods that move.
 * Then, at each look (a pod of the plan or a pod of a moved pod's controller changed, an outcome of one of its steps,
 * and every few seconds), it asks the plan where it stands on the cluster as it is ({@link RoomPlan#progress}) and
 * does what that says: hands the step to evict to the one removal path, as a node-aware decision (dry-run, kill switch,
 * guard, limits, rate, PDBs, the final check: all of them apply), or waits, until the pending pod is bound to the
 * target (complete) or the plan is given up ({@link PlanAbandon}, said in the log, an Event and the metric). Either
 * way the nomination is cleared, and a step still waiting in the path for its turn is taken back ({@link #wants}, the
 * path's last check before the send). A step the path refuses (any result but sent, gone or changed), or holds back
 * {@link #MAX_HANDS} times, abandons the plan: the plan counted the PDBs and limits when it was made, so a refusal
 * means the cluster is no longer what it planned on, and the next pass plans again from the cluster as it is. A plan not complete within its profile's
 * {@code planTimeout} is abandoned, and so is one whose profile no longer runs MakeRoom, or runs in dry-run, after a
 * reload. In dry-run nothing starts: each step's decision goes through the path as a dry-run, recorded as any other.
 *
 * <p>Freeing a node ({@link RoomPlan.Kind#FREE_NODE}) goes the same way, step by step, but what holds the room is the
 * node itself: the plan starts by tainting it NoSchedule ({@link NodeHolds}), so each moved pod's replacement is
 * bound elsewhere and nothing new lands there. An abandoned plan takes the taint off at once; a complete one moves its
 * time to {@code keepEmptyFor} from then, for a scale-down to take the empty node; at each look the leader takes off
 * every taint of this service whose time is up and that no plan in flight holds (one left by a process that stopped,
 * or by another leader).
 *
 * <p>{@link #outcome} and {@link #involves} run on any thread without a lock (they only read what plans are in flight);
 * the rest hold this object's lock: the sweeper's timer thread looks and offers, a reload comes from the policy's.
 */
final class RoomPlans {
  private static final Logger LOG = LoggerFactory.getLogger(RoomPlans.class);
  /** How often every plan in flight is looked at, besides the looks its pods' events bring. */
  static final Duration LOOK_EVERY = Duration.ofSeconds(5);
  /**
   * A step handed to the removal path that is still to evict this long after, its pod unchanged, is handed again: the
   * path drops a decision silently when the pod changed before its turn, or a reload came between.
   */
  static final Duration HAND_AGAIN_AFTER = Duration.ofSeconds(30);
  /**
   * A step handed this many times that is still to evict abandons the plan ({@code eviction-refused}): the path holds
   * it back without a new outcome each time (a hold-back is reported once per pod state), or keeps dropping it.
   */
  static final int MAX_HANDS = 3;

  /** Where a step's eviction goes: the removal worker's queue, as a node-aware decision of that policy generation. */
  @FunctionalInterface
  interface Steps {
    void evict(Decision decision, long generation);
  }

  /** A plan being carried out, and the step last handed to the removal path. */
  private static final class InFlight {
    final RoomPlan plan;
    final Instant started;
    final Set<String> nodes;
    Duration timeout;
    /** Freeing a node: how long it stays tainted once empty. */
    Duration keepEmptyFor;
    int handedStep = -1;
    int hands;
    String handedVersion = "";
    Instant handedAt = Instant.MIN;

    InFlight(RoomPlan plan, Instant started, MakeRoomArgs args) {
      this.plan = plan;
      this.started = started;
      this.nodes = nodes(plan);
      took(args);
    }

    void took(MakeRoomArgs args) {
      timeout = args.planTimeout();
      keepEmptyFor = args.freeNodes().map(MakeRoomArgs.FreeNodes::keepEmptyFor).orElse(MakeRoomArgs.FreeNodes.DEFAULT_KEEP_EMPTY_FOR);
    }

    boolean freesNode() {
      return plan.kind() == RoomPlan.Kind.FREE_NODE;
    }
  }

  private final PodSource cache;
  private final Clock clock;
  private final Metrics metrics;
  private final Steps steps;
  private final Supplier<Rules> rules;
  private final BooleanSupplier mayStart;
  private final Runnable lookSoon;
  private volatile RoomHolds holds = RoomHolds.NONE;
  private volatile NodeHolds nodeHolds = NodeHolds.NONE;
  /** By {@link #key}: the pending pod's uid, or the node to empty; in the order they started. */
  private final Map<String, InFlight> inFlight = new LinkedHashMap<>();
  /** The uids of the pods (and moved pods' controllers) of plans in flight: an event of one brings a look. */
  private volatile Set<String> watched = Set.of();
  /** A step's pod (uid) whose eviction the path refused, and why; read at the next look. */
  private final Map<String, String> refused = new ConcurrentHashMap<>();
  /** The pods (uids) of the steps handed to the path by plans in flight: the path sends only these ({@link #wants}). */
  private final Set<String> handed = ConcurrentHashMap.newKeySet();

  /**
   * @param mayStart whether this replica may start plans now (the leader, not stopping)
   * @param lookSoon asks for a {@link #look} on the sweeper's timer thread soon (coalesced there)
   */
  RoomPlans(PodSource cache, Clock clock, Metrics metrics, Steps steps, Supplier<Rules> rules, BooleanSupplier mayStart, Runnable lookSoon) {
    this.cache = cache;
    this.clock = clock;
    this.metrics = metrics;
    this.steps = steps;
    this.rules = rules;
    this.mayStart = mayStart;
    this.lookSoon = lookSoon;
  }

  void holdRoomWith(RoomHolds value) {
    this.holds = value;
  }

  void holdNodesWith(NodeHolds value) {
    this.nodeHolds = value;
  }

  /** A plan's place among those in flight: its pending pod (uid), or the node it empties. */
  private static String key(RoomPlan plan) {
    return plan.pending().map(RoomPlan.PodRef::uid).orElse(nodeKey(plan.target()));
  }

  private static String nodeKey(String node) {
    return "node/" + node;
  }

  /** The plans of a balance pass made under {@code in}: each starts unless it overlaps one in flight (dry-run: recorded). */
  synchronized void offer(List<RoomPlan> plans, Rules in) {
    Instant now = clock.instant();
    for (RoomPlan plan : plans) {
      if (in.policy().dryRun()) {
        dryRun(plan, in, now);
      } else if (mayStart.getAsBoolean() && free(plan)) {
        start(plan, in, now);
      }
    }
    rewatch();
  }

  /** Whether the plan's pod and nodes are clear of every plan in flight (at most one plan per node). */
  private boolean free(RoomPlan plan) {
    if (inFlight.containsKey(key(plan))) {
      return false;
    }
    Set<String> nodes = nodes(plan);
    for (InFlight f : inFlight.values()) {
      if (f.nodes.stream().anyMatch(nodes::contains)) {
        LOG.debug("room plan waits for a plan in flight on one of its nodes: {}", plan.describe());
        return false;
      }
    }
    return true;
  }

  private void start(RoomPlan plan, Rules in, Instant now) {
    Optional<MakeRoomArgs> args = makeRoom(in.policy(), plan.profile());
    if (args.isEmpty()) {
      return;
    }
    InFlight f = new InFlight(plan, now, args.get());
    if (f.freesNode()) {
      Instant until = now.plus(f.timeout).plus(f.keepEmptyFor);
      if (!nodeHolds.hold(plan.target(), until)) {
        LOG.warn("room plan not started: cannot taint node {} {}:NoSchedule (needs patch on nodes: manifests/free-nodes/): {}",
            plan.target(), NodeHolds.TAINT_KEY, plan.describe());
        return;
      }
      LOG.info("room plan started (profile {}; node {} tainted {}:NoSchedule until {}): {}", plan.profile(), plan.target(),
          NodeHolds.TAINT_KEY, until, plan.describe());
    } else {
      RoomPlan.PodRef pending = plan.pending().orElseThrow();
      if (!holds.nominate(pending, plan.target())) {
        LOG.warn("room plan not started: cannot nominate {} to {}: {}", pending.key(), plan.target(), plan.describe());
        return;
      }
      LOG.info("room plan started (profile {}; {} nominated to {}): {}", plan.profile(), pending.key(), plan.target(), plan.describe());
    }
    inFlight.put(key(plan), f);
    metrics.roomPlansStarted.inc();
    event(f, "Normal", "PodSweeperRoomPlanStarted", (f.freesNode() ? "emptying node " : "making room on ") + plan.target() + ": "
        + plan.describe());
    look(f, in, now);
  }

  /** An Event about the plan: on the pending pod, or on the node it empties. */
  private void event(InFlight f, String type, String reason, String message) {
    f.plan.pending().ifPresentOrElse(p -> holds.event(p, type, reason, message), () -> nodeHolds.event(f.plan.target(), type, reason, message));
  }

  /** Dry-run: every step whose pod is still there goes through the path as a dry-run decision; nothing is written. */
  private void dryRun(RoomPlan plan, Rules in, Instant now) {
    LOG.info("dry-run: would carry out room plan (profile {}): {}", plan.profile(), plan.describe());
    for (int k = 0; k < plan.moves().size(); k++) {
      int step = k;
      pod(plan.moves().get(k)).ifPresent(pod -> steps.evict(plan.decision(step, pod, now), in.generation()));
    }
  }

  /**
   * Every plan in flight, on the cluster as it is (not while the cache is behind); and, on the leader, every node whose
   * taint of this service has had its time and that no plan in flight holds is let go.
   */
  synchronized void look() {
    Rules in = rules.get();
    if (!cache.isCurrent()) {
      return;
    }
    Instant now = clock.instant();
    if (mayStart.getAsBoolean()) {
      releaseExpired(now);
    }
    if (inFlight.isEmpty()) {
      return;
    }
    for (InFlight f : new ArrayList<>(inFlight.values())) {
      look(f, in, now);
    }
    rewatch();
  }

  /** Takes off this service's taints whose time is up; a value that is not a time (hand-written) is left alone. */
  private void releaseExpired(Instant now) {
    for (NodeRecord node : cache.nodes()) {
      for (Taint t : node.taints()) {
        if (NodeHolds.TAINT_KEY.equals(t.key()) && !inFlight.containsKey(nodeKey(node.name()))
            && NodeHolds.until(t.value()).filter(until -> !now.isBefore(until)).isPresent()) {
          if (nodeHolds.release(node.name())) {
            LOG.info("node {}: its taint {}={}:NoSchedule has had its time, taken off", node.name(), t.key(), t.value());
          }
        }
      }
    }
  }

  private void look(InFlight f, Rules in, Instant now) {
    if (!now.isBefore(f.started.plus(f.timeout))) {
      end(f, Optional.of(PlanAbandon.TIMED_OUT), "not complete within its planTimeout of " + f.timeout.toSeconds() + "s");
      return;
    }
    for (RoomPlan.Move m : f.plan.moves()) {
      String why = refused.get(m.uid());
      if (why != null) {
        end(f, Optional.of(PlanAbandon.EVICTION_REFUSED), "the eviction of " + m.key() + " was refused: " + why);
        return;
      }
    }
    RoomPlan.Progress progress = f.plan.progress(cache);
    switch (progress.step()) {
      case EVICT -> evict(f, progress.index(), in, now);
      case WAIT, BIND -> LOG.debug("room plan for {}: {}", key(f.plan), progress.detail());
      case COMPLETE -> end(f, Optional.empty(), progress.detail());
      case ABANDON -> end(f, progress.abandon(), progress.detail());
    }
  }

  /** Hands step {@code k} to the removal path, unless it was handed for this very pod version a moment ago. */
  private void evict(InFlight f, int k, Rules in, Instant now) {
    Optional<PodRecord> pod = pod(f.plan.moves().get(k));
    if (pod.isEmpty() || (f.handedStep == k && f.handedVersion.equals(pod.get().resourceVersion())
        && now.isBefore(f.handedAt.plus(HAND_AGAIN_AFTER)))) {
      return;
    }
    f.hands = f.handedStep == k ? f.hands + 1 : 1;
    if (f.hands > MAX_HANDS) {
      end(f, Optional.of(PlanAbandon.EVICTION_REFUSED), "the removal path did not evict " + pod.get().key() + " when asked "
          + MAX_HANDS + " times (held back: its decisions say why)");
      return;
    }
    f.handedStep = k;
    f.handedVersion = pod.get().resourceVersion();
    f.handedAt = now;
    handed.add(pod.get().uid());
    steps.evict(f.plan.decision(k, pod.get(), now), in.generation());
  }

  /** The move's pod as cached, if it is still the one planned (its uid). */
  private Optional<PodRecord> pod(RoomPlan.Move m) {
    return cache.pod(m.key()).filter(p -> p.uid().equals(m.uid()));
  }

  /**
   * The plan is complete (no reason) or abandoned: the nomination goes, it is counted, logged and told. A node emptied
   * stays tainted {@code keepEmptyFor} from now; a node whose plan was abandoned is let go at once.
   */
  private void end(InFlight f, Optional<PlanAbandon> abandon, String detail) {
    inFlight.remove(key(f.plan));
    f.plan.moves().forEach(m -> {
      refused.remove(m.uid());
      handed.remove(m.uid());
    });
    String told = detail;
    if (!f.freesNode() || abandon.isPresent()) {
      letGo(f);
    } else {
      Instant until = clock.instant().plus(f.keepEmptyFor);
      told = detail + (nodeHolds.hold(f.plan.target(), until) ? "; tainted " + NodeHolds.TAINT_KEY + ":NoSchedule until " + until
          + " for a scale-down to take it" : "; its taint keeps the time it had (it could not be moved)");
    }
    if (abandon.isEmpty()) {
      metrics.roomPlansCompleted.inc();
      LOG.info("room plan complete: {}: {}", told, f.plan.describe());
      event(f, "Normal", "PodSweeperRoomPlanCompleted", told);
      return;
    }
    String reason = abandon.get().wireName();
    metrics.roomPlansAbandoned.labels(reason).inc();
    LOG.warn("room plan abandoned ({}): {}; the plan was: {}", reason, detail, f.plan.describe());
    event(f, "Warning", "PodSweeperRoomPlanAbandoned", reason + ": " + detail);
  }

  /** What holds the plan's room goes: the pending pod's nomination, or the node's taint. */
  private void letGo(InFlight f) {
    if (f.freesNode()) {
      nodeHolds.release(f.plan.target());
    } else {
      holds.clear(f.plan.pending().orElseThrow(), f.plan.target());
    }
  }

  /** A new policy: a plan whose profile no longer runs MakeRoom, or runs in dry-run, is abandoned; the others take its timeout. */
  synchronized void policyChanged(Rules in) {
    for (InFlight f : new ArrayList<>(inFlight.values())) {
      Optional<MakeRoomArgs> args = makeRoom(in.policy(), f.plan.profile());
      if (args.isEmpty() || in.policy().dryRun()) {
        end(f, Optional.of(PlanAbandon.POLICY_CHANGED), in.policy().dryRun() ? "the policy in force is a dry-run"
            : "profile " + f.plan.profile() + " no longer runs MakeRoom");
      } else {
        f.took(args.get());
      }
    }
    rewatch();
  }

  /**
   * This replica lost the lease: every plan in flight is abandoned at once and its hold let go (the nomination cleared,
   * the node's taint taken off), before a new leader, a lease duration later, plans again from the cluster as it is.
   * Kept, a deposed replica's plan would time out later and clear a nomination the new leader had written since.
   */
  synchronized void steppedDown() {
    for (InFlight f : new ArrayList<>(inFlight.values())) {
      end(f, Optional.of(PlanAbandon.LEADERSHIP_LOST), "this replica no longer leads; the new leader plans afresh");
    }
    rewatch();
  }

  /** What became of a removal: a refused step of a plan in flight is noted for its next look, which comes soon. */
  void outcome(Outcome o) {
    Decision d = o.decision();
    if (o.dryRun() || !MakeRoomArgs.NAME.equals(d.strategy()) || !watched.contains(d.uid())) {
      return;
    }
    if (o.result() != Result.SUCCESS && o.result() != Result.BACKGROUND && o.result() != Result.GONE && o.result() != Result.CONFLICT) {
      refused.put(d.uid(), o.result().label() + (o.message().isEmpty() ? "" : " (" + o.message() + ")"));
    }
    lookSoon.run();
  }

  /**
   * Whether the removal path may still send a node-aware decision: one of MakeRoom only while it is a step a plan in
   * flight handed (a plan that ended takes back the step still waiting for its turn), or a dry-run's.
   */
  boolean wants(Decision d) {
    return !MakeRoomArgs.NAME.equals(d.strategy()) || handed.contains(d.uid()) || rules.get().policy().dryRun();
  }

  /** Whether an event of this pod may move a plan in flight (the pending pod, a moved pod, a sibling of one). */
  boolean involves(PodRecord pod) {
    Set<String> w = watched;
    if (w.isEmpty()) {
      return false;
    }
    return w.contains(pod.uid()) || pod.controller().map(o -> w.contains(o.uid())).orElse(false);
  }

  /** Plans in flight, for tests and the log. */
  synchronized List<RoomPlan> inFlight() {
    return inFlight.values().stream().map(f -> f.plan).toList();
  }

  /** Shutting down: every plan in flight stops here, and its nomination is cleared (nobody would clear it later). */
  synchronized void close() {
    for (InFlight f : inFlight.values()) {
      letGo(f);
      LOG.info("room plan stopped at shutdown, {}: {}", f.freesNode() ? "node " + f.plan.target() + " untainted" : "nomination cleared",
          f.plan.describe());
    }
    inFlight.clear();
    handed.clear();
    rewatch();
  }

  private void rewatch() {
    Set<String> w = new HashSet<>();
    for (InFlight f : inFlight.values()) {
      f.plan.pending().ifPresent(p -> w.add(p.uid()));
      f.plan.moves().forEach(m -> {
        w.add(m.uid());
        w.add(m.ownerUid());
      });
    }
    watched = Set.copyOf(w);
  }

  /** The plan's target and every node a move leaves or goes to. */
  private static Set<String> nodes(RoomPlan plan) {
    Set<String> nodes = new HashSet<>();
    nodes.add(plan.target());
    plan.moves().forEach(m -> {
      nodes.add(m.from());
      nodes.add(m.to());
    });
    return nodes;
  }

  /** The MakeRoom args of the policy's profile of that name, if it runs MakeRoom. */
  static Optional<MakeRoomArgs> makeRoom(Policy policy, String profile) {
    return policy.profiles().stream().filter(p -> p.name().equals(profile)).flatMap(p -> p.balance().stream())
        .filter(MakeRoomArgs.class::isInstance).map(MakeRoomArgs.class::cast).findFirst();
  }
}
