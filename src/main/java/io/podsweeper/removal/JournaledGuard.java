package io.podsweeper.removal;

import io.podsweeper.safety.GuardWindow;
import java.util.Optional;

/**
 * One blast-radius guard as its {@link GuardJournal} reads and writes it: a guard of the {@link Ledger} (by epoch,
 * changed under the ledger's lock), or a plain one in tests. Equal handles are the same guard.
 */
interface JournaledGuard {
  /** What it counts now and the version of that; empty once it is no longer in force (replaced by a dry-run switch). */
  Optional<Ledger.GuardState> state();

  /** Takes over a window the cluster remembered, in place of what it counts. */
  void restore(GuardWindow remembered);

  /** Counts what another writer remembered besides what it counts. */
  void absorb(GuardWindow added);

  /** An operator resumed: its window starts over. */
  void reset();
}
