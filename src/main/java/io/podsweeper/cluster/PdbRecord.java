package io.podsweeper.cluster;

import io.podsweeper.policy.LabelSelector;
import java.util.OptionalInt;

/**
 * A PodDisruptionBudget's selector (for the PodsWithoutPDB protection), and its {@code status.disruptionsAllowed} where
 * it was read (a snapshot or {@code explain} on a live cluster; the live service's cache leaves it empty: its eviction
 * requests get the API server's answer instead).
 */
public record PdbRecord(String namespace, String name, LabelSelector selector, OptionalInt disruptionsAllowed) {
  /** A PDB whose status was not read. */
  public PdbRecord(String namespace, String name, LabelSelector selector) {
    this(namespace, name, selector, OptionalInt.empty());
  }
}
