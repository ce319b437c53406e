package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Rule;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which finished pods the keepLast rules keep, kept up to date pod by pod: per rule and group (owner, or namespace),
 * the pods the rule ranks, newest finish first, as {@link PodLifeTime} ranks them. A pod changing moves at most two
 * pods across a rule's boundary (itself, and the one its arrival or departure shifts), so an update costs
 * O(rules × (log group + keepLast)), not a pass over the namespace.
 */
final class RetentionIndex {
  private static final Comparator<Ranked> NEWEST_FIRST =
      Comparator.comparing(Ranked::finishedAt).reversed().thenComparing(Ranked::key);

  private record Ranked(Instant finishedAt, String key) {}

  /** Where one pod is ranked: by which rule (its index), in which group. */
  private record Membership(int rule, String group, Ranked ranked) {}

  private final List<Rule> rules;
  private final ClusterView view;
  /** Per rule: group → the pods it ranks there, newest first. */
  private final List<Map<String, TreeSet<Ranked>>> groups = new ArrayList<>();
  /** Per rule: the keys of the pods it keeps. */
  private final List<Set<String>> kept = new ArrayList<>();
  private final Map<String, List<Membership>> memberships = new HashMap<>();

  /** @param rules rules with keepLast */
  RetentionIndex(List<Rule> rules, ClusterView view) {
    this.rules = List.copyOf(rules);
    this.view = view;
    for (int i = 0; i < rules.size(); i++) {
      groups.add(new HashMap<>());
      kept.add(new HashSet<>());
    }
  }

  /**
   * The pod's record is now {@code pod} (null: gone), judged on the view as it is now. Returns the keys of the pods
   * whose place relative to some rule's boundary moved (the pod's own among them): only these may have changed
   * {@link #kept}.
   */
  Set<String> update(String key, PodRecord pod) {
    if (rules.isEmpty()) {
      return Set.of();
    }
    Set<String> moved = new HashSet<>();
    for (Membership m : memberships.getOrDefault(key, List.of())) {
      TreeSet<Ranked> group = groups.get(m.rule()).get(m.group());
      group.remove(m.ranked());
      kept.get(m.rule()).remove(key);
      moved.add(key);
      relabel(m.rule(), group, moved);
      if (group.isEmpty()) {
        groups.get(m.rule()).remove(m.group());
      }
    }
    memberships.remove(key);
    if (pod == null) {
      return moved;
    }
    List<Membership> now = new ArrayList<>(1);
    for (int i = 0; i < rules.size(); i++) {
      Rule rule = rules.get(i);
      if (PodLifeTime.ranked(rule, pod, view)) {
        Membership m = new Membership(i, group(rule, pod), new Ranked(pod.finishedAt(), key));
        TreeSet<Ranked> group = groups.get(i).computeIfAbsent(m.group(), g -> new TreeSet<>(NEWEST_FIRST));
        group.add(m.ranked());
        now.add(m);
        moved.add(key);
        relabel(i, group, moved);
      }
    }
    if (!now.isEmpty()) {
      memberships.put(key, now);
    }
    return moved;
  }

  /** True if some keepLast rule keeps the pod. */
  boolean kept(String key) {
    for (Set<String> keys : kept) {
      if (keys.contains(key)) {
        return true;
      }
    }
    return false;
  }

  /** Which rule keeps the pod, as a reason says it: e.g. "rule ci-failed keeps it: number 2 of 6 of Job/x by finish time, keepLast 5". */
  Optional<String> why(PodRecord pod) {
    for (Membership m : memberships.getOrDefault(pod.key(), List.of())) {
      if (kept.get(m.rule()).contains(pod.key())) {
        Rule rule = rules.get(m.rule());
        TreeSet<Ranked> group = groups.get(m.rule()).get(m.group());
        return Optional.of("rule " + rule.name() + " keeps it: number " + (group.headSet(m.ranked()).size() + 1) + " of " + group.size()
            + " of " + PodLifeTime.retentionGroupName(rule.retention().get(), pod) + " by finish time, keepLast "
            + rule.retention().get().keep());
      }
    }
    return Optional.empty();
  }

  private static String group(Rule rule, PodRecord pod) {
    return rule.retention().get().perNamespace() ? pod.namespace() : pod.namespace() + "\n" + pod.retentionGroup();
  }

  /** The first keepLast pods of the group are kept by the rule, the next is not: the only places an update can move. */
  private void relabel(int rule, TreeSet<Ranked> group, Set<String> moved) {
    int keep = rules.get(rule).retention().get().keep();
    Set<String> keys = kept.get(rule);
    Iterator<Ranked> newest = group.iterator();
    for (int position = 0; position <= keep && newest.hasNext(); position++) {
      String key = newest.next().key();
      if (position < keep ? keys.add(key) : keys.remove(key)) {
        moved.add(key);
      }
    }
  }
}
