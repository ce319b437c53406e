package io.podsweeper.engine;

/** The outcome of one decision, as counted in {@code podsweeper_removals_total{result}} and logged. */
public enum Result {
  SUCCESS("success"),
  /** Accepted as an eviction in background (e.g. a live migration): in progress, counted when it ends. */
  BACKGROUND("background"),
  DRY_RUN("dry-run"),
  PAUSED("paused"),
  PDB_REFUSED("pdb-refused"),
  CONFLICT("conflict"),
  GONE("gone"),
  LIMITED("limited"),
  ERROR("error");

  private final String label;

  Result(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }
}
