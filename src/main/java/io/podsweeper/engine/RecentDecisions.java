package io.podsweeper.engine;

import io.podsweeper.removal.Result;
import io.podsweeper.strategy.Decision;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The most recent decisions with their outcomes, for {@code GET /api/v1/decisions}; bounded, newest first. Removals
 * that were held (dry-run, paused, limited) and those that were sent are kept apart, each up to the capacity, so a
 * backlog of held pods never pushes what was really removed out of view.
 */
public final class RecentDecisions {
  public record Entry(Instant time, Decision decision, String result, String message, boolean dryRun) {}

  private static final Set<String> HELD = Set.of(Result.DRY_RUN.label(), Result.PAUSED.label(), Result.LIMITED.label(),
      Result.WOULD_BE_LIMITED.label(), Result.WOULD_TRIP_GUARD.label(), Result.PDB_WOULD_REFUSE.label());

  private final int capacity;
  private final Deque<Entry> sent = new ArrayDeque<>();
  private final Deque<Entry> held = new ArrayDeque<>();

  public RecentDecisions(int capacity) {
    this.capacity = capacity;
  }

  public synchronized void add(Entry entry) {
    Deque<Entry> entries = HELD.contains(entry.result()) ? held : sent;
    entries.addFirst(entry);
    while (entries.size() > capacity) {
      entries.removeLast();
    }
  }

  public List<Entry> list() {
    return list(e -> true);
  }

  /** The entries that {@code filter} accepts, newest first. */
  public synchronized List<Entry> list(Predicate<Entry> filter) {
    List<Entry> all = new ArrayList<>();
    sent.stream().filter(filter).forEach(all::add);
    held.stream().filter(filter).forEach(all::add);
    all.sort(Comparator.comparing(Entry::time).reversed());
    return all;
  }
}
