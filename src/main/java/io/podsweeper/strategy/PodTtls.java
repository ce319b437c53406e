package io.podsweeper.strategy;

import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.Rule;
import io.podsweeper.policy.TtlSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A rule's per-pod lifetime ({@code ttlFrom}) for one pod. The values come from the pod; only when the pod carries
 * none of the rule's keys, from its namespace (the default for its pods). Of several values the earliest deadline
 * counts; a value that does not parse counts for nothing (it is reported, see {@link #invalid}), and a pod whose
 * values all fail to parse has no deadline, its namespace's default notwithstanding: the pod said something, and it
 * is not guessed.
 */
final class PodTtls {
  private PodTtls() {}

  /**
   * The deadline written for the pod, and where, e.g. "podsweeper.io/ttl: 1h on the pod".
   *
   * @param describe the key, value and place, with the rail when it moved the deadline later
   */
  record PodTtl(Instant due, String describe) {}

  static Optional<PodTtl> of(Rule.TtlFrom ttl, PodRecord pod, NamespaceRecord namespace) {
    List<TtlSource.Found> own = found(ttl.sources(), pod.annotations(), pod.labels());
    List<TtlSource.Found> values = own.isEmpty() ? found(ttl.sources(), namespace.annotations(), namespace.labels()) : own;
    String where = own.isEmpty() ? " on namespace " + namespace.name() : " on the pod";
    // A finished pod's lifetime counts from its finish, as maxAgeAfterFinish does.
    Instant start = pod.terminated() ? pod.finishedAt() : pod.creationTimestamp();
    Instant earliest = start.plus(ttl.minimum());
    PodTtl best = null;
    for (TtlSource.Found f : values) {
      Instant due;
      if (f.value() instanceof TtlSource.Value.Ttl t) {
        due = start.plus(t.ttl());
      } else if (f.value() instanceof TtlSource.Value.Expires e) {
        due = e.at();
      } else {
        continue;
      }
      String describe = f.key() + ": " + f.text() + where;
      if (due.isBefore(earliest)) {
        due = earliest;
        describe += ", held to the cluster's minMaxAge " + Durations.format(ttl.minimum());
      }
      if (best == null || due.isBefore(best.due())) {
        best = new PodTtl(due, describe);
      }
    }
    return Optional.ofNullable(best);
  }

  /** The values of these sources on one object (a pod, or a namespace) that do not parse. */
  static List<TtlSource.Found> invalid(Set<TtlSource> sources, Map<String, String> annotations, Map<String, String> labels) {
    return found(sources, annotations, labels).stream().filter(f -> f.value() instanceof TtlSource.Value.Invalid).toList();
  }

  private static List<TtlSource.Found> found(Set<TtlSource> sources, Map<String, String> annotations, Map<String, String> labels) {
    if (annotations.isEmpty() && labels.isEmpty()) {
      return List.of();
    }
    return sources.stream().sorted().flatMap(s -> s.find(annotations, labels)).toList();
  }

  /** The rule's TTL clock for explain: "podsweeper.io/ttl: 1h on the pod, due at …" while it runs. */
  static String waiting(PodTtl ttl, Instant now) {
    return ttl.describe() + ": due in " + Durations.format(Duration.between(now, ttl.due()).withNanos(0));
  }
}
