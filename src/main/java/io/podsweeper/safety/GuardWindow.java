package io.podsweeper.safety;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The blast-radius guard's window as the cluster remembers it: when each eviction (by namespace) and each other
 * removal was sent, and when namespaced policies removed pods in each namespace within the hour
 * ({@code maxRemovalsPerHourPerNamespace}). Its text form is small enough for a ConfigMap at any rate: times are rounded
 * up to the next {@link #BUCKET_SECONDS} (so a remembered removal leaves the window a little later, never earlier) and
 * counted.
 *
 * <pre>
 * evict ns-a 1700000010:3 1700000020:1
 * delete 1700000010:12
 * hourly ns-b 1700000010:2
 * </pre>
 */
public record GuardWindow(Map<String, List<Instant>> evictions, List<Instant> deletes, Map<String, List<Instant>> hourly) {
  static final long BUCKET_SECONDS = 10;

  public GuardWindow {
    evictions = Map.copyOf(evictions);
    deletes = List.copyOf(deletes);
    hourly = Map.copyOf(hourly);
  }

  public GuardWindow(Map<String, List<Instant>> evictions, List<Instant> deletes) {
    this(evictions, deletes, Map.of());
  }

  public static final GuardWindow EMPTY = new GuardWindow(Map.of(), List.of());

  /** This window with the hourly cap's removals as well. */
  public GuardWindow withHourly(Map<String, List<Instant>> removals) {
    return new GuardWindow(evictions, deletes, removals);
  }

  public String encode() {
    StringBuilder out = new StringBuilder();
    new TreeMap<>(evictions).forEach((ns, times) -> out.append("evict ").append(ns).append(buckets(times)).append('\n'));
    if (!deletes.isEmpty()) {
      out.append("delete").append(buckets(deletes)).append('\n');
    }
    new TreeMap<>(hourly).forEach((ns, times) -> out.append("hourly ").append(ns).append(buckets(times)).append('\n'));
    return out.toString();
  }

  /** The time a removal counted at {@code t} is remembered as: rounded up to the next {@link #BUCKET_SECONDS}. */
  public static Instant rememberedAs(Instant t) {
    return Instant.ofEpochSecond(Math.floorDiv(t.getEpochSecond() + BUCKET_SECONDS - 1 + (t.getNano() > 0 ? 1 : 0), BUCKET_SECONDS)
        * BUCKET_SECONDS);
  }

  private static String buckets(List<Instant> times) {
    TreeMap<Long, Integer> counts = new TreeMap<>();
    for (Instant t : times) {
      counts.merge(rememberedAs(t).getEpochSecond(), 1, Integer::sum);
    }
    StringBuilder out = new StringBuilder();
    counts.forEach((second, n) -> out.append(' ').append(second).append(':').append(n));
    return out.toString();
  }

  /**
   * What this window holds that {@code base} does not, time by time (both as read back from {@link #encode}): what
   * another writer added since {@code base} was read. What it dropped (aged out, or cleared by a resume) is not taken.
   */
  public GuardWindow addedSince(GuardWindow base) {
    Map<String, List<Instant>> evictionsAdded = new TreeMap<>();
    evictions.forEach((ns, times) -> {
      List<Instant> added = surplus(times, base.evictions.getOrDefault(ns, List.of()));
      if (!added.isEmpty()) {
        evictionsAdded.put(ns, added);
      }
    });
    Map<String, List<Instant>> hourlyAdded = new TreeMap<>();
    hourly.forEach((ns, times) -> {
      List<Instant> added = surplus(times, base.hourly.getOrDefault(ns, List.of()));
      if (!added.isEmpty()) {
        hourlyAdded.put(ns, added);
      }
    });
    return new GuardWindow(evictionsAdded, surplus(deletes, base.deletes), hourlyAdded);
  }

  private static List<Instant> surplus(List<Instant> times, List<Instant> base) {
    Map<Instant, Integer> left = new HashMap<>();
    base.forEach(t -> left.merge(t, 1, Integer::sum));
    List<Instant> surplus = new ArrayList<>();
    for (Instant t : times) {
      if (left.merge(t, -1, Integer::sum) < 0) {
        surplus.add(t);
      }
    }
    return surplus;
  }

  /** Reads {@link #encode}'s form; throws IllegalArgumentException, naming the line, for anything else. */
  public static GuardWindow decode(String text) {
    Map<String, List<Instant>> evictions = new TreeMap<>();
    List<Instant> deletes = new ArrayList<>();
    Map<String, List<Instant>> hourly = new TreeMap<>();
    String[] lines = text.split("\n");
    for (int i = 0; i < lines.length; i++) {
      String[] words = lines[i].trim().split(" +");
      if (words[0].isEmpty()) {
        continue;
      }
      try {
        if (words[0].equals("evict") && words.length >= 2) {
          evictions.put(words[1], times(words, 2));
        } else if (words[0].equals("delete")) {
          deletes.addAll(times(words, 1));
        } else if (words[0].equals("hourly") && words.length >= 2) {
          hourly.put(words[1], times(words, 2));
        } else {
          throw new IllegalArgumentException("expected evict, delete or hourly");
        }
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("guard window line " + (i + 1) + " \"" + lines[i] + "\": " + e.getMessage(), e);
      }
    }
    return new GuardWindow(evictions, deletes, hourly);
  }

  private static List<Instant> times(String[] words, int from) {
    List<Instant> times = new ArrayList<>();
    for (int i = from; i < words.length; i++) {
      String[] bucket = words[i].split(":");
      Instant at = Instant.ofEpochSecond(Long.parseLong(bucket[0]));
      int n = Integer.parseInt(bucket[1]);
      if (n < 1 || n > 1_000_000) {
        throw new IllegalArgumentException("count out of range: " + n);
      }
      for (int k = 0; k < n; k++) {
        times.add(at);
      }
    }
    return times;
  }
}
