package io.podsweeper.removal;

import io.podsweeper.strategy.Decision;

/** Where removal requests go: the API server in production ({@code kube/PodRemover}), a recorder in tests. */
@FunctionalInterface
public interface RemovalRequests {
  /** @param dryRun a server-side dry-run ({@code dryRun=All}): admission and PodDisruptionBudgets judge it, nothing is removed */
  RequestResult send(Decision decision, boolean dryRun);
}
