package io.podsweeper.engine;

import io.podsweeper.kube.EventRecorder;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.safety.TokenBucket;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Kubernetes Events about removals, on the pod: {@code PodSweeperRemoved} (deleted) or {@code PodSweeperEvicted}
 * (evicted), Normal, with rule and reason; {@code PodSweeperEvictionRefused} or {@code PodSweeperRemovalFailed},
 * Warning, when a removal did not happen. Rate-limited and sent from a small bounded queue of their own, so a mass
 * cleanup neither floods the API server nor slows removals: what does not fit is dropped and counted.
 */
public final class RemovalEvents implements OutcomeListener, AutoCloseable {
  private final EventRecorder recorder;
  private final Metrics metrics;
  private final TokenBucket rate;
  private final ThreadPoolExecutor sender = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1000), r -> {
    Thread t = new Thread(r, "removal-events");
    t.setDaemon(true);
    return t;
  }, new ThreadPoolExecutor.DiscardPolicy());

  public RemovalEvents(EventRecorder recorder, Metrics metrics, double perSecond) {
    this.recorder = recorder;
    this.metrics = metrics;
    this.rate = new TokenBucket(perSecond);
  }

  @Override
  public void outcome(Outcome o) {
    Decision d = o.decision();
    String reason;
    String type = "Normal";
    switch (o.result()) {
      case SUCCESS -> reason = d.action() == Action.DELETE ? "PodSweeperRemoved" : "PodSweeperEvicted";
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
      metrics.eventsDropped.inc();
      return;
    }
    String message = d.strategy() + " rule " + d.rule() + ": " + d.reason() + (o.message().isEmpty() ? "" : " (" + o.message() + ")");
    String eventType = type;
    String eventReason = reason;
    sender.execute(() -> recorder.record(d.namespace(), "Pod", d.name(), d.uid(), eventType, eventReason, message));
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
