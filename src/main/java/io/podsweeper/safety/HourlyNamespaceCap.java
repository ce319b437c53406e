package io.podsweeper.safety;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The cap a ClusterPodCleanupPolicy puts on namespaced policies ({@code maxRemovalsPerHourPerNamespace}): removals
 * they made in one namespace over the last hour. As in the blast-radius guard, a removal counts when it is sent and
 * is forgotten again if it did not happen, so requests in flight cannot slip past the cap and refused attempts do
 * not use it up. Pure: the caller supplies the clock. Not thread-safe: its owner (the removal ledger) locks it.
 */
public final class HourlyNamespaceCap {
  public static final Duration WINDOW = Duration.ofHours(1);
  private final Map<String, Deque<Instant>> removals = new HashMap<>();

  /** Why one more removal in {@code namespace} would be over {@code max}, or nothing if it may go. */
  public Optional<String> check(String namespace, int max, Instant now) {
    Deque<Instant> times = removals.get(namespace);
    if (times != null) {
      while (!times.isEmpty() && !times.peekFirst().isAfter(now.minus(WINDOW))) {
        times.removeFirst();
      }
      if (times.isEmpty()) {
        removals.remove(namespace);
      }
    }
    int made = times == null ? 0 : times.size();
    if (made < max) {
      return Optional.empty();
    }
    return Optional.of("namespaced policies removed " + made + " pods in namespace " + namespace
        + " within the last hour (maxRemovalsPerHourPerNamespace " + max + ")");
  }

  public void count(String namespace, Instant at) {
    removals.computeIfAbsent(namespace, k -> new ArrayDeque<>()).addLast(at);
  }

  /** Whether a removal counted at {@code at} in {@code namespace} holds a place still: it has not aged out. */
  public boolean holds(String namespace, Instant at, Instant now) {
    Deque<Instant> times = removals.get(namespace);
    return at.isAfter(now.minus(WINDOW)) && times != null && times.contains(at);
  }

  /** The removals counted within the hour before {@code now}, by namespace: what the cluster remembers across restarts. */
  public Map<String, List<Instant>> window(Instant now) {
    Map<String, List<Instant>> within = new HashMap<>();
    removals.forEach((ns, times) -> {
      List<Instant> recent = times.stream().filter(t -> t.isAfter(now.minus(WINDOW))).toList();
      if (!recent.isEmpty()) {
        within.put(ns, recent);
      }
    });
    return within;
  }

  /** Counts removals remembered by the cluster (a restart, a new leader) besides what is counted here. */
  public void absorb(Map<String, List<Instant>> remembered) {
    remembered.forEach((ns, times) -> {
      List<Instant> all = new ArrayList<>(removals.getOrDefault(ns, new ArrayDeque<>()));
      all.addAll(times);
      all.sort(null);
      removals.put(ns, new ArrayDeque<>(all));
    });
  }

  /** Takes over what the cluster remembered in place of what is counted here. */
  public void restore(Map<String, List<Instant>> remembered) {
    removals.clear();
    absorb(remembered);
  }

  /** Forgets a removal counted at {@code at} that did not happen after all (refused, failed, or gone already). */
  public void uncount(String namespace, Instant at) {
    Deque<Instant> times = removals.get(namespace);
    if (times != null) {
      times.removeLastOccurrence(at);
    }
  }
}
