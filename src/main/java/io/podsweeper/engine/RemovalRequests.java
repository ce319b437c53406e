package io.podsweeper.engine;

import io.podsweeper.kube.PodRemover;
import io.podsweeper.strategy.Decision;

/** Where removal requests go: the API server in production ({@link PodRemover}), a recorder in tests. */
@FunctionalInterface
public interface RemovalRequests {
  PodRemover.Result send(Decision decision);
}
