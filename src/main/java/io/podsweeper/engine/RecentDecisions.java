package io.podsweeper.engine;

import io.podsweeper.strategy.Decision;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/** The most recent decisions with their outcomes, for {@code GET /api/v1/decisions}; bounded, newest first. */
public final class RecentDecisions {
  public record Entry(Instant time, Decision decision, String result, String message, boolean dryRun) {}

  private final int capacity;
  private final Deque<Entry> entries = new ArrayDeque<>();

  public RecentDecisions(int capacity) {
    this.capacity = capacity;
  }

  public synchronized void add(Entry entry) {
    entries.addFirst(entry);
    while (entries.size() > capacity) {
      entries.removeLast();
    }
  }

  public synchronized List<Entry> list() {
    return new ArrayList<>(entries);
  }
}
