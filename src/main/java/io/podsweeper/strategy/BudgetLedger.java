package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.FinishedPodBudget;
import io.podsweeper.policy.PodState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The finished pods a policy's budgets count ({@link FinishedPodBudgets}), kept up to date pod by pod: what the live
 * service asks for the budget's next removal ({@link #next}), for the last word before one is sent ({@link #refusal}),
 * for when to look again ({@link #wakeAt}) and for its use ({@link #usage}), without a pass over the cluster.
 *
 * <p>Per namespace and phase it counts the pods (finished, not terminating, not {@link #reserve reserved}) and keeps
 * those the budget may remove one day (neither protected nor kept by a keepLast rule) ordered by finish, oldest first:
 * the oldest is the only one that can be the namespace's next removal, and if it is too young so are all the others.
 * Costs: a pod event O(log pods of its namespace), plus O(keepLast rules × (log group + keepLast)) where a keepLast rule
 * ranks it, plus, when the namespace's count crosses its fair share, the shares again (O(namespaces × log)); a
 * namespace event O(its pods); {@link #next} and {@link #wakeAt} O(namespaces); {@link #usage} O(pods counted).
 *
 * <p>Methods are synchronized: informer threads feed it while the worker asks. Built by
 * {@link FinishedPodBudgets#ledger} from every pod of a view; the view is read again for namespaces (protection
 * annotations, labels) and for the keepLast rules' selectors.
 */
public final class BudgetLedger {
  /** A counted pod, ordered oldest finish first, then by key. */
  private record Entry(Instant finishedAt, String key) implements Comparable<Entry> {
    @Override
    public int compareTo(Entry o) {
      int byFinish = finishedAt.compareTo(o.finishedAt);
      return byFinish != 0 ? byFinish : key.compareTo(o.key);
    }
  }

  /** A finished pod the ledger holds, with what decides where it is filed. */
  private static final class Tracked {
    final PodRecord pod;
    final Entry entry;
    final int phase;
    final Optional<String> protection;
    boolean kept;
    boolean reserved;

    Tracked(PodRecord pod, Optional<String> protection, boolean kept) {
      this.pod = pod;
      this.entry = new Entry(pod.finishedAt(), pod.key());
      this.phase = phaseIndex(pod.phase());
      this.protection = protection;
      this.kept = kept;
    }
  }

  /** One namespace's counts per phase (Succeeded, Failed), and the pods a budget may remove one day, oldest first. */
  private static final class Namespace {
    /** The budgets that apply here: the cluster's, then the namespace's own. */
    final List<FinishedPodBudget> budgets;
    final Set<String> keys = new HashSet<>();
    final int[] counted = new int[2];
    final int[] protectedPods = new int[2];
    final int[] kept = new int[2];
    final List<TreeSet<Entry>> candidates = List.of(new TreeSet<>(), new TreeSet<>());

    Namespace(List<FinishedPodBudget> budgets) {
      this.budgets = budgets;
    }

    boolean empty() {
      return keys.isEmpty();
    }
  }

  private final FinishedPodBudgets budgets;
  private final ClusterView view;
  private final RetentionIndex retention;
  private final Map<String, Tracked> pods = new HashMap<>();
  private final Map<String, Namespace> namespaces = new HashMap<>();
  /** The cluster budget's shares; null when a count moved so that they must be computed again. */
  private FairShares shares;

  BudgetLedger(FinishedPodBudgets budgets, ClusterView view) {
    this.budgets = budgets;
    this.view = view;
    this.retention = new RetentionIndex(budgets.retentionRules(), view);
  }

  private static int phaseIndex(String phase) {
    return "Succeeded".equals(phase) ? 0 : 1;
  }

  private static int phaseIndex(PodState phase) {
    return phase == PodState.SUCCEEDED ? 0 : 1;
  }

  /** The pod was added or changed (as the cache has it now). */
  public synchronized void podChanged(PodRecord pod) {
    update(pod.key(), pod);
  }

  /** The pod is gone. */
  public synchronized void podDeleted(String key) {
    update(key, null);
  }

  /** The namespace's labels or annotations changed: its pods' protections and the keepLast rules' selectors are read again. */
  public synchronized void namespaceChanged(String namespace) {
    Namespace n = namespaces.get(namespace);
    if (n != null) {
      for (String key : List.copyOf(n.keys)) {
        update(key, pods.get(key).pod);
      }
    }
  }

  /**
   * A removal of the pod was admitted: it counts no more, and is never offered again, unless {@link #release}d (its
   * removal did not happen). A dry run keeps it reserved, as if removed: each pod is then said once.
   */
  public synchronized void reserve(String key) {
    Tracked t = pods.get(key);
    if (t != null && !t.reserved) {
      withdraw(t);
      t.reserved = true;
    }
  }

  /** The reserved pod's removal did not happen (refused, failed, held back): it counts again; false if it was not reserved. */
  public synchronized boolean release(String key) {
    Tracked t = pods.get(key);
    if (t == null || !t.reserved) {
      return false;
    }
    t.reserved = false;
    file(t);
    return true;
  }

  private void update(String key, PodRecord pod) {
    Tracked old = pods.remove(key);
    if (old != null) {
      withdraw(old);
      Namespace n = namespaces.get(old.pod.namespace());
      n.keys.remove(key);
      if (n.empty()) {
        namespaces.remove(old.pod.namespace());
      }
    }
    PodRecord counted = pod != null && pod.terminated() && !pod.terminating() ? pod : null;
    Set<String> moved = retention.update(key, counted);
    if (counted != null) {
      Tracked t = new Tracked(counted, budgets.protection(counted, view), retention.kept(key));
      t.reserved = old != null && old.reserved && old.pod.uid().equals(counted.uid());
      pods.put(key, t);
      namespaces.computeIfAbsent(counted.namespace(), ns -> new Namespace(budgetsOf(ns))).keys.add(key);
      file(t);
    }
    for (String other : moved) {
      Tracked t = pods.get(other);
      if (t != null && !other.equals(key) && t.kept != retention.kept(other)) {
        withdraw(t);
        t.kept = !t.kept;
        file(t);
      }
    }
  }

  /** Counts the pod in its namespace, and files it among the candidates unless protected or kept; not while reserved. */
  private void file(Tracked t) {
    if (!t.reserved) {
      change(t, 1);
    }
  }

  /** Takes back what {@link #file} did, or nothing for a reserved pod. */
  private void withdraw(Tracked t) {
    if (!t.reserved) {
      change(t, -1);
    }
  }

  private void change(Tracked t, int delta) {
    Namespace n = namespaces.get(t.pod.namespace());
    int before = clusterCount(n);
    n.counted[t.phase] += delta;
    if (t.protection.isPresent()) {
      n.protectedPods[t.phase] += delta;
    } else if (t.kept) {
      n.kept[t.phase] += delta;
    } else if (delta > 0) {
      n.candidates.get(t.phase).add(t.entry);
    } else {
      n.candidates.get(t.phase).remove(t.entry);
    }
    clusterCountChanged(t.pod.namespace(), before, clusterCount(n));
  }

  /**
   * A namespace over its share before, and at or over it after, leaves every share as it was (its own stays the cap or
   * the level, so the level does not move): a burst in one namespace, or the budget's own removals from it, cost no
   * new computation. Anything else does, at the next question.
   */
  private void clusterCountChanged(String namespace, int before, int after) {
    if (shares != null && before != after) {
      Integer share = shares.shares().get(namespace);
      if (share == null || before <= share || after < share) {
        shares = null;
      }
    }
  }

  private int clusterCount(Namespace n) {
    return budgets.cluster().map(b -> count(n, b)).orElse(0);
  }

  private static int count(Namespace n, FinishedPodBudget budget) {
    int sum = 0;
    for (PodState phase : budget.phases()) {
      sum += n.counted[phaseIndex(phase)];
    }
    return sum;
  }

  private FairShares shares() {
    if (shares == null) {
      FinishedPodBudget cluster = budgets.cluster().orElseThrow();
      Map<String, Integer> counts = new HashMap<>(namespaces.size() * 2);
      namespaces.forEach((name, n) -> {
        int c = count(n, cluster);
        if (c > 0) {
          counts.put(name, c);
        }
      });
      shares = FairShares.of(counts, cluster.maxPodsPerNamespace().orElse(FairShares.NO_LEVEL), cluster.maxPods());
    }
    return shares;
  }

  /** What the budget allows the namespace: its fair share of the cluster's, or a tenant's cap. */
  private int limit(String namespace, FinishedPodBudget budget) {
    return budget.namespace().isPresent() ? budget.maxPods() : shares().of(namespace);
  }

  /** The oldest pod of the budget's phases it may remove one day (maybe not yet), or null. */
  private static Entry oldestCandidate(Namespace n, FinishedPodBudget budget) {
    Entry oldest = null;
    for (PodState phase : budget.phases()) {
      TreeSet<Entry> candidates = n.candidates.get(phaseIndex(phase));
      if (!candidates.isEmpty() && (oldest == null || candidates.first().compareTo(oldest) < 0)) {
        oldest = candidates.first();
      }
    }
    return oldest;
  }

  /** Finished at least minRetention ago: a pod younger than that is never removed by the budget. */
  private static boolean oldEnough(Instant finishedAt, FinishedPodBudget budget, Instant now) {
    return !now.isBefore(finishedAt.plus(budget.minRetention()));
  }

  /** The budgets that apply to a namespace: the cluster's, then the namespace's own. */
  List<FinishedPodBudget> budgetsOf(String namespace) {
    List<FinishedPodBudget> of = new ArrayList<>(2);
    budgets.cluster().ifPresent(of::add);
    budgets.of(namespace).ifPresent(of::add);
    return List.copyOf(of);
  }

  /**
   * The budget's next removal at {@code now}: the oldest pod it may remove (old enough, not protected, not kept) of the
   * namespace furthest over what a budget allows it (its fair share, or its own cap; ties by namespace name, the
   * cluster's budget first); empty when every namespace is within, or what is over cannot be removed now. The caller
   * {@link #reserve}s it once admitted, or the same pod comes back.
   */
  public Optional<Decision> next(Instant now) {
    return next(now, namespace -> false);
  }

  /** {@link #next(Instant)} in the namespaces not {@code skipped} (the live service's, whose last removal was held back). */
  public synchronized Optional<Decision> next(Instant now, Predicate<String> skipped) {
    String bestNamespace = null;
    FinishedPodBudget bestBudget = null;
    Entry bestPod = null;
    int bestExcess = 0;
    for (Map.Entry<String, Namespace> e : namespaces.entrySet()) {
      if (skipped.test(e.getKey())) {
        continue;
      }
      for (FinishedPodBudget budget : e.getValue().budgets) {
        int excess = count(e.getValue(), budget) - limit(e.getKey(), budget);
        if (excess <= 0 || excess < bestExcess || (excess == bestExcess && e.getKey().compareTo(bestNamespace) >= 0)) {
          continue;
        }
        Entry oldest = oldestCandidate(e.getValue(), budget);
        if (oldest != null && oldEnough(oldest.finishedAt(), budget, now)) {
          bestNamespace = e.getKey();
          bestBudget = budget;
          bestPod = oldest;
          bestExcess = excess;
        }
      }
    }
    if (bestPod == null) {
      return Optional.empty();
    }
    PodRecord pod = pods.get(bestPod.key()).pod;
    return Optional.of(Decision.of(pod, FinishedPodBudgets.STRATEGY, bestBudget.name(), bestBudget.rule(),
        reason(bestNamespace, bestBudget) + "; finished " + PodLifeTime.ago(bestPod.finishedAt(), now) + " ago", now));
  }

  /** E.g. "budget: ci holds 4,812 finished pods, fair share 1,250 of 5,000". */
  private String reason(String namespace, FinishedPodBudget budget) {
    Namespace n = namespaces.get(namespace);
    int held = n == null ? 0 : count(n, budget);
    String pods = pods(budget);
    if (budget.namespace().isPresent()) {
      return "budget: " + budget.name() + " keeps at most " + number(budget.maxPods()) + " " + pods + " in " + namespace + ", which holds "
          + number(held);
    }
    int share = limit(namespace, budget);
    boolean capped = budget.maxPodsPerNamespace().isPresent() && share == budget.maxPodsPerNamespace().getAsInt();
    return "budget: " + namespace + " holds " + number(held) + " " + pods + ", fair share " + number(share) + " of "
        + number(budget.maxPods()) + (capped ? " (maxPodsPerNamespace)" : "");
  }

  /** "finished pods", or the one phase the budget counts: "Failed pods". */
  static String pods(FinishedPodBudget budget) {
    return budget.phases().size() == 1 ? budget.phases().iterator().next().wireName() + " pods" : "finished pods";
  }

  static String number(long n) {
    return String.format(Locale.ROOT, "%,d", n);
  }

  /**
   * The last word before a budget removal is sent: why removing {@code current} (the pod as the cache has it now) no
   * longer holds, or empty if it does. It holds while the budget that decided is still in the policy, the pod still
   * counts for it (finished in a phase it names, not terminating), is old enough, neither protected nor kept, its
   * namespace is still over what that budget allows it (this pod counted, other reserved ones not), and no pod of the
   * namespace the budget may remove (not reserved) finished before it.
   */
  public synchronized Optional<String> refusal(Decision decision, PodRecord current, Instant now) {
    Optional<FinishedPodBudget> budget = budgetsOf(current.namespace()).stream().filter(b -> b.name().equals(decision.profile())).findFirst();
    if (budget.isEmpty()) {
      return Optional.of("the policy has no finished-pod budget " + decision.profile() + " for namespace " + current.namespace() + " any more");
    }
    return refusal(budget.get(), current, now);
  }

  /** The namespace against a budget, for {@code explain}: its reason, and how far over it is, if it is. */
  synchronized String standing(String namespace, FinishedPodBudget budget) {
    Namespace n = namespaces.get(namespace);
    int over = (n == null ? 0 : count(n, budget)) - limit(namespace, budget);
    return reason(namespace, budget) + (over > 0 ? ", " + number(over) + " over" : ", within");
  }

  synchronized Optional<String> refusal(FinishedPodBudget budget, PodRecord current, Instant now) {
    Tracked t = pods.get(current.key());
    if (t == null || !t.pod.uid().equals(current.uid())) {
      return Optional.of("not a finished pod the budget counts (" + (current.terminating() ? "terminating" : current.phase()) + ")");
    }
    if (!budget.phases().contains(PodState.parse(current.phase()).orElseThrow())) {
      return Optional.of("phase " + current.phase() + " is not one " + budget.name() + " names");
    }
    if (t.protection.isPresent()) {
      return Optional.of("protected: " + t.protection.get());
    }
    if (t.kept) {
      return Optional.of("kept: " + retention.why(t.pod).orElse("by a keepLast rule"));
    }
    if (!oldEnough(t.entry.finishedAt(), budget, now)) {
      return Optional.of("finished " + PodLifeTime.ago(t.entry.finishedAt(), now) + " ago, under the budget's minRetention "
          + Durations.format(budget.minRetention()) + " (old enough at " + t.entry.finishedAt().plus(budget.minRetention()) + ")");
    }
    // Judged with the pod counted, as when it was decided: its own reservation must not make the shares smaller.
    boolean reserved = release(current.key());
    Namespace n = namespaces.get(current.namespace());
    int held = count(n, budget);
    int limit = limit(current.namespace(), budget);
    Entry oldest = oldestCandidate(n, budget);
    if (reserved) {
      reserve(current.key());
    }
    if (held <= limit) {
      return Optional.of(current.namespace() + " holds " + number(held) + " " + pods(budget) + ", within "
          + (budget.namespace().isPresent() ? budget.name() + "'s cap " : "its fair share ") + number(limit));
    }
    if (!oldest.equals(t.entry)) {
      return Optional.of(oldest.key() + " finished earlier and goes first");
    }
    return Optional.empty();
  }

  /**
   * When a pod over a budget next becomes old enough to be removed: the earliest instant, after {@code now}, at which
   * {@link #next} would find something it does not find now, if the pods stay as they are; empty if none will.
   */
  public synchronized Optional<Instant> wakeAt(Instant now) {
    Instant earliest = null;
    for (Map.Entry<String, Namespace> e : namespaces.entrySet()) {
      for (FinishedPodBudget budget : e.getValue().budgets) {
        Entry oldest = oldestCandidate(e.getValue(), budget);
        if (oldest != null && count(e.getValue(), budget) > limit(e.getKey(), budget)) {
          Instant at = oldest.finishedAt().plus(budget.minRetention());
          if (at.isAfter(now) && (earliest == null || at.isBefore(earliest))) {
            earliest = at;
          }
        }
      }
    }
    return Optional.ofNullable(earliest);
  }

  /**
   * What each budget holds per namespace at {@code now}: the cluster's for every namespace counting a pod for it, a
   * tenant's for its namespace. Reserved pods count no more.
   */
  public synchronized BudgetUsage usage(Instant now) {
    List<BudgetUsage.Use> uses = new ArrayList<>();
    for (Map.Entry<String, Namespace> e : namespaces.entrySet()) {
      Namespace n = e.getValue();
      for (FinishedPodBudget budget : n.budgets) {
        int held = count(n, budget);
        if (held == 0) {
          continue;
        }
        int removable = 0;
        int young = 0;
        int kept = 0;
        int protectedPods = 0;
        for (PodState phase : budget.phases()) {
          int p = phaseIndex(phase);
          TreeSet<Entry> candidates = n.candidates.get(p);
          int old = candidates.headSet(new Entry(now.minus(budget.minRetention()), "\uffff"), true).size();
          removable += old;
          young += candidates.size() - old;
          kept += n.kept[p];
          protectedPods += n.protectedPods[p];
        }
        uses.add(new BudgetUsage.Use(budget, e.getKey(), held, limit(e.getKey(), budget), removable, young, kept, protectedPods));
      }
    }
    return new BudgetUsage(budgets.cluster(), uses);
  }
}
