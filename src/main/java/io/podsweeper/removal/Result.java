package io.podsweeper.removal;

/** The outcome of one decision, as counted in {@code podsweeper_removals_total{result}} and logged. */
public enum Result {
  SUCCESS("success"),
  /** Accepted as an eviction in background (e.g. a live migration): in progress, counted when it ends. */
  BACKGROUND("background"),
  /** A dry-run the API server would accept (server-side dry-run of the very request). */
  DRY_RUN("dry-run"),
  /** A dry-run held back by a limit or throttle, as the live run would be. */
  WOULD_BE_LIMITED("would-be-limited"),
  /** A dry-run the blast-radius guard would refuse (the live run would pause). */
  WOULD_TRIP_GUARD("would-trip-guard"),
  /** A dry-run eviction the API server refused (a PodDisruptionBudget): the live run would back off and retry. */
  PDB_WOULD_REFUSE("pdb-would-refuse"),
  PAUSED("paused"),
  PDB_REFUSED("pdb-refused"),
  CONFLICT("conflict"),
  GONE("gone"),
  LIMITED("limited"),
  /** An EvictionRequest this service withdrew (the pod no longer qualifies), or one canceled by someone else. */
  CANCELED("canceled"),
  ERROR("error");

  private final String label;

  Result(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }
}
