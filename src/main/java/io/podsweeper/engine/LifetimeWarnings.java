package io.podsweeper.engine;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.TtlSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per-pod lifetimes that do not parse (README "Per-pod TTL"): a WARN line, {@code podsweeper_invalid_lifetimes_total}
 * and a Warning Event on the pod, once per pod and value, not on every evaluation. Rules ignore such a value.
 */
public final class LifetimeWarnings {
  private static final Logger LOG = LoggerFactory.getLogger(LifetimeWarnings.class);
  static final String EVENT_REASON = "PodSweeperInvalidLifetime";

  /** Where a warning goes besides the log and the metric: a Warning Event on the pod. */
  public interface Sink {
    Sink NONE = (pod, reason, message) -> {};

    void warn(PodRecord pod, String reason, String message);
  }

  private final Metrics metrics;
  private volatile Sink sink = Sink.NONE;
  /** What was last reported per pod (key), with its uid: a new value, or a new pod under the name, is reported again. */
  private final Map<String, String> reported = new ConcurrentHashMap<>();

  LifetimeWarnings(Metrics metrics) {
    this.metrics = metrics;
  }

  void sendTo(Sink sink) {
    this.sink = sink;
  }

  /** The pod's values that count for it and do not parse, as the policy in force reads them. */
  void check(PodRecord pod, List<TtlSource.Found> invalid) {
    if (invalid.isEmpty()) {
      reported.remove(pod.key());
      return;
    }
    String message = invalid.stream().map(f -> f.key() + ": \"" + f.text() + "\" does not parse ("
        + ((TtlSource.Value.Invalid) f.value()).why() + ")").collect(Collectors.joining("; "))
        + "; rules with ttlFrom ignore it";
    String entry = pod.uid() + " " + message;
    if (entry.equals(reported.put(pod.key(), entry))) {
      return;
    }
    invalid.forEach(f -> metrics.invalidLifetimes.labels(f.key()).inc());
    LOG.warn("pod {}: {}", pod.key(), message);
    sink.warn(pod, EVENT_REASON, message);
  }

  void forget(PodRecord pod) {
    reported.remove(pod.key());
  }
}
