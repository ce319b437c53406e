package io.podsweeper.policy;

/**
 * A policy (or snapshot) that cannot be used. The message names the offending place, e.g.
 * {@code rules[2].states[0]: unknown state "Crashloop"}, so a user can fix the file without a stack trace.
 */
public class PolicyException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public PolicyException(String path, String message) {
    super(path.isEmpty() ? message : path + ": " + message);
  }
}
