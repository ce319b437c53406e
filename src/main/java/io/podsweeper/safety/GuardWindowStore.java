package io.podsweeper.safety;

import java.util.Optional;

/**
 * Where the blast-radius guard's window is remembered: a ConfigMap beside the kill switch's in production. Every write
 * is made over the version last read or written, so that a leader that was deposed while its write was on the way
 * cannot overwrite what the new leader wrote since.
 */
public interface GuardWindowStore {
  /**
   * A window as stored.
   *
   * @param window the text, empty if none was written
   * @param version what a write over it names; {@code ""} while nothing is stored
   * @param writeId what the write that stored it was called by its writer ({@code ""} if unknown): how a writer knows
   *     its own write, which landed although its answer was lost
   */
  record Stored(String window, String version, String writeId) {
    public static final Stored NOTHING = new Stored("", "", "");
  }

  /** The window last written. Throws if it cannot be read. */
  Stored load();

  /**
   * Writes the window, called {@code writeId}, only if the store is still at {@code version}: the version written, or
   * empty if someone else wrote (or deleted) it since. Throws if it cannot be written.
   */
  Optional<String> saveOver(String window, String version, String writeId);

  /** No store: the window lives in this process only (no control ConfigMap). */
  GuardWindowStore NONE = new GuardWindowStore() {
    @Override
    public Stored load() {
      return Stored.NOTHING;
    }

    @Override
    public Optional<String> saveOver(String window, String version, String writeId) {
      return Optional.of("");
    }
  };
}
