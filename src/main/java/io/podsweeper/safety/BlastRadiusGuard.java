package io.podsweeper.safety;

import io.podsweeper.policy.Guard;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Counts removals in a sliding window and refuses the one that would make the window implausible: more than a
 * share of a namespace's (or the cluster's) running pods evicted, or more removals than allowed in all. Pure:
 * the caller supplies the clock and the pod counts, and stops everything when this says no. Not thread-safe: its owner
 * (the removal ledger) locks it.
 */
public final class BlastRadiusGuard {
  private Guard config;
  private final Deque<Instant> removals = new ArrayDeque<>();
  private final Deque<Instant> evictions = new ArrayDeque<>();
  private final Map<String, Deque<Instant>> evictionsByNamespace = new HashMap<>();
  /** Counts every change of the window, so a journal knows whether what it last wrote still covers it. */
  private long version;

  /**
   * Why one more removal would be one too many.
   *
   * @param evictionsOnly a share of running pods was reached (stop evicting; finished pods may still be deleted),
   *     rather than {@code maxRemovals} (stop everything)
   */
  public record Trip(String reason, boolean evictionsOnly) {}

  public BlastRadiusGuard(Guard config) {
    this.config = config;
  }

  /**
   * Says why one more removal would be one too many, or nothing if it may go. Removals are counted when sent
   * ({@link #count}) and forgotten again if they did not happen ({@link #uncount}): a refused attempt, retried with
   * backoff, must not use up the window, and requests in flight must not slip past it.
   *
   * @param runningInNamespace running pods (bound to a node, not finished, not terminating) in the decision's namespace now, the pod
   *     itself included; pods this guard admitted and that are gone since are added back
   * @param runningInCluster running pods in the whole cluster
   */
  public Optional<Trip> check(Removal d, int runningInNamespace, int runningInCluster, Instant now) {
    Instant since = now.minus(config.window());
    prune(removals, since);
    prune(evictions, since);
    Deque<Instant> inNamespace = evictionsByNamespace.computeIfAbsent(d.namespace(), k -> new ArrayDeque<>());
    prune(inNamespace, since);
    String window = " within " + io.podsweeper.policy.Durations.format(config.window());
    if (config.maxRemovals().isPresent() && removals.size() + 1 > config.maxRemovals().getAsInt()) {
      return Optional.of(new Trip("would make " + (removals.size() + 1) + " removals" + window + " (guard.maxRemovals "
          + config.maxRemovals().getAsInt() + ")", false));
    }
    if (d.eviction()) {
      // Shares are of the pods there were when the window began: those still running plus those it evicted.
      int nsCount = inNamespace.size() + 1;
      int nsPopulation = runningInNamespace + inNamespace.size();
      if (nsCount > config.minEvictions() && nsCount > config.maxNamespaceShare() * nsPopulation) {
        return Optional.of(new Trip("would evict " + nsCount + " of " + nsPopulation + " running pods in namespace " + d.namespace()
            + window + " (guard.maxNamespaceShare " + percent(config.maxNamespaceShare()) + ")", true));
      }
      int clusterCount = evictions.size() + 1;
      int clusterPopulation = runningInCluster + evictions.size();
      if (clusterCount > config.minClusterEvictions() && clusterCount > config.maxClusterShare() * clusterPopulation) {
        return Optional.of(new Trip("would evict " + clusterCount + " of " + clusterPopulation + " running pods in the cluster"
            + window + " (guard.maxClusterShare " + percent(config.maxClusterShare()) + ")", true));
      }
    }
    return Optional.empty();
  }

  /** Forgets a removal counted at {@code at} that did not happen after all (refused, failed, or gone already). */
  public void uncount(Removal d, Instant at) {
    version++;
    if (d.eviction()) {
      Deque<Instant> inNamespace = evictionsByNamespace.get(d.namespace());
      if (inNamespace != null) {
        inNamespace.removeLastOccurrence(at);
      }
      evictions.removeLastOccurrence(at);
    }
    removals.removeLastOccurrence(at);
  }

  /** Counts a removal as it is sent (or an eviction accepted in background); see {@link #uncount}. */
  public void count(Removal d, Instant now) {
    version++;
    if (d.eviction()) {
      evictionsByNamespace.computeIfAbsent(d.namespace(), k -> new ArrayDeque<>()).addLast(now);
      evictions.addLast(now);
    }
    removals.addLast(now);
  }

  /**
   * Whether a removal counted at {@code at} is counted still: not aged out of the window, nor cleared by a resume. A
   * window restored since (a new term) holds it at the time it was remembered as ({@link GuardWindow#rememberedAs}).
   */
  public boolean stillCounts(Removal d, Instant at, Instant now) {
    if (at.isBefore(now.minus(config.window()))) {
      return false;
    }
    Deque<Instant> counted = d.eviction() ? evictionsByNamespace.get(d.namespace()) : removals;
    return counted != null && (counted.contains(at) || counted.contains(GuardWindow.rememberedAs(at)));
  }

  /**
   * New settings over the same window: a reload that changes the guard must not forget what was removed, or an edit
   * would be a way around it. In place, not a copy: a copy would lose a count, a give-back or a restored window that
   * another thread applies to the old instance meanwhile.
   */
  public void reconfigure(Guard newConfig) {
    version++; // the window written depends on the window's length
    config = newConfig;
  }

  /** Forgets everything counted: an operator resumed after a trip. */
  public void reset() {
    version++;
    removals.clear();
    evictions.clear();
    evictionsByNamespace.clear();
  }

  /** True if a removal of this kind counts at all, i.e. whether the window must be kept for it. */
  public boolean counts(Removal d) {
    return d.eviction() || config.maxRemovals().isPresent();
  }

  public long version() {
    return version;
  }

  /** What the window holds now, as the cluster should remember it across a restart or a failover. */
  public GuardWindow window(Instant now) {
    Instant since = now.minus(config.window());
    Map<String, List<Instant>> byNamespace = new HashMap<>();
    evictionsByNamespace.forEach((ns, times) -> {
      List<Instant> recent = times.stream().filter(t -> !t.isBefore(since)).toList();
      if (!recent.isEmpty()) {
        byNamespace.put(ns, recent);
      }
    });
    // Evictions are removals too: what is left are the DELETEs of finished pods. Counted, not searched: written
    // before every removal, so thousands of evictions in a window must not cost a scan each.
    Map<Instant, Integer> evictedAt = new HashMap<>();
    byNamespace.values().forEach(times -> times.forEach(t -> evictedAt.merge(t, 1, Integer::sum)));
    List<Instant> deletes = new ArrayList<>();
    for (Instant t : removals) {
      if (t.isBefore(since)) {
        continue;
      }
      Integer evicted = evictedAt.get(t);
      if (evicted == null) {
        deletes.add(t);
      } else if (evicted == 1) {
        evictedAt.remove(t);
      } else {
        evictedAt.put(t, evicted - 1);
      }
    }
    return new GuardWindow(byNamespace, deletes);
  }

  /** Takes over a window remembered by the cluster (a restart, or a new leader), replacing what is counted here. */
  public void restore(GuardWindow window) {
    removals.clear();
    evictions.clear();
    evictionsByNamespace.clear();
    absorb(window);
  }

  /** Counts removals another writer remembered besides what is counted here (see {@link GuardWindow#addedSince}). */
  public void absorb(GuardWindow window) {
    version++;
    List<Instant> evicted = new ArrayList<>();
    window.evictions().forEach((ns, times) -> {
      addSorted(evictionsByNamespace.computeIfAbsent(ns, k -> new ArrayDeque<>()), times);
      evicted.addAll(times);
    });
    addSorted(evictions, evicted);
    evicted.addAll(window.deletes());
    addSorted(removals, evicted);
  }

  private static void addSorted(Deque<Instant> times, List<Instant> more) {
    List<Instant> all = new ArrayList<>(times);
    all.addAll(more);
    all.sort(null);
    times.clear();
    times.addAll(all);
  }

  private static void prune(Deque<Instant> times, Instant since) {
    while (!times.isEmpty() && times.peekFirst().isBefore(since)) {
      times.removeFirst();
    }
  }

  private static String percent(double share) {
    return Math.round(share * 100) + "%";
  }
}
