package io.podsweeper.removal;

import io.podsweeper.cluster.PodSource;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.function.IntSupplier;

/**
 * The pods this service is removing that the cache may still show running, which the blast-radius guard's shares leave
 * out: those reserved lately (until the cache shows them not running, or five minutes), and every eviction in
 * background (also one taken over from an earlier leader, which was never reserved here). Part of the {@link Ledger},
 * which locks it.
 */
final class Removing {
  static final Duration LATELY = Duration.ofMinutes(5);
  /** How often a running-pod count is read again while the cluster churns; then the stricter count stands. */
  private static final int RUNNING_READS = 3;

  private record Lately(String key, Instant since) {}

  private final PodSource cache;
  /** By pod UID. */
  private final Map<String, Lately> lately = new HashMap<>();

  Removing(PodSource cache) {
    this.cache = cache;
  }

  void add(String uid, String key, Instant now) {
    lately.put(uid, new Lately(key, now));
  }

  void remove(String uid) {
    lately.remove(uid);
  }

  boolean contains(String uid) {
    return lately.containsKey(uid);
  }

  void expire(Instant now) {
    lately.values().removeIf(l -> l.since().isBefore(now.minus(LATELY)));
  }

  /**
   * Running pods in a namespace (null: the cluster), less those being removed. The cache changes a count before its
   * records show the change, and the count is read after the records: a pod deleted meanwhile is off both, or taken
   * off twice (a stricter guard), never counted without being taken off; read again while it moves.
   */
  int running(String namespace, Collection<InProgress> background) {
    IntSupplier counted = namespace == null ? cache::runningInCluster : () -> cache.runningInNamespace(namespace);
    for (int attempt = 1; ; attempt++) {
      int before = counted.getAsInt();
      int removing = removing(namespace, background);
      int after = counted.getAsInt();
      if (before == after || attempt == RUNNING_READS) {
        return after - removing;
      }
    }
  }

  private int removing(String namespace, Collection<InProgress> background) {
    String prefix = namespace == null ? "" : namespace + "/";
    int removing = 0;
    for (Map.Entry<String, Lately> entry : lately.entrySet()) {
      removing += runningUnder(prefix, entry.getKey(), entry.getValue().key()) ? 1 : 0;
    }
    for (InProgress entry : background) {
      String uid = entry.decision.uid();
      removing += !lately.containsKey(uid) && runningUnder(prefix, uid, entry.decision.podKey()) ? 1 : 0;
    }
    return removing;
  }

  private boolean runningUnder(String prefix, String uid, String key) {
    return key.startsWith(prefix) && cache.pod(key).filter(p -> p.uid().equals(uid) && p.runningOnNode()).isPresent();
  }
}
