package io.podsweeper.cluster;

import java.time.Instant;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What decisions need of one container's status: its current waiting or terminated reason, exit code, finish
 * time and restarts.
 */
public record ContainerStatus(
    String name,
    Kind kind,
    Optional<String> waitingReason,
    Optional<String> terminatedReason,
    OptionalInt exitCode,
    Optional<Instant> finishedAt,
    int restartCount) {

  public enum Kind {
    MAIN,
    INIT,
    EPHEMERAL
  }
}
