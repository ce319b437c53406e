package io.podsweeper.engine;

import io.podsweeper.kube.PodRemover;
import io.podsweeper.strategy.Decision;

/** Where removal requests go: the API server in production ({@link PodRemover}), a recorder in tests. */
@FunctionalInterface
public interface RemovalRequests {
  /** @param dryRun a server-side dry-run ({@code dryRun=All}): admission and PodDisruptionBudgets judge it, nothing is removed */
  PodRemover.Result send(Decision decision, boolean dryRun);
}
