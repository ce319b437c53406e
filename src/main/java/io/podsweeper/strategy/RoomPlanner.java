package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.MakeRoomArgs;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * MakeRoom's search, on one {@link Simulation} of the pass: for a pending pod, the node and the fewest, least
 * disruptive moves after which it fits there; for an under-used node, moves that empty it. A move is an eviction whose
 * replacement the simulation puts on another node; when none has room, another pod may first move off a node to make
 * it (a chain), within the plan's moves. Plans accepted stay in the simulation, so a later plan of the pass counts with
 * them, and touch no node an earlier plan touches, so each holds on its own.
 *
 * <p>Least disruptive, among plans of as many moves: fewer moved pods a PodDisruptionBudget covers, then the lowest
 * highest priority moved, then the least cpu requested by the moved pods (the smallest pods restart the cheapest), then
 * the target's name. Every moved pod is one a controller recreates elsewhere (ReplicaSet, ReplicationController,
 * StatefulSet, CloneSet), of no higher priority than the pod room is made for, that the profile's evictor lets go
 * (nodeFit aside: the simulation places it), that no PodDisruptionBudget's {@code disruptionsAllowed} forbids (moves
 * of the pass counted), and within the policy's limits, all the pass's plans counted as one window.
 *
 * <p>Bounded: a pending pod's search makes at most {@link #CHECKS_PER_SEARCH} filter checks (and node scans) and tries
 * at most {@link #TARGETS} target nodes, fewest moves first by a lower bound that counts a pod too big for any node's
 * room as the moves its chain needs, and {@link #RIVALS} more once a plan is found; {@link #SUBSETS} sets of pods to
 * move on each; chains through at most {@link #CHAIN_NODES} nodes and {@link #CHAIN_PODS} pods on each. The best plan
 * found within the bounds wins, and a search cut short says so.
 */
final class RoomPlanner {
  static final long CHECKS_PER_SEARCH = 100_000;
  static final int TARGETS = 16;
  /** Once a plan is found, at most this many more targets of as few moves are tried for a less disruptive one. */
  static final int RIVALS = 3;
  static final int SUBSETS = 16;
  static final int CHAIN_NODES = 8;
  static final int CHAIN_PODS = 4;
  private static final Map<String, Integer> QOS_RANK = Map.of("BestEffort", 0, "Burstable", 1, "Guaranteed", 2);

  private final NodePass pass;
  private final Simulation sim;
  /** The pass's nodes in the order destinations are tried: the most cpu free first, as the scheduler's LeastAllocated prefers. */
  private final List<NodeRecord> destinations;
  /** Each destination's free cpu when the pass began, in the same order (never more than now, but where pods left). */
  private final long[] freeAtStart;
  private final Map<String, NodeRecord> byName = new HashMap<>();
  /** The largest cpu request of a pod on the pass's nodes: one pod leaving frees no more. */
  private final long largestCpu;
  /** Per node, its pods' cpu requests, largest first, as the pass began (for lower bounds of untouched nodes). */
  private final Map<String, long[]> cpuSizes = new HashMap<>();
  /** Work done besides filter checks (nodes scanned), counted against the same bound. */
  private long scanned;
  /** The most cpu any node has free now (at most): a pod requesting more needs a chain to move. */
  private long roomiest;
  /** The largest cpu request of a pod that moves straight (no more than {@link #roomiest}). */
  private long straightest;
  /** Every pod's cpu request on the pass's nodes, in order. */
  private final long[] cpus;
  private final Map<String, Optional<String>> protections = new HashMap<>();
  /** The nodes the pass's plans touch: no other plan may. */
  private final Set<String> touched = new HashSet<>();
  /** The pods the pass's plans move. */
  private final List<PodRecord> moved = new ArrayList<>();
  /** Per controller, its pods bound to a node and not terminating in the view (RoomPlan.Move's ownerPlaced). */
  private final Map<String, Integer> ownerPlaced = new HashMap<>();
  private long checksEnd;
  /** The last move {@link #admits} refused while placing: why a pod found no node within the rules, for reasons. */
  private Optional<String> refusedMove = Optional.empty();

  /** A move being planned: the pod, its node, the node its replacement goes to, and why it fits there. */
  private record Planned(PodRecord pod, String from, String to, String why) {}

  /** A search's answer: a plan, or why there is none. */
  record Outcome(Optional<RoomPlan> plan, String why) {}

  /** A plan found for a target, with what ranks it. */
  private record Candidate(String target, List<Planned> moves, int covered, int maxPriority, long cpu) {}

  RoomPlanner(NodePass pass, Simulation sim) {
    this.pass = pass;
    this.sim = sim;
    Map<String, Long> freeCpu = new HashMap<>();
    long largest = 0;
    for (NodeRecord n : pass.nodes()) {
      byName.put(n.name(), n);
      freeCpu.put(n.name(), n.allocatable().getOrDefault("cpu", 0L) - sim.requested(n.name(), "cpu"));
      for (PodRecord p : pass.view.podsOnNode(n.name())) {
        largest = Math.max(largest, cpu(p));
      }
    }
    this.largestCpu = largest;
    this.cpus = pass.nodes().stream().flatMap(n -> pass.view.podsOnNode(n.name()).stream()).filter(p -> !p.terminated())
        .mapToLong(RoomPlanner::cpu).sorted().toArray();
    this.destinations = pass.nodes().stream()
        .sorted(Comparator.comparing((NodeRecord n) -> -freeCpu.get(n.name())).thenComparing(NodeRecord::name)).toList();
    this.freeAtStart = destinations.stream().mapToLong(n -> freeCpu.get(n.name())).toArray();
    // The plans other profiles made earlier in the pass: their nodes are taken, their moves already made.
    for (RoomPlan plan : pass.plans()) {
      touched.add(plan.target());
      plan.pending().flatMap(p -> record(p.namespace(), p.uid())).ifPresent(p -> sim.move(p, plan.target()));
      for (RoomPlan.Move m : plan.moves()) {
        touched.add(m.from());
        touched.add(m.to());
        record(m.namespace(), m.uid()).ifPresent(p -> {
          sim.move(p, m.to());
          moved.add(p);
        });
      }
    }
  }

  private Optional<PodRecord> record(String namespace, String uid) {
    return pass.view.podsInNamespace(namespace).stream().filter(p -> p.uid().equals(uid)).findFirst();
  }

  /** What the pods on the node request, with the pass's plans made. */
  Map<String, Long> requested(String node) {
    return sim.requested(node);
  }

  // ---- making room for a pending pod -----------------------------------------------------------------------------

  /** The best plan that lets {@code pending} fit a node, or why there is none. */
  Outcome makeRoom(PodRecord pending, int maxMoves) {
    checksEnd = sim.checks() + scanned + CHECKS_PER_SEARCH;
    Map<String, Integer> refusals = new LinkedHashMap<>();
    List<NodeRecord> targets = new ArrayList<>();
    for (NodeRecord n : pass.nodes()) {
      Optional<SchedulerFilters.Unfit> unfit = sim.refusal(pending, n);
      if (unfit.isEmpty()) {
        return new Outcome(Optional.empty(), "fits node " + n.name() + " as the cluster is now: the scheduler will place it, nothing to move");
      }
      refusals.merge(unfit.get().brief(), 1, Integer::sum);
      if (sim.staticRefusal(pending, n).isEmpty() && !touched.contains(n.name())) {
        targets.add(n);
      }
    }
    String why = refusals.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
        .map(Map.Entry::getKey).collect(Collectors.joining(", "));
    if (targets.isEmpty()) {
      return new Outcome(Optional.empty(), why + " on every node; no move changes that (node affinity, taints, cordons)"
          + (touched.isEmpty() ? "" : " but on nodes other plans of this pass use"));
    }
    Map<String, int[]> bounds = new HashMap<>();
    roomiest = 0;
    for (int i = 0; i < destinations.size(); i++) {
      if (!touched.contains(destinations.get(i).name())) {
        roomiest = freeAtStart[i];
        break;
      }
    }
    for (String name : sim.vacated()) {
      if (byName.containsKey(name) && !touched.contains(name)) {
        roomiest = Math.max(roomiest, byName.get(name).allocatable().getOrDefault("cpu", 0L) - sim.requested(name, "cpu"));
      }
    }
    int at = java.util.Arrays.binarySearch(cpus, roomiest + 1);
    at = at >= 0 ? at : -at - 1;
    while (at > 0 && cpus[at - 1] > roomiest) {
      at--;
    }
    straightest = at > 0 ? cpus[at - 1] : 0;
    for (NodeRecord t : targets) {
      bounds.put(t.name(), lowerBound(pending, t, roomiest));
    }
    targets.removeIf(t -> bounds.get(t.name())[0] > maxMoves);
    if (targets.isEmpty()) {
      return new Outcome(Optional.empty(), why + "; no node it may go to frees enough room with " + maxMoves + " move(s) or fewer"
          + " (maxMovesPerPlan), even moving every pod there");
    }
    targets.sort(Comparator.comparingInt((NodeRecord t) -> bounds.get(t.name())[0]).thenComparingInt(t -> bounds.get(t.name())[1])
        .thenComparing(NodeRecord::name));
    int priority = pending.priority().orElse(0);
    Candidate best = null;
    List<String> rejections = new ArrayList<>();
    int rivals = 0;
    for (NodeRecord target : targets.subList(0, Math.min(TARGETS, targets.size()))) {
      if (best != null && (bounds.get(target.name())[0] > best.moves().size() || rivals++ >= RIVALS)) {
        break;
      }
      if (exhausted()) {
        rejections.add("search bound reached (" + CHECKS_PER_SEARCH + " checks)");
        break;
      }
      Candidate found = roomOn(pending, target, priority, maxMoves, rejections);
      if (found != null && (best == null || rank().compare(found, best) < 0)) {
        best = found;
      }
    }
    if (best == null) {
      return new Outcome(Optional.empty(), why + "; " + (rejections.isEmpty() ? "no plan found" : String.join("; ",
          rejections.stream().distinct().limit(3).toList())));
    }
    sim.move(pending, best.target());
    apply(best);
    RoomPlan.PodRef ref = new RoomPlan.PodRef(pending.namespace(), pending.name(), pending.uid());
    return new Outcome(Optional.of(new RoomPlan(RoomPlan.Kind.MAKE_ROOM, pass.profile.name(), Optional.of(ref), why, best.target(),
        moves(best), pass.now)), "");
  }

  /**
   * No plan for the node has fewer moves (the first number): the fewest pods there whose requests, taken off it, leave
   * room for the pod in every resource and a pod slot (the largest first), where a pod too big for any node's room now
   * counts two moves (it needs a chain). The second: as many, of pods small enough to move straight (the likelier plan).
   * More than every pod there: {@code Integer.MAX_VALUE}. An untouched node's pods are the view's.
   */
  private int[] lowerBound(PodRecord pod, NodeRecord node, long roomiest) {
    int bound = Math.max(0, sim.podCount(node.name()) + 1 - node.allocatable().getOrDefault("pods", 0L).intValue());
    int straight = bound;
    for (Map.Entry<String, Long> r : pod.scheduling().requests().entrySet()) {
      long deficit = r.getValue() + sim.requested(node.name(), r.getKey()) - node.allocatable().getOrDefault(r.getKey(), 0L);
      if (deficit <= 0) {
        continue;
      }
      long[] sizes = r.getKey().equals("cpu") ? cpuSizes.computeIfAbsent(node.name(), this::cpuSizes)
          : sim.podsOn(node.name()).stream().mapToLong(p -> p.scheduling().requests().getOrDefault(r.getKey(), 0L))
              .map(v -> -v).sorted().map(v -> -v).toArray();
      int any = fewest(sizes, deficit, Long.MAX_VALUE);
      int direct = r.getKey().equals("cpu") ? fewest(sizes, deficit, roomiest) : any;
      // A cover with a pod too big to move straight takes at least its chain's moves more.
      long smallestBig = Long.MAX_VALUE;
      for (long size : r.getKey().equals("cpu") ? sizes : new long[0]) {
        smallestBig = size > roomiest ? size : smallestBig;
      }
      int withBig = any == Integer.MAX_VALUE || smallestBig == Long.MAX_VALUE ? any : any + cost(smallestBig) - 1;
      bound = Math.max(bound, Math.min(direct, withBig));
      straight = Math.max(straight, direct);
    }
    return new int[] {bound, straight};
  }

  /** How many of {@code sizes} (largest first), none above {@code atMost}, cover {@code deficit}; none do: MAX_VALUE. */
  private static int fewest(long[] sizes, long deficit, long atMost) {
    int n = 0;
    for (long size : sizes) {
      if (deficit <= 0) {
        break;
      }
      if (size <= atMost) {
        deficit -= size;
        n++;
      }
    }
    return deficit > 0 ? Integer.MAX_VALUE : n;
  }

  private long[] cpuSizes(String node) {
    return pass.view.podsOnNode(node).stream().filter(p -> !p.terminated()).mapToLong(RoomPlanner::cpu).map(v -> -v).sorted().map(v -> -v)
        .toArray();
  }

  /**
   * The nodes that may have room for {@code cpu} now: those pods have left in the moves made so far, then the others,
   * most room first, while their room when the pass began is enough (a node no pod left has no more room than then).
   */
  private List<NodeRecord> roomy(long cpu) {
    List<NodeRecord> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (String name : sim.vacated()) {
      NodeRecord n = byName.get(name);
      if (n != null && seen.add(name)) {
        out.add(n);
      }
    }
    for (int i = 0; i < destinations.size() && freeAtStart[i] >= cpu; i++) {
      if (seen.add(destinations.get(i).name())) {
        out.add(destinations.get(i));
      }
    }
    scanned += out.size();
    return out;
  }

  /** The best plan making room for the pod on {@code target}, or null (with why in {@code rejections}). */
  private Candidate roomOn(PodRecord pending, NodeRecord target, int priority, int maxMoves, List<String> rejections) {
    List<PodRecord> blockers = sim.conflicting(pending, target);
    for (PodRecord b : blockers) {
      Optional<String> stays = protection(b, priority);
      if (stays.isPresent()) {
        rejections.add(target.name() + ": " + b.key() + " keeps " + pending.name() + " off it and may not move (" + stays.get() + ")");
        return null;
      }
    }
    if (blockers.size() > maxMoves) {
      rejections.add(target.name() + ": " + blockers.size() + " pods keep it off, more than maxMovesPerPlan " + maxMoves);
      return null;
    }
    List<PodRecord> candidates = sim.podsOn(target.name()).stream().filter(p -> !blockers.contains(p))
        .filter(p -> protection(p, priority).isEmpty()).sorted(disruption()).toList();
    Map<String, Long> need = new HashMap<>();
    Map<String, Long> requested = new HashMap<>(sim.requested(target.name()));
    blockers.forEach(b -> b.scheduling().requests().forEach((r, v) -> requested.merge(r, -v, Long::sum)));
    pending.scheduling().requests().forEach((r, v) -> {
      long deficit = v + requested.getOrDefault(r, 0L) - target.allocatable().getOrDefault(r, 0L);
      if (v > 0 && deficit > 0) {
        need.put(r, deficit);
      }
    });
    int slots = Math.max(0, sim.podCount(target.name()) - blockers.size() + 1 - target.allocatable().getOrDefault("pods", 0L).intValue());
    int blocking = blockers.stream().mapToInt(this::cost).sum();
    if (blocking > maxMoves) {
      rejections.add(target.name() + ": moving the pods that keep " + pending.name() + " off it takes more than maxMovesPerPlan " + maxMoves);
      return null;
    }
    // The sets of pods whose leaving makes room, fewest moves (chains counted) first, then least disruptive.
    List<List<PodRecord>> sets = new ArrayList<>();
    for (int k = 0; k + blockers.size() <= maxMoves && sets.size() < SUBSETS; k++) {
      sets.addAll(covers(candidates, k, need, slots, maxMoves - blocking, SUBSETS - sets.size()));
    }
    sets.sort(Comparator.comparingInt(this::cost));
    Candidate best = null;
    for (List<PodRecord> set : sets) {
      if (best != null && best.moves().size() <= blocking + cost(set)) {
        break;
      }
      List<PodRecord> movers = new ArrayList<>(blockers);
      movers.addAll(set);
      Candidate found = attempt(pending, target, movers, priority, maxMoves, rejections);
      if (found != null && (best == null || rank().compare(found, best) < 0)) {
        best = found;
      }
      if (exhausted()) {
        return best;
      }
    }
    if (sets.isEmpty()) {
      rejections.add(target.name() + ": the pods that may move there free too little room within maxMovesPerPlan " + maxMoves);
    }
    return best;
  }

  /**
   * The fewest moves moving the pod takes: one, or, for a pod bigger than any node's room now, one more for each pod
   * (no bigger than the largest that moves straight) that must first leave a node to make room for it.
   */
  private int cost(PodRecord pod) {
    return cost(cpu(pod));
  }

  private int cost(long cpu) {
    return cpu <= roomiest ? 1 : 1 + (int) Math.min(MakeRoomArgs.MAX_MOVES_PER_PLAN, (cpu - roomiest + straightest - 1) / Math.max(1, straightest));
  }

  private int cost(List<PodRecord> pods) {
    return pods.stream().mapToInt(this::cost).sum();
  }

  /**
   * Up to {@code limit} sets of {@code k} pods of {@code candidates} (in their order, so the least disruptive sets come
   * first) whose requests cover {@code need} in every resource and free {@code slots} pod slots, moved in at most
   * {@code maxCost} moves.
   */
  private List<List<PodRecord>> covers(List<PodRecord> candidates, int k, Map<String, Long> need, int slots, int maxCost, int limit) {
    List<List<PodRecord>> out = new ArrayList<>();
    if (k < slots) {
      return out;
    }
    Map<String, List<Long>> largest = new HashMap<>();
    need.keySet().forEach(r -> largest.put(r, candidates.stream().map(p -> p.scheduling().requests().getOrDefault(r, 0L))
        .sorted(Comparator.reverseOrder()).toList()));
    choose(candidates, 0, k, new ArrayList<>(), new HashMap<>(need), largest, maxCost, limit, out);
    return out;
  }

  private void choose(List<PodRecord> candidates, int from, int k, List<PodRecord> chosen, Map<String, Long> remaining,
      Map<String, List<Long>> largest, int maxCost, int limit, List<List<PodRecord>> out) {
    if (out.size() >= limit || cost(chosen) > maxCost) {
      return;
    }
    int left = k - chosen.size();
    if (left == 0) {
      if (remaining.values().stream().allMatch(v -> v <= 0)) {
        out.add(List.copyOf(chosen));
      }
      return;
    }
    for (Map.Entry<String, Long> r : remaining.entrySet()) {
      long reachable = largest.get(r.getKey()).stream().limit(left).mapToLong(Long::longValue).sum();
      if (reachable < r.getValue()) {
        return;
      }
    }
    for (int i = from; i <= candidates.size() - left && out.size() < limit; i++) {
      PodRecord p = candidates.get(i);
      chosen.add(p);
      remaining.replaceAll((r, v) -> v - p.scheduling().requests().getOrDefault(r, 0L));
      choose(candidates, i + 1, k, chosen, remaining, largest, maxCost, limit, out);
      remaining.replaceAll((r, v) -> v + p.scheduling().requests().getOrDefault(r, 0L));
      chosen.remove(chosen.size() - 1);
    }
  }

  /**
   * Whether moving {@code movers} off the target lets the pending pod fit there, each mover (largest first) finding
   * another node with the pending pod held on the target: the plan, or null. The simulation is left as it was.
   */
  private Candidate attempt(PodRecord pending, NodeRecord target, List<PodRecord> movers, int priority, int maxMoves,
      List<String> rejections) {
    int mark = sim.mark();
    try {
      movers.forEach(m -> sim.move(m, ""));
      Optional<SchedulerFilters.Unfit> unfit = sim.refusal(pending, target);
      sim.rollback(mark);
      if (unfit.isPresent()) {
        rejections.add(target.name() + ": " + (movers.isEmpty() ? "" : "moving " + names(movers) + " is not enough: ") + unfit.get().reason());
        return null;
      }
      sim.move(pending, target.name());
      refusedMove = Optional.empty();
      List<Planned> planned = new ArrayList<>();
      List<PodRecord> order = movers.stream().sorted(Comparator.comparing(RoomPlanner::cpu).reversed().thenComparing(PodRecord::key)).toList();
      for (int i = 0; i < order.size(); i++) {
        PodRecord mover = order.get(i);
        Optional<String> refused = admits(mover, planned);
        if (refused.isPresent()) {
          rejections.add(target.name() + ": " + mover.key() + " may not move (" + refused.get() + ")");
          return null;
        }
        sim.move(mover, "");
        int budget = maxMoves - (order.size() - i - 1);
        if (!place(mover, target.name(), planned, priority, budget)) {
          rejections.add(target.name() + ": " + mover.key() + " would fit no other node" + refusedMove.map(r -> " (" + r + ")")
              .orElse(planned.size() + 2 <= budget ? ", even after moving another pod"
                  : " (no move left within maxMovesPerPlan " + maxMoves + " to make room there)"));
          return null;
        }
      }
      sim.move(pending, "");
      if (sim.refusal(pending, target).isPresent()) {
        return null;
      }
      return candidate(target.name(), planned);
    } finally {
      sim.rollback(mark);
    }
  }

  // ---- placing a moved pod ---------------------------------------------------------------------------------------

  /**
   * Puts {@code pod} (off every node now) on a destination: the first that takes it as it is, else one where moving
   * another pod first makes room (a chain, while {@code planned} and this pod's moves stay within {@code budget}). Adds
   * the moves to {@code planned}; false, with nothing changed, if there is none.
   */
  private boolean place(PodRecord pod, String target, List<Planned> planned, int priority, int budget) {
    if (!admitted(pod, planned)) {
      return false;
    }
    Optional<NodeRecord> at = firstFit(pod, target);
    if (at.isPresent()) {
      String why = room(pod, at.get()) + " free there";
      sim.move(pod, at.get().name());
      planned.add(new Planned(pod, pod.nodeName(), at.get().name(), why));
      return true;
    }
    if (planned.size() + 2 > budget) {
      return false;
    }
    for (NodeRecord d : chainNodes(pod, target)) {
      List<PodRecord> others = sim.podsOn(d.name()).stream().filter(y -> !y.uid().equals(pod.uid()) && planned.stream()
              .noneMatch(p -> p.pod().uid().equals(y.uid())) && protection(y, priority).isEmpty())
          .sorted(Comparator.comparing(RoomPlanner::cpu).thenComparing(PodRecord::key)).toList();
      int tried = 0;
      for (PodRecord y : others) {
        if (tried++ >= CHAIN_PODS || exhausted()) {
          break;
        }
        int mark = sim.mark();
        int size = planned.size();
        sim.move(y, "");
        if (sim.refusal(pod, d).isEmpty() && place(y, target, planned, priority, budget - 1) && sim.refusal(pod, d).isEmpty()
            && admitted(pod, planned)) {
          String why = "once " + y.name() + " leaves, " + room(pod, d) + " free there";
          sim.move(pod, d.name());
          planned.add(new Planned(pod, pod.nodeName(), d.name(), why));
          return true;
        }
        sim.rollback(mark);
        planned.subList(size, planned.size()).clear();
      }
    }
    return false;
  }

  /**
   * The first node that takes the pod now: of those pods have left in the moves made so far, then of the others, most
   * room first, while their room when the pass began is enough (a node no pod left has no more room than then).
   */
  private Optional<NodeRecord> firstFit(PodRecord pod, String target) {
    long cpu = cpu(pod);
    for (String name : sim.vacated()) {
      NodeRecord n = byName.get(name);
      if (n != null && allowed(n, pod, target) && sim.refusal(pod, n).isEmpty()) {
        return Optional.of(n);
      }
    }
    for (int i = 0; i < destinations.size() && freeAtStart[i] >= cpu; i++) {
      NodeRecord n = destinations.get(i);
      scanned++;
      if (allowed(n, pod, target) && sim.refusal(pod, n).isEmpty()) {
        return Optional.of(n);
      }
    }
    return Optional.empty();
  }

  /** A destination may take the pod: not the node room is made on (or emptied), not its own, no other plan's. */
  private boolean allowed(NodeRecord node, PodRecord pod, String target) {
    return !node.name().equals(target) && !node.name().equals(pod.nodeName()) && !touched.contains(node.name());
  }

  /**
   * Where a chain may make room for the pod: nodes it fails only for resources, the smallest shortfall (in shares of the
   * node's allocatable) first.
   */
  private List<NodeRecord> chainNodes(PodRecord pod, String target) {
    Map<String, Double> shortfall = new HashMap<>();
    List<NodeRecord> out = new ArrayList<>();
    for (NodeRecord n : roomy(cpu(pod) - largestCpu)) {
      long[] sizes = cpuSizes.computeIfAbsent(n.name(), this::cpuSizes);
      long room = n.allocatable().getOrDefault("cpu", 0L) - sim.requested(n.name(), "cpu");
      if (!allowed(n, pod, target) || room + (sizes.length == 0 ? 0 : sizes[0]) < cpu(pod) || sim.staticRefusal(pod, n).isPresent()) {
        continue;
      }
      double worst = 0;
      for (Map.Entry<String, Long> r : pod.scheduling().requests().entrySet()) {
        long allocatable = n.allocatable().getOrDefault(r.getKey(), 0L);
        long missing = r.getValue() + sim.requested(n.name(), r.getKey()) - allocatable;
        worst = Math.max(worst, allocatable <= 0 ? Double.MAX_VALUE : (double) missing / allocatable);
      }
      if (worst < Double.MAX_VALUE) {
        shortfall.put(n.name(), worst);
        out.add(n);
      }
    }
    out.sort(Comparator.comparing((NodeRecord n) -> shortfall.get(n.name())).thenComparing(NodeRecord::name));
    return out.subList(0, Math.min(CHAIN_NODES, out.size()));
  }

  /** What the pod needs most, free on the node now: e.g. {@code 400m cpu}, else memory, else a pod slot. */
  private String room(PodRecord pod, NodeRecord node) {
    for (String r : List.of("cpu", "memory")) {
      if (pod.scheduling().requests().getOrDefault(r, 0L) > 0) {
        return Quantities.format(r, node.allocatable().getOrDefault(r, 0L) - sim.requested(node.name(), r)) + " " + r;
      }
    }
    return "a pod slot";
  }

  // ---- freeing a node --------------------------------------------------------------------------------------------

  /** Moves that empty {@code node} of every pod but DaemonSet, mirror and static pods, each finding another node; or why not. */
  Outcome free(NodeRecord node, int maxMoves) {
    checksEnd = sim.checks() + scanned + CHECKS_PER_SEARCH;
    if (touched.contains(node.name())) {
      return new Outcome(Optional.empty(), "another plan of this pass uses it");
    }
    List<PodRecord> movers = sim.podsOn(node.name()).stream()
        .filter(p -> !p.managedByKubelet() && p.owners().stream().map(OwnerRef::kind).noneMatch("DaemonSet"::equals))
        .sorted(Comparator.comparing(RoomPlanner::cpu).reversed().thenComparing(PodRecord::key)).toList();
    if (movers.isEmpty()) {
      return new Outcome(Optional.empty(), "no pod to move (only DaemonSet, mirror or static pods)");
    }
    if (movers.size() > maxMoves) {
      return new Outcome(Optional.empty(), movers.size() + " pods, more than maxMovesPerNode " + maxMoves);
    }
    int mark = sim.mark();
    List<Planned> planned = new ArrayList<>();
    for (int i = 0; i < movers.size(); i++) {
      PodRecord mover = movers.get(i);
      int priority = mover.priority().orElse(0);
      Optional<String> stays = protection(mover, priority).or(() -> admits(mover, planned));
      if (stays.isPresent()) {
        sim.rollback(mark);
        return new Outcome(Optional.empty(), mover.key() + " may not move (" + stays.get() + ")");
      }
      sim.move(mover, "");
      if (!place(mover, node.name(), planned, priority, maxMoves - (movers.size() - i - 1))) {
        sim.rollback(mark);
        return new Outcome(Optional.empty(), mover.key() + " would fit no other node");
      }
    }
    Candidate done = candidate(node.name(), planned);
    touch(done);
    return new Outcome(Optional.of(new RoomPlan(RoomPlan.Kind.FREE_NODE, pass.profile.name(), Optional.empty(), "", node.name(),
        moves(done), pass.now)), "");
  }

  // ---- what may move ---------------------------------------------------------------------------------------------

  /**
   * Why the pod may not move for a pod of {@code priority}, or empty: it must run on a node, have a controller that
   * recreates it elsewhere, no higher priority, the evictor's leave, and be moved by no other plan of the pass.
   */
  private Optional<String> protection(PodRecord pod, int priority) {
    if (pod.priority().orElse(0) > priority) {
      return Optional.of("priority " + pod.priority().orElse(0) + " above " + priority);
    }
    return protections.computeIfAbsent(pod.uid(), uid -> staticProtection(pod));
  }

  private Optional<String> staticProtection(PodRecord pod) {
    if (!pod.runningOnNode()) {
      return Optional.of(pod.terminating() ? "terminating" : "not running on a node");
    }
    Optional<OwnerRef> controller = pod.owners().stream().filter(OwnerRef::controller).findFirst();
    if (controller.isEmpty()) {
      return Optional.of("a bare pod: nothing would recreate it");
    }
    if (!Evictor.REPLICATED_KINDS.contains(controller.get().kind())) {
      return Optional.of("its " + controller.get().kind() + " would not recreate it elsewhere");
    }
    if (pass.decided(pod) || moved.stream().anyMatch(p -> p.uid().equals(pod.uid()))) {
      return Optional.of("already moved or removed in this pass");
    }
    return pass.movable(pod);
  }

  /**
   * Why one move more of {@code pod} is not allowed with the moves planned so far in the pass: a PodDisruptionBudget
   * covering it allows no more disruptions, or a limit (per node, namespace, in total, unavailable per owner) is reached.
   */
  private Optional<String> admits(PodRecord pod, List<Planned> planned) {
    List<PodRecord> all = new ArrayList<>(moved);
    planned.forEach(p -> all.add(p.pod()));
    for (PdbRecord pdb : pass.view.pdbs(pod.namespace())) {
      OptionalInt allowed = pdb.disruptionsAllowed();
      if (allowed.isPresent() && pdb.selector().matches(pod.labels())) {
        long used = all.stream().filter(p -> p.namespace().equals(pod.namespace()) && pdb.selector().matches(p.labels())).count();
        if (used >= allowed.getAsInt()) {
          return Optional.of("PodDisruptionBudget " + pdb.name() + " allows " + allowed.getAsInt() + " disruption(s)"
              + (used > 0 ? ", " + used + " taken by moves of this pass" : ""));
        }
      }
    }
    return limit(pass.limits.maxTotal(), all.size(), "maxTotal")
        .or(() -> limit(pass.limits.maxPerNode(), count(all, p -> p.nodeName(), pod.nodeName()), "maxPerNode"))
        .or(() -> limit(pass.limits.maxPerNamespace(), count(all, PodRecord::namespace, pod.namespace()), "maxPerNamespace"))
        .or(() -> limit(pass.limits.maxUnavailablePerOwner(), count(all, RoomPlanner::owner, owner(pod)), "maxUnavailablePerOwner"));
  }

  /** {@link #admits}, the refusal kept for the reasons. */
  private boolean admitted(PodRecord pod, List<Planned> planned) {
    Optional<String> refused = admits(pod, planned);
    refused.ifPresent(r -> refusedMove = Optional.of(pod.key() + " may not move: " + r));
    return refused.isEmpty();
  }

  private static Optional<String> limit(OptionalInt limit, long used, String name) {
    return limit.isPresent() && used >= limit.getAsInt() ? Optional.of("limits." + name + " " + limit.getAsInt() + " reached by this pass's moves")
        : Optional.empty();
  }

  private static long count(List<PodRecord> pods, Function<PodRecord, String> key, String value) {
    return pods.stream().filter(p -> key.apply(p).equals(value)).count();
  }

  private static String owner(PodRecord pod) {
    return pod.controller().map(OwnerRef::uid).orElse("");
  }

  // ---- ranking and results ---------------------------------------------------------------------------------------

  /** Least disruptive pods first: not covered by a PodDisruptionBudget, lowest priority, BestEffort before Guaranteed, smallest. */
  private Comparator<PodRecord> disruption() {
    return Comparator.comparingInt((PodRecord p) -> covered(p) ? 1 : 0)
        .thenComparingInt(p -> p.priority().orElse(0))
        .thenComparingInt(p -> QOS_RANK.getOrDefault(p.scheduling().qosClass(), 1))
        .thenComparingLong(RoomPlanner::cpu)
        .thenComparing(PodRecord::key);
  }

  private boolean covered(PodRecord pod) {
    return pass.view.pdbs(pod.namespace()).stream().anyMatch(b -> b.selector().matches(pod.labels()));
  }

  private static Comparator<Candidate> rank() {
    return Comparator.comparingInt((Candidate c) -> c.moves().size()).thenComparingInt(Candidate::covered)
        .thenComparingInt(Candidate::maxPriority).thenComparingLong(Candidate::cpu).thenComparing(Candidate::target);
  }

  private Candidate candidate(String target, List<Planned> planned) {
    return new Candidate(target, List.copyOf(planned), (int) planned.stream().filter(p -> covered(p.pod())).count(),
        planned.stream().mapToInt(p -> p.pod().priority().orElse(0)).max().orElse(0),
        planned.stream().mapToLong(p -> cpu(p.pod())).sum());
  }

  /** Puts a chosen plan's moves into the simulation, and claims its nodes and pods for this pass. */
  private void apply(Candidate c) {
    for (Planned p : c.moves()) {
      sim.move(p.pod(), p.to());
    }
    touch(c);
  }

  private void touch(Candidate c) {
    touched.add(c.target());
    for (Planned p : c.moves()) {
      touched.add(p.from());
      touched.add(p.to());
      moved.add(p.pod());
    }
  }

  private List<RoomPlan.Move> moves(Candidate c) {
    return c.moves().stream().map(p -> {
      PodRecord pod = p.pod();
      OwnerRef owner = pod.controller().orElseThrow();
      int placed = ownerPlaced.computeIfAbsent(owner.uid(), uid -> RoomPlan.placed(pass.view.podsInNamespace(pod.namespace()), uid));
      return new RoomPlan.Move(pod.namespace(), pod.name(), pod.uid(), pod.resourceVersion(), owner.kind() + "/" + owner.name(), owner.uid(),
          placed, p.from(), p.to(), p.why());
    }).toList();
  }

  private boolean exhausted() {
    return sim.checks() + scanned >= checksEnd;
  }

  private static long cpu(PodRecord pod) {
    return pod.scheduling().requests().getOrDefault("cpu", 0L);
  }

  private static String names(List<PodRecord> pods) {
    return RoomPlan.joined(pods.stream().map(PodRecord::name).toList());
  }
}
