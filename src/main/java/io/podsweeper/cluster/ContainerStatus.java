package io.podsweeper.cluster;

import java.time.Instant;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What decisions need of one container's status: its current waiting or terminated reason, exit code, finish
 * time and restarts, and how its last run ended (for rules' match expressions: {@code lastState.terminated}).
 */
public record ContainerStatus(
    String name,
    Kind kind,
    Optional<String> waitingReason,
    Optional<String> terminatedReason,
    OptionalInt exitCode,
    Optional<Instant> finishedAt,
    int restartCount,
    Optional<String> lastTerminatedReason,
    OptionalInt lastExitCode) {

  /** A container that has not restarted after ending, or whose last run nobody asks about. */
  public ContainerStatus(String name, Kind kind, Optional<String> waitingReason, Optional<String> terminatedReason, OptionalInt exitCode,
      Optional<Instant> finishedAt, int restartCount) {
    this(name, kind, waitingReason, terminatedReason, exitCode, finishedAt, restartCount, Optional.empty(), OptionalInt.empty());
  }

  public enum Kind {
    MAIN,
    INIT,
    EPHEMERAL
  }
}
