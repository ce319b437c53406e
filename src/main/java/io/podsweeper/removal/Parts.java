package io.podsweeper.removal;

/**
 * The parts of the removal path that a pod's removal and a PodMigrationJob's eviction both go through, assembled once
 * by {@link RemovalPath}.
 */
record Parts(Admission admission, Checks checks, Ledger ledger, GuardJournal journal, Pacing pacing, Settlement settlement,
    InBackground background, OutcomeSink outcomes, Backoff backoff) {}
