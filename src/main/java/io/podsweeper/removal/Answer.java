package io.podsweeper.removal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * What became of a candidate, for the scheduler: nothing more to do (held, sent and settled, or no longer wanted: the
 * pod's own events and deadlines take it from there), look again after a delay, or handed to a sender, whose own
 * answer comes later. The removal path never calls the scheduler back for the candidate it was given.
 */
public record Answer(Kind kind, Duration after, CompletableFuture<Answer> sent) {
  public enum Kind { DONE, RETRY, SENDING }

  public static final Answer DONE = new Answer(Kind.DONE, Duration.ZERO, null);

  public static Answer retryAfter(Duration delay) {
    return new Answer(Kind.RETRY, delay, null);
  }

  static Answer sending(CompletableFuture<Answer> sent) {
    return new Answer(Kind.SENDING, Duration.ZERO, sent);
  }
}
