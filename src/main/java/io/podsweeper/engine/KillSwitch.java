package io.podsweeper.engine;

import io.podsweeper.metrics.Metrics;
import io.podsweeper.removal.Pause;
import io.podsweeper.strategy.Action;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops every removal at once, without a restart; or only evictions ({@code paused: "evictions"}, what a tripped
 * blast-radius share sets), while finished pods are still cleaned up. Its state lives in the control ConfigMap when there is one (so
 * it survives restarts and holds for every replica); {@link #pause}/{@link #resume} write it there, and
 * {@link #observed} takes what the ConfigMap says, whoever changed it.
 *
 * <p>It errs towards paused: a pause that cannot be shared still stops this replica, a resume that cannot be
 * shared changes nothing, and only an explicit {@code paused: "false"} resumes. A ConfigMap that loses its
 * {@code paused} key or is deleted (an apply of other manifests, a clean-up) leaves the state as it was, and a
 * paused replica writes it back.
 */
public final class KillSwitch implements Pause {
  private static final Logger LOG = LoggerFactory.getLogger(KillSwitch.class);

  /** What is stopped, and its word in {@code data.paused}. */
  public enum Scope {
    /** Evictions of running pods; finished pods are still deleted (garbage collection is the job). */
    EVICTIONS("evictions"),
    ALL("true");

    private final String word;

    Scope(String word) {
      this.word = word;
    }
  }

  static final String RUNNING = "false";

  /** Where the state is shared with the other replicas (the control ConfigMap), or nowhere. */
  @FunctionalInterface
  public interface Store {
    /**
     * Writes {@code paused} ("true", "evictions" or "false") and the reason. Throws when the state could not be
     * shared; the message says why, in one line.
     *
     * @param over empty for a command (pause, resume), written over whatever the store holds; else the version of
     *     the store a reaction answers (a state to correct), written only while the store still holds that version,
     *     and {@code ""} for a store seen deleted, written only while it is absent
     * @return false when the store holds another version than {@code over} by now: its newer state is observed next
     */
    boolean write(String paused, String reason, Optional<String> over);
  }

  /** The version of the store that was seen deleted: a reaction to that is written only while it is absent. */
  public static final String ABSENT = "";

  private final Metrics metrics;
  private final Store store;
  /** What is stopped; null while removals run. */
  private volatile Scope scope;
  private volatile String reason = "";
  private volatile Runnable onResume = () -> {};
  private volatile Runnable onPause = () -> {};
  private volatile BooleanSupplier watching = () -> true;

  public KillSwitch(Metrics metrics, Store store) {
    this.metrics = metrics;
    this.store = store;
    metrics.paused.set(0);
  }

  /** True while anything is stopped. */
  public boolean paused() {
    return scope != null;
  }

  /** True if a removal of this kind must not be sent now. */
  @Override
  public boolean holds(Action action) {
    Scope now = scope;
    return now == Scope.ALL || (now == Scope.EVICTIONS && action == Action.EVICT);
  }

  @Override
  public String reason() {
    return reason;
  }

  /**
   * Whether the store is watched now: while it is not (its watch ended, and fabric8 waits up to 32 s to watch again),
   * a pause written meanwhile would go unseen, so nothing may be sent ({@link #watched}). Watched always by default.
   */
  public void watchedWhile(BooleanSupplier watching) {
    this.watching = watching;
  }

  /** False while a pause in the store could go unseen: the final check before every request holds then. */
  @Override
  public boolean watched() {
    return watching.getAsBoolean();
  }

  void onResume(Runnable action) {
    this.onResume = action;
  }

  /** Runs when anything is paused that was not (e.g. to withdraw what is in progress). */
  void onPause(Runnable action) {
    this.onPause = action;
  }

  /**
   * Stops this replica at once, then the others through the store.
   *
   * @return empty when every replica was told; else why the others were not (this one is paused all the same)
   */
  @Override
  public synchronized Optional<String> pause(String why) {
    return pause(Scope.ALL, why);
  }

  /** Stops evictions only (a full pause stays full); see {@link #pause(String)}. */
  @Override
  public synchronized Optional<String> pauseEvictions(String why) {
    return pause(scope == Scope.ALL ? Scope.ALL : Scope.EVICTIONS, why);
  }

  private Optional<String> pause(Scope what, String why) {
    set(what, why);
    return share(what.word, why, Optional.empty()).map(problem -> "paused this replica only, the other replicas were not reached: " + problem);
  }

  /**
   * Resumes every replica, or none: nothing changes unless the store took it. An operator's resume also starts the
   * blast-radius guard's window over when nothing was paused (e.g. a window that could not be read).
   *
   * @return empty when resumed; else why not
   */
  public synchronized Optional<String> resume() {
    Optional<String> problem = share(RUNNING, "", Optional.empty());
    if (problem.isPresent()) {
      return Optional.of("not resumed: " + problem.get());
    }
    boolean wasRunning = scope == null;
    set(null, "");
    if (wasRunning) {
      onResume.run();
    }
    return Optional.empty();
  }

  /**
   * What the control ConfigMap says, whoever wrote it: {@code said} is its {@code paused} key, empty when the key is
   * absent. An absent key means running only while nothing is paused. Only "false" means running: a value nobody
   * expected stops every removal rather than allow them.
   *
   * <p>What this writes back in answer is written only over the {@code version} it answers: a watch that resumes
   * after a break replays old states, and an answer to one of them must not undo what an operator did since.
   */
  public synchronized void observed(Optional<String> said, String why, String version) {
    if (said.isEmpty()) {
      if (scope != null) {
        LOG.warn("the control ConfigMap lost its paused key: still paused (only paused: \"false\" resumes); writing it back");
        share(scope.word, reason, Optional.of(version));
      }
      return;
    }
    String word = said.get().trim().toLowerCase(java.util.Locale.ROOT);
    if (word.equals(RUNNING)) {
      set(null, "");
      if (!why.isBlank()) {
        // An operator resumed by hand: clear the old reason, or their next pause would seem to be the guard's.
        share(RUNNING, "", Optional.of(version));
      }
    } else if (word.equals(Scope.EVICTIONS.word)) {
      set(Scope.EVICTIONS, why);
    } else {
      if (!word.equals(Scope.ALL.word)) {
        LOG.warn("the control ConfigMap has paused: \"{}\": read as paused (only \"false\" resumes)", said.get());
      }
      set(Scope.ALL, why);
    }
  }

  /** The control ConfigMap was deleted: not a resume. A paused replica writes it back, so restarts stay paused. */
  public synchronized void storeDeleted() {
    if (scope != null) {
      LOG.warn("the control ConfigMap was deleted: still paused (only paused: \"false\" resumes); writing it back");
      share(scope.word, reason, Optional.of(ABSENT));
    } else {
      LOG.warn("the control ConfigMap was deleted: removals go on; a pause will create it again");
    }
  }

  /**
   * Writes the state to the store, over whatever it holds (a command: {@code over} empty) or over the version a
   * reaction answers (see {@link Store#write}). Empty when written, or when the store has changed since the version
   * answered; else why it could not be shared.
   */
  private Optional<String> share(String paused, String why, Optional<String> over) {
    try {
      if (!store.write(paused, why, over)) {
        LOG.info("the control ConfigMap changed since the state this answered (paused: {}): its newer state decides", paused);
      }
      return Optional.empty();
    } catch (RuntimeException e) {
      LOG.error("the kill switch state (paused: {}) did not reach the other replicas: {}", paused, e.getMessage());
      return Optional.of(String.valueOf(e.getMessage()));
    }
  }

  private void set(Scope now, String why) {
    Scope was = scope;
    reason = why == null ? "" : why;
    scope = now;
    metrics.paused.set(now == null ? 0 : 1);
    if (now != null && now != was) {
      LOG.warn("{} PAUSED: {}", now == Scope.ALL ? "removals" : "evictions", reason.isEmpty() ? "by an operator" : reason);
      onPause.run();
    } else if (now == null && was != null) {
      LOG.info("removals resumed");
      onResume.run();
    }
  }
}
