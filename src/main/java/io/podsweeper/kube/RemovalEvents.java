package io.podsweeper.kube;

import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.engine.Outcome;
import io.podsweeper.engine.OutcomeListener;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.removal.Result;
import io.podsweeper.safety.TokenBucket;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kubernetes Events about removals, on the pod: {@code PodSweeperRemoved} (deleted) or {@code PodSweeperEvicted}
 * (evicted), Normal, with rule and reason; {@code PodSweeperEvictionRefused} or {@code PodSweeperRemovalFailed},
 * Warning, when a removal did not happen. Rate-limited and sent from a small bounded queue of their own, so a mass
 * cleanup neither floods the API server nor slows removals: what does not fit is dropped and counted.
 *
 * <p>A refused eviction is retried until the PodDisruptionBudget allows it, so its Event's message names the budget
 * and nothing that changes between retries (the pod's age, the backoff): the recorder then counts the repeats on
 * one Event instead of adding one per retry.
 */
public final class RemovalEvents implements OutcomeListener, AutoCloseable {
  private final EventRecorder recorder;
  private final Metrics metrics;
  private final PodSource cluster;
  private final TokenBucket rate;
  private final double perSecond;
  private static final Logger LOG = LoggerFactory.getLogger(RemovalEvents.class);
  private static final Duration DROPS_SAID_EVERY = Duration.ofMinutes(1);
  /** When drops were last said (System.nanoTime), 0 for never; and how many since. */
  private long droppedSaidAt;
  private long droppedUnsaid;
  private final ThreadPoolExecutor sender = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1000), r -> {
    Thread t = new Thread(r, "removal-events");
    t.setDaemon(true);
    return t;
  }, new ThreadPoolExecutor.DiscardPolicy());

  /** @param cluster the pods and PodDisruptionBudgets, to name the budget that refused an eviction */
  public RemovalEvents(EventRecorder recorder, Metrics metrics, double perSecond, PodSource cluster) {
    this.recorder = recorder;
    this.metrics = metrics;
    this.cluster = cluster;
    this.rate = new TokenBucket(perSecond);
    this.perSecond = perSecond;
  }

  @Override
  public void outcome(Outcome o) {
    Decision d = o.decision();
    String reason;
    String type = "Normal";
    switch (o.result()) {
      case SUCCESS -> reason = d.action() == Action.DELETE ? "PodSweeperRemoved" : "PodSweeperEvicted";
      case BACKGROUND -> reason = "PodSweeperEvictionStarted";
      case CANCELED -> reason = "PodSweeperEvictionCanceled";
      case PDB_REFUSED -> {
        reason = "PodSweeperEvictionRefused";
        type = "Warning";
      }
      case ERROR -> {
        reason = "PodSweeperRemovalFailed";
        type = "Warning";
      }
      default -> {
        return;
      }
    }
    if (!rate.tryTake().isZero() || sender.getQueue().remainingCapacity() == 0) {
      dropped();
      return;
    }
    String eventType = type;
    String eventReason = reason;
    sender.execute(() -> recorder.record(d.namespace(), "Pod", d.name(), d.uid(), eventType, eventReason, message(o)));
  }

  /** A Warning Event on a pod about something other than a removal (a lifetime that does not parse), at the same rate. */
  public void warn(PodRecord pod, String reason, String message) {
    onPod(pod, "Warning", reason, message);
  }

  /** A Normal Event on a pod ahead of its removal (the policy's {@code warnBefore}), at the same rate. */
  public void notice(PodRecord pod, String reason, String message) {
    onPod(pod, "Normal", reason, message);
  }

  private void onPod(PodRecord pod, String type, String reason, String message) {
    if (!rate.tryTake().isZero() || sender.getQueue().remainingCapacity() == 0) {
      dropped();
      return;
    }
    sender.execute(() -> recorder.record(pod.namespace(), "Pod", pod.name(), pod.uid(), type, reason, message));
  }

  /** Over the rate: counted, and said at most once a minute (with how many since), so a quiet Event stream is not a mystery. */
  private synchronized void dropped() {
    metrics.eventsDropped.inc();
    droppedUnsaid++;
    long now = System.nanoTime();
    if (droppedSaidAt == 0 || now - droppedSaidAt >= DROPS_SAID_EVERY.toNanos()) {
      LOG.warn("{} Event(s) dropped over --events-per-second {} (podsweeper_events_dropped_total); every removal is in this log,"
          + " the decisions and the metrics all the same", droppedUnsaid, perSecond);
      droppedSaidAt = now;
      droppedUnsaid = 0;
    }
  }

  private String message(Outcome o) {
    Decision d = o.decision();
    String rule = d.strategy() + " rule " + d.rule() + ": ";
    if (o.result() == Result.PDB_REFUSED) {
      return rule + refusingBudget(d)
          .map(pdb -> "eviction refused: PodDisruptionBudget " + pdb.namespace() + "/" + pdb.name() + " allows no disruption now")
          .orElse("eviction refused (429) and no PodDisruptionBudget in the cache selects the pod");
    }
    return rule + d.reason() + (o.message().isEmpty() ? "" : " (" + o.message() + ")");
  }

  /**
   * The budget that covers the pod, by its labels: the API server refuses an eviction for one budget only (a pod
   * under two cannot be evicted at all), and its refusal message does not name it.
   */
  private Optional<PdbRecord> refusingBudget(Decision d) {
    Optional<PodRecord> pod = cluster.pod(d.podKey());
    return pod.flatMap(p -> cluster.pdbs(p.namespace()).stream().filter(pdb -> pdb.selector().matches(p.labels())).findFirst());
  }

  @Override
  public void close() {
    sender.shutdown();
    try {
      sender.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
