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

  /** The same status, of another kind: an init container's, once its spec shows it is a native sidecar. */
  public ContainerStatus as(Kind other) {
    return new ContainerStatus(name, other, waitingReason, terminatedReason, exitCode, finishedAt, restartCount, lastTerminatedReason, lastExitCode);
  }

  public enum Kind {
    MAIN,
    INIT,
    /**
     * A native sidecar: an init container with {@code restartPolicy: Always} (on by default since Kubernetes 1.29, GA in
     * 1.33). Kubernetes lists its status under {@code initContainerStatuses}, but it runs as long as the pod does, so
     * it counts as a long-running container, as a main one does, wherever containers count.
     */
    SIDECAR,
    EPHEMERAL
  }
}
