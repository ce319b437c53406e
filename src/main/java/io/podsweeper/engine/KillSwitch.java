package io.podsweeper.engine;

import io.podsweeper.metrics.Metrics;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops every removal at once, without a restart. Its state lives in the control ConfigMap when there is one (so
 * it survives restarts and holds for every replica); {@link #pause}/{@link #resume} write it there, and
 * {@link #observed} takes what the ConfigMap says, whoever changed it.
 */
public final class KillSwitch {
  private static final Logger LOG = LoggerFactory.getLogger(KillSwitch.class);

  private final Metrics metrics;
  private final BiConsumer<Boolean, String> store;
  private volatile boolean paused;
  private volatile String reason = "";
  private volatile Runnable onResume = () -> {};

  /** @param store writes the state where operators see it (the control ConfigMap); may be a no-op */
  public KillSwitch(Metrics metrics, BiConsumer<Boolean, String> store) {
    this.metrics = metrics;
    this.store = store;
    metrics.paused.set(0);
  }

  public boolean paused() {
    return paused;
  }

  public String reason() {
    return reason;
  }

  void onResume(Runnable action) {
    this.onResume = action;
  }

  public void pause(String why) {
    observed(true, why);
    store.accept(true, why);
  }

  public void resume() {
    observed(false, "");
    store.accept(false, "");
  }

  /** The state as last written by anyone (an operator with kubectl, another replica, this one). */
  public void observed(boolean nowPaused, String why) {
    boolean was = paused;
    reason = why == null ? "" : why;
    paused = nowPaused;
    metrics.paused.set(nowPaused ? 1 : 0);
    if (nowPaused && !was) {
      LOG.warn("removals PAUSED: {}", reason.isEmpty() ? "by an operator" : reason);
    } else if (!nowPaused && was) {
      LOG.info("removals resumed");
      onResume.run();
    }
  }
}
