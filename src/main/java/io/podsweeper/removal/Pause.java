package io.podsweeper.removal;

import io.podsweeper.strategy.Action;
import java.util.Optional;

/** The kill switch as the removal path sees it: what it holds now, and the pause a tripped guard throws. */
public interface Pause {
  /** True if a removal of this kind must not be sent now. */
  boolean holds(Action action);

  String reason();

  /** False while a pause written to the kill switch's store could go unseen: nothing may be sent then. */
  boolean watched();

  /** Stops every removal; empty when every replica was told, else why not. */
  Optional<String> pause(String why);

  /** Stops evictions only (finished pods are still deleted). */
  Optional<String> pauseEvictions(String why);

  /** The one way a held removal says why: the reason of the pause in force, if it has one. */
  default String why() {
    return reason().isBlank() ? "removals are paused (the kill switch gives no reason)" : "removals are paused: " + reason();
  }
}
