package io.podsweeper.removal;

import io.podsweeper.policy.Limits;
import io.podsweeper.safety.RemovalBudget;
import io.podsweeper.strategy.Decision;
import java.util.Collection;
import java.util.Optional;

/**
 * The limits window in force (a full pass starts the next): its budget, and which window each place was taken in. A
 * place goes back only to the window it was taken in, as one a full pass started since never counted it; an eviction
 * in background holds a place in every window it lasts into. Part of the {@link Ledger}, which locks it.
 */
final class LimitsWindow {
  private RemovalBudget budget;
  private long number;

  LimitsWindow(Limits limits) {
    this.budget = new RemovalBudget(limits);
  }

  long number() {
    return number;
  }

  /** A place in this window, or which cap is reached (and nothing taken). */
  Optional<String> take(Decision d) {
    return budget.take(d.removal());
  }

  void giveBack(Decision d, long takenIn) {
    if (takenIn == number) {
      budget.giveBack(d.removal());
    }
  }

  /** New caps over the same counts: a reload must not open the caps again. */
  void setLimits(Limits limits) {
    budget.setLimits(limits);
  }

  /** The next window, with fresh counts (and a fresh budget, if {@code limits} is given); the evictions in background take their places. */
  void next(Optional<Limits> limits, Collection<InProgress> background) {
    budget = limits.map(RemovalBudget::new).orElse(budget);
    budget.reset();
    number++;
    background.forEach(this::hold);
  }

  /** An eviction in background holds a place in this window (once). */
  void hold(InProgress entry) {
    if (entry.countedIn != number) {
      budget.carry(entry.decision.removal());
      entry.countedIn = number;
    }
  }

  /** An eviction in background that did not happen, or was replaced: the window it holds a place in gets it back. */
  void release(InProgress entry) {
    giveBack(entry.decision, entry.countedIn);
  }

  /** An eviction in background that happened: counted in its own window; a later one it was only carried into gets its place back. */
  void uncarry(InProgress entry) {
    if (entry.reservation.window() != number) {
      release(entry);
    }
  }
}
