package io.podsweeper.strategy;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.cluster.Toleration;
import io.podsweeper.policy.LabelSelector;
import io.podsweeper.policy.TopologySpreadArgs;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Upstream's RemovePodsViolatingTopologySpreadConstraint (v0.36). In every namespace the args include, each distinct
 * constraint the pods declare (of the kinds in {@code constraints}) is checked on its own: its domains are the values
 * of its topology key on the nodes of the node set its inclusion policies admit, and each domain counts the pods the
 * constraint selects on those nodes, as the scheduler counts them (finished and terminating pods do not count). When
 * the largest and the smallest domain differ by more than maxSkew, pods move from the domains above the average to
 * those below (upstream's balanceDomains, see {@link #balance}). The pods that move are then evicted, if the
 * strategy's labelSelector and the evictor let them go.
 *
 * <p>Where this differs from upstream's code, it counts as the scheduler does: every pod a constraint selects counts,
 * whatever the evictor and the labelSelector say (upstream's README: the labelSelector only applies at eviction;
 * its code counts only the pods its evictor lets go), and only pods on nodes the inclusion policies admit (upstream
 * counts a pod on any node with the key). Constraints, domains and pods are visited in a fixed order (upstream's
 * follows Go's map order). Not honoured, as upstream: minDomains.
 */
final class TopologySpread implements NodeStrategy {
  private final TopologySpreadArgs args;

  TopologySpread(TopologySpreadArgs args) {
    this.args = args;
  }

  /**
   * A constraint as it is balanced, resolved against the pod declaring it: the selector narrowed by the pod's values
   * of its matchLabelKeys, and the pod's node selector and required node affinity ({@code nodeAffinity}) and its
   * tolerations where the inclusion policies honour them (otherwise every node passes). Pods declaring the same
   * constraint share one, so it is balanced once. MakeRoom's {@link Simulation} counts a constraint's domains with it too.
   */
  record Constraint(String topologyKey, int maxSkew, String whenUnsatisfiable, LabelSelector selector,
      Scheduling nodeAffinity, Optional<List<Toleration>> tolerations) {
    static Constraint of(Scheduling.SpreadConstraint c, PodRecord pod) {
      List<LabelSelector.Requirement> requirements = new ArrayList<>(c.selector().matchExpressions());
      for (String key : c.matchLabelKeys()) {
        String value = pod.labels().get(key);
        if (value != null) {
          requirements.add(new LabelSelector.Requirement(key, LabelSelector.Operator.In, Set.of(value)));
        }
      }
      Scheduling s = pod.scheduling();
      // Only what matchesNode reads, so that pods differing in nothing else share the constraint.
      Scheduling affinity = c.honorNodeAffinity()
          ? new Scheduling(s.nodeSelector(), s.requiredNodeAffinity(), List.of(), List.of(), List.of(), Map.of(), "BestEffort")
          : Scheduling.NONE;
      return new Constraint(c.topologyKey(), c.maxSkew(), c.whenUnsatisfiable(),
          new LabelSelector(c.selector().matchLabels(), requirements), affinity,
          c.honorNodeTaints() ? Optional.of(s.tolerations()) : Optional.empty());
    }

    /** The node has the topology key and the inclusion policies admit it, as the scheduler reads them. */
    boolean counts(NodeRecord node) {
      return node.labels().containsKey(topologyKey) && SchedulerFilters.matchesNodeAffinity(nodeAffinity, node.labels())
          && tolerations.map(t -> SchedulerFilters.untoleratedTaint(t, node).isEmpty()).orElse(true);
    }

    String domain(NodeRecord node) {
      return topologyKey + "=" + node.labels().get(topologyKey);
    }
  }

  /** One domain of a constraint: its nodes, its pods as counted, and its size as pods are moved on paper. */
  private static final class Domain {
    final String name;
    final List<NodeRecord> nodes = new ArrayList<>();
    /** The pods not moved yet, the first to move first. */
    final List<PodRecord> pods = new ArrayList<>();
    int counted;
    int size;

    Domain(String name) {
      this.name = name;
    }
  }

  private record Move(PodRecord pod, String reason) {}

  @Override
  public void run(NodePass pass) {
    Map<String, List<PodRecord>> byNamespace = new TreeMap<>();
    for (NodeRecord node : pass.nodes()) {
      for (PodRecord pod : pass.pods(node)) {
        if (args.namespaces().matches(pod.namespace())) {
          byNamespace.computeIfAbsent(pod.namespace(), ns -> new ArrayList<>()).add(pod);
        }
      }
    }
    // Every constraint is balanced before any pod goes, as upstream does; a pod two constraints move goes once.
    Map<String, Move> moves = new LinkedHashMap<>();
    for (List<PodRecord> pods : byNamespace.values()) {
      Set<Constraint> constraints = new LinkedHashSet<>();
      for (PodRecord pod : pods) {
        for (Scheduling.SpreadConstraint c : pod.scheduling().spreadConstraints()) {
          if (args.constraints().contains(c.whenUnsatisfiable())) {
            constraints.add(Constraint.of(c, pod));
          }
        }
      }
      constraints.forEach(c -> balance(pass, c, pods, moves));
    }
    // A node's or namespace's limit refuses only its own pods; the total limit ends the strategy.
    for (Move move : moves.values()) {
      if (args.labelSelector().matches(move.pod().labels())
          && pass.evict(move.pod(), TopologySpreadArgs.NAME, move.reason()) == NodePass.Outcome.TOTAL_LIMIT) {
        return;
      }
    }
  }

  /**
   * Upstream's balanceDomains, on paper. Domains sorted by size, smallest first; {@code low} walks up from the
   * smallest, {@code high} down from the largest (skipping domains at or below the average). While the two differ by
   * more than maxSkew, {@code high} gives {@code low} the least of: half the excess over maxSkew, what keeps
   * {@code high} at or above the average, and what keeps {@code low} at or below it (each rounded up). The pods given
   * are the first of {@code high} in {@link #moveOrder}, those fitting a node of a domain below the average first;
   * with topologyBalanceNodeFit, a given pod that fits none of those nodes stays, yet counts as moved, as upstream.
   */
  private void balance(NodePass pass, Constraint c, List<PodRecord> namespacePods, Map<String, Move> moves) {
    Map<String, Domain> byName = new TreeMap<>();
    Map<String, Domain> byNode = new HashMap<>();
    for (NodeRecord node : pass.nodes()) {
      if (c.counts(node)) {
        Domain d = byName.computeIfAbsent(c.domain(node), Domain::new);
        d.nodes.add(node);
        byNode.put(node.name(), d);
      }
    }
    int total = 0;
    for (PodRecord pod : namespacePods) {
      Domain d = byNode.get(pod.nodeName());
      if (d != null && !pod.terminating() && c.selector().matches(pod.labels())) {
        d.pods.add(pod);
        d.counted++;
        total++;
      }
    }
    List<Domain> domains = new ArrayList<>(byName.values());
    domains.forEach(d -> d.size = d.counted);
    domains.sort(Comparator.comparingInt(d -> d.size));
    if (domains.isEmpty() || domains.get(domains.size() - 1).size - domains.get(0).size <= c.maxSkew()) {
      return;
    }
    double average = (double) total / domains.size();
    Comparator<PodRecord> order = moveOrder(pass);
    domains.forEach(d -> d.pods.sort(order));
    List<NodeRecord> belowAverage = domains.stream().filter(d -> d.size < average).flatMap(d -> d.nodes.stream()).toList();
    Map<String, Boolean> fits = new HashMap<>();
    int low = 0;
    int high = domains.size() - 1;
    while (low < high) {
      if (domains.get(high).size <= average) {
        high--;
      }
      Domain from = domains.get(high);
      Domain to = domains.get(low);
      int skew = from.size - to.size;
      if (skew <= c.maxSkew()) {
        low++;
        continue;
      }
      int count = (int) Math.min(Math.min(Math.ceil(from.size - average), Math.ceil(average - to.size)),
          Math.ceil((skew - c.maxSkew()) / 2.0));
      if (count <= 0) {
        low++;
        continue;
      }
      String reason = "topology " + from.name + " has " + from.counted + " pods of "
          + (c.selector().isEmpty() ? "the namespace" : c.selector().text()) + ", " + to.name
          + " has " + to.counted + "; maxSkew " + c.maxSkew() + " (" + c.whenUnsatisfiable() + ")";
      Predicate<PodRecord> fitsBelowAverage = p -> fits.computeIfAbsent(p.key(), k -> Evictor.anyFit(p,
          belowAverage.stream().filter(n -> !n.name().equals(p.nodeName())).toList(), pass.view).isPresent());
      for (PodRecord pod : take(from, count, fitsBelowAverage)) {
        if (args.topologyBalanceNodeFit() && !fitsBelowAverage.test(pod)) {
          pass.note(TopologySpreadArgs.NAME, pod.key() + " stays: it fits no node of a domain below the average "
              + "(topologyBalanceNodeFit)");
        } else {
          moves.putIfAbsent(pod.key(), new Move(pod, reason));
        }
      }
      from.size -= count;
      to.size += count;
    }
  }

  /** Takes {@code count} pods off the domain, in its order but those that fit first (upstream's stable sort by fit). */
  private static List<PodRecord> take(Domain d, int count, Predicate<PodRecord> fits) {
    List<PodRecord> fitting = new ArrayList<>();
    List<PodRecord> others = new ArrayList<>();
    for (PodRecord pod : d.pods) {
      if (fitting.size() == count) {
        break;
      }
      (fits.test(pod) ? fitting : others).add(pod);
    }
    List<PodRecord> taken = new ArrayList<>(fitting);
    taken.addAll(others.subList(0, Math.min(others.size(), count - fitting.size())));
    d.pods.removeAll(taken);
    return taken;
  }

  /**
   * Which pods of a domain move first: pods the evictor and the labelSelector let go before the others, then pods
   * without node selector or node affinity (the scheduler may place them anywhere), then the lowest priority (no
   * priority lowest of all).
   */
  private Comparator<PodRecord> moveOrder(NodePass pass) {
    Map<String, Boolean> letGo = new HashMap<>();
    return Comparator.<PodRecord>comparingInt(p -> letGo.computeIfAbsent(p.key(),
            k -> args.labelSelector().matches(p.labels()) && pass.filter(p).isEmpty()) ? 0 : 1)
        .thenComparingInt(p -> p.scheduling().nodeSelector().isEmpty() && p.scheduling().requiredNodeAffinity().isEmpty()
            && p.scheduling().preferredNodeAffinity().isEmpty() ? 0 : 1)
        .thenComparingInt(p -> p.priority().isPresent() ? 1 : 0)
        .thenComparingInt(p -> p.priority().orElse(0))
        .thenComparing(PodRecord::key);
  }
}
