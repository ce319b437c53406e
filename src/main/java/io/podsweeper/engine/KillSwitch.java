package io.podsweeper.engine;

import io.podsweeper.metrics.Metrics;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops every removal at once, without a restart. Its state lives in the control ConfigMap when there is one (so
 * it survives restarts and holds for every replica); {@link #pause}/{@link #resume} write it there, and
 * {@link #observed} takes what the ConfigMap says, whoever changed it.
 *
 * <p>It errs towards paused: a pause that cannot be shared still stops this replica, a resume that cannot be
 * shared changes nothing, and only an explicit {@code paused: "false"} resumes. A ConfigMap that loses its
 * {@code paused} key or is deleted (an apply of other manifests, a clean-up) leaves the state as it was, and a
 * paused replica writes it back.
 */
public final class KillSwitch {
  private static final Logger LOG = LoggerFactory.getLogger(KillSwitch.class);

  /** Where the state is shared with the other replicas (the control ConfigMap), or nowhere. */
  @FunctionalInterface
  public interface Store {
    /** Throws when the state could not be shared; the message says why, in one line. */
    void write(boolean paused, String reason);
  }

  private final Metrics metrics;
  private final Store store;
  private volatile boolean paused;
  private volatile String reason = "";
  private volatile Runnable onResume = () -> {};

  public KillSwitch(Metrics metrics, Store store) {
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

  /**
   * Stops this replica at once, then the others through the store.
   *
   * @return empty when every replica was told; else why the others were not (this one is paused all the same)
   */
  public synchronized Optional<String> pause(String why) {
    set(true, why);
    return share(true, why).map(problem -> "paused this replica only, the other replicas were not reached: " + problem);
  }

  /**
   * Resumes every replica, or none: nothing changes unless the store took it.
   *
   * @return empty when resumed; else why not
   */
  public synchronized Optional<String> resume() {
    Optional<String> problem = share(false, "");
    if (problem.isPresent()) {
      return Optional.of("not resumed: " + problem.get());
    }
    set(false, "");
    return Optional.empty();
  }

  /**
   * What the control ConfigMap says, whoever wrote it: {@code nowPaused} is its {@code paused} key, empty when the
   * key is absent. An absent key means running only while nothing is paused.
   */
  public synchronized void observed(Optional<Boolean> nowPaused, String why) {
    if (nowPaused.isPresent()) {
      set(nowPaused.get(), nowPaused.get() ? why : "");
    } else if (paused) {
      LOG.warn("the control ConfigMap lost its paused key: still paused (only paused: \"false\" resumes); writing it back");
      share(true, reason);
    }
  }

  /** The control ConfigMap was deleted: not a resume. A paused replica writes it back, so restarts stay paused. */
  public synchronized void storeDeleted() {
    if (paused) {
      LOG.warn("the control ConfigMap was deleted: still paused (only paused: \"false\" resumes); writing it back");
      share(true, reason);
    } else {
      LOG.warn("the control ConfigMap was deleted: removals go on; a pause will create it again");
    }
  }

  private Optional<String> share(boolean nowPaused, String why) {
    try {
      store.write(nowPaused, why);
      return Optional.empty();
    } catch (RuntimeException e) {
      LOG.error("the kill switch state (paused={}) did not reach the other replicas: {}", nowPaused, e.getMessage());
      return Optional.of(String.valueOf(e.getMessage()));
    }
  }

  private void set(boolean nowPaused, String why) {
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
