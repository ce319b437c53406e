package io.podsweeper.engine;

/** Told about every decision's outcome, on the removal worker's thread: must not block. */
@FunctionalInterface
public interface OutcomeListener {
  void outcome(Outcome outcome);
}
