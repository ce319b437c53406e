package io.podsweeper.cluster;

/** A pod toleration; empty strings stand for unset fields, as in the API. */
public record Toleration(String key, String operator, String value, String effect) {
  /** Whether this toleration tolerates {@code taint}, with the API server's matching rules. */
  public boolean tolerates(Taint taint) {
    if (!effect.isEmpty() && !effect.equals(taint.effect())) {
      return false;
    }
    if (key.isEmpty()) {
      return "Exists".equals(operator);
    }
    if (!key.equals(taint.key())) {
      return false;
    }
    return "Exists".equals(operator) || value.equals(taint.value());
  }
}
