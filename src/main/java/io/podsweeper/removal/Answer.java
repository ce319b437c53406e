package io.podsweeper.removal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * What became of a candidate, for the scheduler: nothing more to do (held, refused, or no longer wanted: the pod's own
 * events and deadlines take it from there), removed (the request was carried out; in a dry run, the server would
 * accept it), look again after a delay, or handed to a sender, whose own answer comes later. The removal path never
 * calls the scheduler back for the candidate it was given.
 */
public record Answer(Kind kind, Duration after, CompletableFuture<Answer> sent) {
  public enum Kind { DONE, REMOVED, RETRY, SENDING }

  public static final Answer DONE = new Answer(Kind.DONE, Duration.ZERO, null);
  public static final Answer REMOVED = new Answer(Kind.REMOVED, Duration.ZERO, null);

  public static Answer retryAfter(Duration delay) {
    return new Answer(Kind.RETRY, delay, null);
  }

  static Answer sending(CompletableFuture<Answer> sent) {
    return new Answer(Kind.SENDING, Duration.ZERO, sent);
  }
}
