package io.podsweeper.removal;

import io.podsweeper.strategy.Decision;
import java.time.Instant;
import java.util.Optional;

/**
 * What one removal holds of the limits, as one value: a place in the limits window {@code window}, a count in the
 * blast-radius guard of {@code guardEpoch} at {@code countedAt}, and a place under its namespace's hourly cap at
 * {@code capAt} if its profile has one. The {@link Ledger} that made it commits it, rolls it back or keeps it counted;
 * nothing else changes what it holds.
 *
 * @param retried the guard's count is that of an earlier request for the same pod version that got no answer: it
 *     stays until the pod shows whether that one was carried out
 */
record Reservation(Decision decision, long window, long guardEpoch, Instant countedAt, Optional<Instant> capAt, boolean retried) {
  /** The window of a reservation that took no place in one (an EvictionRequest taken over). */
  static final long NOT_COUNTED = -1;

  /**
   * An EvictionRequest taken over from an earlier leader or process: the guard counted it when it was made, at an
   * instant this process does not know, so its withdrawal uncounts nothing.
   */
  static Reservation adopted(Decision decision) {
    return new Reservation(decision, NOT_COUNTED, NOT_COUNTED, Instant.EPOCH, Optional.empty(), false);
  }
}
