package io.podsweeper.policy;

import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The states a lifetime rule can name: exactly the 24 values the upstream descheduler's PodLifeTime accepts.
 *
 * <p>{@link #terminal} marks the states that only a finished pod (phase Succeeded or Failed) or a finished
 * container carries. Naming one of them is the explicit opt-in a rule needs before it may touch a terminated
 * pod; a rule with only an age or only waiting reasons never does.
 */
public enum PodState {
  RUNNING("Running", Kind.PHASE, false),
  PENDING("Pending", Kind.PHASE, false),
  SUCCEEDED("Succeeded", Kind.PHASE, true),
  FAILED("Failed", Kind.PHASE, true),
  UNKNOWN("Unknown", Kind.PHASE, false),

  NODE_AFFINITY("NodeAffinity", Kind.POD_REASON, true),
  NODE_LOST("NodeLost", Kind.POD_REASON, true),
  SHUTDOWN("Shutdown", Kind.POD_REASON, true),
  UNEXPECTED_ADMISSION_ERROR("UnexpectedAdmissionError", Kind.POD_REASON, true),

  POD_INITIALIZING("PodInitializing", Kind.WAITING_REASON, false),
  CONTAINER_CREATING("ContainerCreating", Kind.WAITING_REASON, false),
  IMAGE_PULL_BACK_OFF("ImagePullBackOff", Kind.WAITING_REASON, false),
  CRASH_LOOP_BACK_OFF("CrashLoopBackOff", Kind.WAITING_REASON, false),
  CREATE_CONTAINER_CONFIG_ERROR("CreateContainerConfigError", Kind.WAITING_REASON, false),
  ERR_IMAGE_PULL("ErrImagePull", Kind.WAITING_REASON, false),
  CREATE_CONTAINER_ERROR("CreateContainerError", Kind.WAITING_REASON, false),
  INVALID_IMAGE_NAME("InvalidImageName", Kind.WAITING_REASON, false),

  OOM_KILLED("OOMKilled", Kind.TERMINATED_REASON, true),
  ERROR("Error", Kind.TERMINATED_REASON, true),
  COMPLETED("Completed", Kind.TERMINATED_REASON, true),
  DEADLINE_EXCEEDED("DeadlineExceeded", Kind.TERMINATED_REASON, true),
  EVICTED("Evicted", Kind.TERMINATED_REASON, true),
  CONTAINER_CANNOT_RUN("ContainerCannotRun", Kind.TERMINATED_REASON, true),
  START_ERROR("StartError", Kind.TERMINATED_REASON, true);

  /** Where upstream documents the value; matching itself is category-blind, as upstream's is. */
  public enum Kind {
    PHASE,
    POD_REASON,
    WAITING_REASON,
    TERMINATED_REASON
  }

  private static final Map<String, PodState> BY_NAME =
      Arrays.stream(values()).collect(Collectors.toUnmodifiableMap(s -> s.wireName, Function.identity()));

  private final String wireName;
  private final Kind kind;
  private final boolean terminal;

  PodState(String wireName, Kind kind, boolean terminal) {
    this.wireName = wireName;
    this.kind = kind;
    this.terminal = terminal;
  }

  public String wireName() {
    return wireName;
  }

  public Kind kind() {
    return kind;
  }

  /** True if only a finished pod or container carries this state: naming it opts a rule in to terminated pods. */
  public boolean terminal() {
    return terminal;
  }

  public static Optional<PodState> parse(String name) {
    return Optional.ofNullable(BY_NAME.get(name));
  }

  public static String allowedNames() {
    return BY_NAME.keySet().stream().sorted().collect(Collectors.joining(", "));
  }

  @Override
  public String toString() {
    return wireName;
  }
}
