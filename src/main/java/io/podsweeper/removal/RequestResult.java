package io.podsweeper.removal;

/**
 * What the API server answered a removal request: the port's answer, whoever sends it ({@code kube/PodRemover}, an
 * EvictionRequest, a PodMigrationJob, a test's recorder).
 */
public record RequestResult(Outcome outcome, int code, String message) {
  /** The code of an {@link Outcome#ERROR} without an answer (timeout, connection lost): the server may have acted. */
  public static final int NO_ANSWER = 0;

  public enum Outcome {
    /** The pod was deleted, or its eviction accepted. */
    REMOVED,
    /** 429: a PodDisruptionBudget (or API throttling) refused the eviction; try again later. */
    REFUSED,
    /** 409: a precondition failed; the pod changed or was recreated since the decision. */
    CONFLICT,
    /** 404: the pod is already gone. */
    GONE,
    /** Anything else, including no answer at all. */
    ERROR,
    /** A PodMigrationJob was created for the eviction: the pod goes when the job evicts it. */
    STARTED
  }

  /** Whether the request may have been carried out although no answer came back. */
  public boolean unanswered() {
    return outcome == Outcome.ERROR && code == NO_ANSWER;
  }
}
