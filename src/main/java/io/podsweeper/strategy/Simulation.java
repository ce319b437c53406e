package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.cluster.Scheduling.PodAffinityTerm;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The cluster as the kube-scheduler (v1.29) would see it while pods move on paper: every node of a view, the pods
 * bound to each (finished ones are no longer in the scheduler's cache; terminating ones still are), and the moves made
 * so far, each undoable ({@link #mark}, {@link #rollback}). {@link #refusal} runs the scheduler's filters in its order
 * for a pod that is on no node: NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
 * PodTopologySpread (DoNotSchedule constraints) and InterPodAffinity (required affinity, and anti-affinity both
 * ways), and says which refused the node. Not simulated: volumes (zones, attach limits), dynamic resources, the
 * spread constraints' minDomains (records do not keep it), a term's matchFields, and scheduler profiles other than the
 * default.
 *
 * <p>Counts across topology domains (pods a term selects per domain, a spread constraint's domains) are made once from
 * the view, per term or constraint, and the moves made since are applied to them as they are read: a search that moves
 * a few pods and asks about thousands of nodes reads each count in a lookup.
 */
final class Simulation {
  private final ClusterView view;
  private final Map<String, NodeRecord> nodes = new HashMap<>();
  private final Map<String, NodeState> states = new HashMap<>();
  /** Where each moved pod is now, by uid: a node, or "" (evicted, not placed yet, or a pending pod). */
  private final Map<String, String> placed = new HashMap<>();
  private final List<Change> changes = new ArrayList<>();
  private final Map<TermKey, Map<String, Integer>> termCounts = new HashMap<>();
  private final Map<Shape, Map<String, Map<String, Integer>>> exclusions = new HashMap<>();
  private final Map<Shape, List<PodRecord>> selecting = new HashMap<>();
  private final Map<SpreadKey, Domains> spreads = new HashMap<>();
  private final Map<String, Map<String, List<NodeRecord>>> nodesByLabel = new HashMap<>();
  private long checks;

  /** A pod went from one node to another ("" for none); {@code previous} is what {@link #placed} held before. */
  private record Change(PodRecord pod, String from, String to, String previous) {}

  /** A term as written by a pod of {@code namespace}. */
  private record TermKey(PodAffinityTerm term, String namespace) {}

  /** What a selector can tell of a pod: its namespace and labels. */
  private record Shape(String namespace, Map<String, String> labels) {}

  /** A DoNotSchedule constraint of a pod of {@code namespace}, with every hard constraint's key the pod has. */
  private record SpreadKey(TopologySpread.Constraint constraint, String namespace, Set<String> keys) {
    boolean eligible(NodeRecord node) {
      return node.labels().keySet().containsAll(keys) && constraint.counts(node);
    }
  }

  /** A constraint's domains: the pods it selects in each, as in the view, and the smallest count. */
  private record Domains(Map<String, Integer> counts, int min, int atMin) {}

  /** One node as the scheduler sees it: its pods and what they request. */
  private static final class NodeState {
    final List<PodRecord> pods = new ArrayList<>();
    final Map<String, Long> requested = new HashMap<>();

    void add(PodRecord pod) {
      pods.add(pod);
      pod.scheduling().requests().forEach((r, v) -> requested.merge(r, v, Long::sum));
    }

    void remove(PodRecord pod) {
      pods.removeIf(p -> p.uid().equals(pod.uid()));
      pod.scheduling().requests().forEach((r, v) -> requested.merge(r, -v, (a, b) -> a + b == 0 ? null : a + b));
    }
  }

  Simulation(ClusterView view) {
    this.view = view;
    view.nodes().forEach(n -> nodes.put(n.name(), n));
  }

  ClusterView view() {
    return view;
  }

  Optional<NodeRecord> node(String name) {
    return Optional.ofNullable(nodes.get(name));
  }

  /** How many times {@link #refusal} ran: what bounds a search. */
  long checks() {
    return checks;
  }

  /** The node the pod is on now, or "" if none. */
  String nodeOf(PodRecord pod) {
    String moved = placed.get(pod.uid());
    if (moved != null) {
      return moved;
    }
    return inView(pod) ? pod.nodeName() : "";
  }

  /** Bound to a node of the view and not finished: in the scheduler's cache. */
  private boolean inView(PodRecord pod) {
    return pod.scheduled() && !pod.terminated() && nodes.containsKey(pod.nodeName());
  }

  /** The pods on the node now. */
  List<PodRecord> podsOn(String node) {
    return List.copyOf(state(node).pods);
  }

  /** What the pods on the node request now. */
  Map<String, Long> requested(String node) {
    return Map.copyOf(state(node).requested);
  }

  /** What the pods on the node request now of one resource (no copy: searches ask it of every node). */
  long requested(String node, String resource) {
    return state(node).requested.getOrDefault(resource, 0L);
  }

  /** How many pods are on the node now. */
  int podCount(String node) {
    return state(node).pods.size();
  }

  private NodeState state(String node) {
    NodeState s = states.get(node);
    if (s == null) {
      s = new NodeState();
      for (PodRecord p : view.podsOnNode(node)) {
        if (!p.terminated()) {
          s.add(p);
        }
      }
      states.put(node, s);
    }
    return s;
  }

  /** The nodes pods have left in the moves made so far: they may have more room now than the view shows. */
  List<String> vacated() {
    List<String> out = new ArrayList<>();
    for (Change c : changes) {
      if (!c.from().isEmpty() && !out.contains(c.from())) {
        out.add(c.from());
      }
    }
    return out;
  }

  /** Moves the pod (or its replacement) to {@code to}, "" for off every node (evicted). */
  void move(PodRecord pod, String to) {
    String from = nodeOf(pod);
    if (!from.isEmpty()) {
      state(from).remove(pod);
    }
    if (!to.isEmpty()) {
      state(to).add(pod);
    }
    changes.add(new Change(pod, from, to, placed.get(pod.uid())));
    placed.put(pod.uid(), to);
  }

  int mark() {
    return changes.size();
  }

  /** Undoes every move made since {@code mark}. */
  void rollback(int mark) {
    while (changes.size() > mark) {
      Change c = changes.remove(changes.size() - 1);
      if (!c.to().isEmpty()) {
        state(c.to()).remove(c.pod());
      }
      if (!c.from().isEmpty()) {
        state(c.from()).add(c.pod());
      }
      if (c.previous() == null) {
        placed.remove(c.pod().uid());
      } else {
        placed.put(c.pod().uid(), c.previous());
      }
    }
  }

  /**
   * Why the scheduler would not put the pod on the node now, or empty if it would; the pod must be on no node. The
   * filters run in the scheduler's order, the first refusal answers.
   */
  Optional<SchedulerFilters.Unfit> refusal(PodRecord pod, NodeRecord node) {
    checks++;
    Optional<SchedulerFilters.Unfit> unfit = SchedulerFilters.nodeUnschedulable(pod, node)
        .or(() -> SchedulerFilters.taintToleration(pod, node))
        .or(() -> SchedulerFilters.nodeAffinity(pod, node));
    if (unfit.isPresent()) {
      return unfit;
    }
    NodeState s = state(node.name());
    if (!pod.scheduling().hostPorts().isEmpty()) {
      unfit = SchedulerFilters.nodePorts(pod, s.pods.stream().flatMap(p -> p.scheduling().hostPorts().stream()).toList());
    }
    return unfit.or(() -> SchedulerFilters.resourcesFit(pod, node, s.requested, s.pods.size()))
        .or(() -> spread(pod, node))
        .or(() -> interPodAffinity(pod, node));
  }

  /** The first node of {@code order} the scheduler would put the pod on now (the pod on no node). */
  Optional<NodeRecord> firstFit(PodRecord pod, List<NodeRecord> order) {
    for (NodeRecord n : order) {
      if (refusal(pod, n).isEmpty()) {
        return Optional.of(n);
      }
    }
    return Optional.empty();
  }

  /** Only the filters no move of other pods can change: NodeUnschedulable, TaintToleration, NodeAffinity. */
  Optional<SchedulerFilters.Unfit> staticRefusal(PodRecord pod, NodeRecord node) {
    return SchedulerFilters.nodeUnschedulable(pod, node)
        .or(() -> SchedulerFilters.taintToleration(pod, node))
        .or(() -> SchedulerFilters.nodeAffinity(pod, node));
  }

  // ---- PodTopologySpread ---------------------------------------------------------------------------------------

  /**
   * The pod's DoNotSchedule constraints: the node has every one's key, and in each, the pods the constraint selects in
   * the node's domain, the pod itself if it matches, less those in the emptiest domain, are at most maxSkew. Domains
   * are the values of the key on the nodes that have every key and pass the inclusion policies; a domain's pods are
   * those of the pod's namespace, not terminating, the selector (with matchLabelKeys) matches.
   */
  private Optional<SchedulerFilters.Unfit> spread(PodRecord pod, NodeRecord node) {
    List<Scheduling.SpreadConstraint> hard = new ArrayList<>(0);
    for (Scheduling.SpreadConstraint c : pod.scheduling().spreadConstraints()) {
      if ("DoNotSchedule".equals(c.whenUnsatisfiable())) {
        hard.add(c);
      }
    }
    if (hard.isEmpty()) {
      return Optional.empty();
    }
    Set<String> keys = new TreeSet<>();
    for (Scheduling.SpreadConstraint c : hard) {
      if (!node.labels().containsKey(c.topologyKey())) {
        return Optional.of(new SchedulerFilters.Unfit("PodTopologySpread",
            "node(s) didn't match pod topology spread constraints (missing required label)"));
      }
      keys.add(c.topologyKey());
    }
    for (Scheduling.SpreadConstraint c : hard) {
      SpreadKey key = new SpreadKey(TopologySpread.Constraint.of(c, pod), pod.namespace(), keys);
      Domains domains = spreads.computeIfAbsent(key, this::domains);
      Map<String, Integer> delta = spreadDelta(key);
      String here = node.labels().get(c.topologyKey());
      int matching = domains.counts().getOrDefault(here, 0) + delta.getOrDefault(here, 0);
      int self = key.constraint().selector().matches(pod.labels()) ? 1 : 0;
      if (matching + self - min(domains, delta) > c.maxSkew()) {
        return Optional.of(new SchedulerFilters.Unfit("PodTopologySpread", "node(s) didn't match pod topology spread constraints"));
      }
    }
    return Optional.empty();
  }

  private Domains domains(SpreadKey key) {
    Map<String, Integer> counts = new HashMap<>();
    for (NodeRecord n : nodes.values()) {
      if (key.eligible(n)) {
        counts.putIfAbsent(n.labels().get(key.constraint().topologyKey()), 0);
      }
    }
    for (PodRecord p : view.podsInNamespace(key.namespace())) {
      if (inView(p) && !p.terminating() && key.constraint().selector().matches(p.labels())) {
        NodeRecord n = nodes.get(p.nodeName());
        if (key.eligible(n)) {
          counts.merge(n.labels().get(key.constraint().topologyKey()), 1, Integer::sum);
        }
      }
    }
    int min = counts.values().stream().mapToInt(Integer::intValue).min().orElse(0);
    int atMin = (int) counts.values().stream().filter(v -> v == min).count();
    return new Domains(counts, min, atMin);
  }

  /** The moves so far, as changes of the constraint's counts per domain. */
  private Map<String, Integer> spreadDelta(SpreadKey key) {
    Map<String, Integer> delta = new HashMap<>();
    for (Change c : changes) {
      PodRecord p = c.pod();
      if (p.namespace().equals(key.namespace()) && !p.terminating() && key.constraint().selector().matches(p.labels())) {
        count(delta, c.from(), key, -1);
        count(delta, c.to(), key, 1);
      }
    }
    return delta;
  }

  private void count(Map<String, Integer> delta, String node, SpreadKey key, int by) {
    NodeRecord n = node.isEmpty() ? null : nodes.get(node);
    if (n != null && key.eligible(n)) {
      delta.merge(n.labels().get(key.constraint().topologyKey()), by, Integer::sum);
    }
  }

  /** The emptiest domain's count after the moves: from the view's minimum, rescanning only when every domain at it moved. */
  private static int min(Domains domains, Map<String, Integer> delta) {
    if (delta.isEmpty()) {
      return domains.min();
    }
    int min = Integer.MAX_VALUE;
    int touchedAtMin = 0;
    for (Map.Entry<String, Integer> d : delta.entrySet()) {
      Integer base = domains.counts().get(d.getKey());
      if (base != null) {
        min = Math.min(min, base + d.getValue());
        touchedAtMin += base == domains.min() ? 1 : 0;
      }
    }
    if (touchedAtMin < domains.atMin()) {
      return Math.min(min, domains.min());
    }
    for (Map.Entry<String, Integer> e : domains.counts().entrySet()) {
      if (!delta.containsKey(e.getKey())) {
        min = Math.min(min, e.getValue());
      }
    }
    return min == Integer.MAX_VALUE ? 0 : min;
  }

  // ---- InterPodAffinity ----------------------------------------------------------------------------------------

  /**
   * Required inter-pod affinity and anti-affinity, as the scheduler's InterPodAffinity filter: no pod already placed has
   * an anti-affinity term selecting the pod in the node's domain; none of the pod's anti-affinity terms selects a pod
   * in the node's domain (a node without the term's key: the term does not apply); each affinity term selects a pod in
   * the node's domain (a node without the key: refused), unless no pod anywhere matches any of them and the pod matches
   * all of them itself (the first of a group).
   */
  private Optional<SchedulerFilters.Unfit> interPodAffinity(PodRecord pod, NodeRecord node) {
    if (excludedByExisting(pod, node)) {
      return Optional.of(new SchedulerFilters.Unfit("InterPodAffinity", "node(s) didn't satisfy existing pods anti-affinity rules"));
    }
    for (PodAffinityTerm term : pod.scheduling().requiredPodAntiAffinity()) {
      String value = node.labels().get(term.topologyKey());
      if (value != null && matching(term, pod.namespace(), value) > 0) {
        return Optional.of(new SchedulerFilters.Unfit("InterPodAffinity", "node(s) didn't match pod anti-affinity rules"));
      }
    }
    boolean everyTermMet = true;
    for (PodAffinityTerm term : pod.scheduling().requiredPodAffinity()) {
      String value = node.labels().get(term.topologyKey());
      if (value == null) {
        return Optional.of(new SchedulerFilters.Unfit("InterPodAffinity", "node(s) didn't match pod affinity rules"));
      }
      everyTermMet &= matching(term, pod.namespace(), value) > 0;
    }
    if (!everyTermMet && !firstOfItsGroup(pod)) {
      return Optional.of(new SchedulerFilters.Unfit("InterPodAffinity", "node(s) didn't match pod affinity rules"));
    }
    return Optional.empty();
  }

  /** No pod anywhere matches any of the pod's affinity terms, and the pod matches every one itself. */
  private boolean firstOfItsGroup(PodRecord pod) {
    for (PodAffinityTerm term : pod.scheduling().requiredPodAffinity()) {
      if (!term.selects(pod.namespace(), pod, view)) {
        return false;
      }
      int total = termCounts(term, pod.namespace()).values().stream().mapToInt(Integer::intValue).sum();
      for (Change c : changes) {
        if (term.selects(pod.namespace(), c.pod(), view)) {
          total += (hasKey(c.to(), term.topologyKey()) ? 1 : 0) - (hasKey(c.from(), term.topologyKey()) ? 1 : 0);
        }
      }
      if (total > 0) {
        return false;
      }
    }
    return true;
  }

  private boolean hasKey(String node, String key) {
    return !node.isEmpty() && nodes.get(node).labels().containsKey(key);
  }

  /** The pods placed now in the term's domain {@code key=value} that the term (of a pod of {@code namespace}) selects. */
  private int matching(PodAffinityTerm term, String namespace, String value) {
    int count = termCounts(term, namespace).getOrDefault(value, 0);
    for (Change c : changes) {
      if (term.selects(namespace, c.pod(), view)) {
        count += (value.equals(label(c.to(), term.topologyKey())) ? 1 : 0) - (value.equals(label(c.from(), term.topologyKey())) ? 1 : 0);
      }
    }
    return count;
  }

  private String label(String node, String key) {
    return node.isEmpty() ? null : nodes.get(node).labels().get(key);
  }

  private Map<String, Integer> termCounts(PodAffinityTerm term, String namespace) {
    return termCounts.computeIfAbsent(new TermKey(term, namespace), k -> {
      Map<String, Integer> counts = new HashMap<>();
      for (PodRecord p : candidates(term, namespace)) {
        if (inView(p) && term.selects(namespace, p, view)) {
          String value = nodes.get(p.nodeName()).labels().get(term.topologyKey());
          if (value != null) {
            counts.merge(value, 1, Integer::sum);
          }
        }
      }
      return counts;
    });
  }

  /** The pods a term can select: those of its namespaces, or every pod when a namespace selector says which. */
  private Collection<PodRecord> candidates(PodAffinityTerm term, String namespace) {
    if (term.namespaceSelector().isPresent()) {
      return view.pods();
    }
    if (term.namespaces().isEmpty()) {
      return view.podsInNamespace(namespace);
    }
    List<PodRecord> pods = new ArrayList<>();
    term.namespaces().forEach(ns -> pods.addAll(view.podsInNamespace(ns)));
    return pods;
  }

  /** Whether a placed pod's anti-affinity term selects the pod in the node's domain. */
  private boolean excludedByExisting(PodRecord pod, NodeRecord node) {
    Map<String, Map<String, Integer>> base = exclusions.computeIfAbsent(new Shape(pod.namespace(), pod.labels()), s -> exclusions(pod));
    if (base.isEmpty() && changes.stream().allMatch(c -> c.pod().scheduling().requiredPodAntiAffinity().isEmpty())) {
      return false;
    }
    Map<String, Map<String, Integer>> delta = new HashMap<>();
    for (Change c : changes) {
      for (PodAffinityTerm term : c.pod().scheduling().requiredPodAntiAffinity()) {
        if (term.selects(c.pod().namespace(), pod, view)) {
          String key = term.topologyKey();
          Optional.ofNullable(label(c.from(), key)).ifPresent(v -> delta.computeIfAbsent(key, k -> new HashMap<>()).merge(v, -1, Integer::sum));
          Optional.ofNullable(label(c.to(), key)).ifPresent(v -> delta.computeIfAbsent(key, k -> new HashMap<>()).merge(v, 1, Integer::sum));
        }
      }
    }
    Set<String> keys = new TreeSet<>(base.keySet());
    keys.addAll(delta.keySet());
    for (String key : keys) {
      String value = node.labels().get(key);
      if (value != null && base.getOrDefault(key, Map.of()).getOrDefault(value, 0) + delta.getOrDefault(key, Map.of()).getOrDefault(value, 0) > 0) {
        return true;
      }
    }
    return false;
  }

  /** Per topology key and value, the pods of the view whose anti-affinity terms select a pod of this shape there. */
  private Map<String, Map<String, Integer>> exclusions(PodRecord pod) {
    Map<String, Map<String, Integer>> out = new HashMap<>();
    for (PodRecord holder : view.podsWithAntiAffinity()) {
      if (!inView(holder)) {
        continue;
      }
      for (PodAffinityTerm term : holder.scheduling().requiredPodAntiAffinity()) {
        String value = nodes.get(holder.nodeName()).labels().get(term.topologyKey());
        if (value != null && term.selects(holder.namespace(), pod, view)) {
          out.computeIfAbsent(term.topologyKey(), k -> new HashMap<>()).merge(value, 1, Integer::sum);
        }
      }
    }
    return out;
  }

  // ---- what keeps a pod off a node, pod by pod -----------------------------------------------------------------

  /**
   * The pods whose presence alone refuses the pod the node (whatever the resources): holders of a host port it wants,
   * pods its anti-affinity terms select in the node's domains, and pods whose anti-affinity terms select it there.
   * Moving each of them out of the domain lifts those refusals.
   */
  List<PodRecord> conflicting(PodRecord pod, NodeRecord node) {
    List<PodRecord> out = new ArrayList<>();
    for (PodRecord other : state(node.name()).pods) {
      if (other.scheduling().hostPorts().stream().anyMatch(p -> pod.scheduling().hostPorts().stream().anyMatch(p::conflicts))) {
        out.add(other);
      }
    }
    for (PodAffinityTerm term : pod.scheduling().requiredPodAntiAffinity()) {
      String value = node.labels().get(term.topologyKey());
      if (value != null) {
        for (NodeRecord n : domain(term.topologyKey(), value)) {
          for (PodRecord other : state(n.name()).pods) {
            if (term.selects(pod.namespace(), other, view) && !out.contains(other)) {
              out.add(other);
            }
          }
        }
      }
    }
    for (PodRecord holder : holdersSelecting(pod)) {
      String at = nodeOf(holder);
      for (PodAffinityTerm term : holder.scheduling().requiredPodAntiAffinity()) {
        String value = label(at, term.topologyKey());
        if (value != null && value.equals(node.labels().get(term.topologyKey())) && term.selects(holder.namespace(), pod, view)
            && !out.contains(holder)) {
          out.add(holder);
        }
      }
    }
    return out;
  }

  /**
   * The placed pods, moves included, with a required anti-affinity term selecting a pod of this shape: those of the
   * view found once per shape, those moved since looked at each time.
   */
  private List<PodRecord> holdersSelecting(PodRecord pod) {
    Map<String, PodRecord> out = new HashMap<>();
    for (PodRecord p : selecting.computeIfAbsent(new Shape(pod.namespace(), pod.labels()), s -> selectingInView(pod))) {
      out.put(p.uid(), p);
    }
    for (Change c : changes) {
      for (PodAffinityTerm term : c.pod().scheduling().requiredPodAntiAffinity()) {
        if (term.selects(c.pod().namespace(), pod, view)) {
          out.put(c.pod().uid(), c.pod());
        }
      }
    }
    return out.values().stream().filter(p -> !nodeOf(p).isEmpty()).sorted(java.util.Comparator.comparing(PodRecord::key)).toList();
  }

  private List<PodRecord> selectingInView(PodRecord pod) {
    List<PodRecord> out = new ArrayList<>();
    for (PodRecord holder : view.podsWithAntiAffinity()) {
      if (inView(holder) && holder.scheduling().requiredPodAntiAffinity().stream().anyMatch(t -> t.selects(holder.namespace(), pod, view))) {
        out.add(holder);
      }
    }
    return out;
  }

  /** The nodes whose label {@code key} has {@code value}. */
  private List<NodeRecord> domain(String key, String value) {
    return nodesByLabel.computeIfAbsent(key, k -> {
      Map<String, List<NodeRecord>> byValue = new HashMap<>();
      for (NodeRecord n : nodes.values()) {
        String v = n.labels().get(k);
        if (v != null) {
          byValue.computeIfAbsent(v, x -> new ArrayList<>()).add(n);
        }
      }
      byValue.values().forEach(l -> l.sort(java.util.Comparator.comparing(NodeRecord::name)));
      return byValue;
    }).getOrDefault(value, List.of());
  }
}
