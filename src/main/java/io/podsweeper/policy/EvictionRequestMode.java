package io.podsweeper.policy;

import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Which evictions go as EvictionRequests (KEP-4563) when the cluster serves that API; without it every eviction goes
 * to the eviction endpoint, whatever this says. Deletions of finished pods are never requests.
 */
public enum EvictionRequestMode {
  /** Only pods annotated {@code descheduler.alpha.kubernetes.io/request-evict-only}: they ask to be evicted in background. */
  OptIn,
  /** Every eviction. */
  All;

  public static Optional<EvictionRequestMode> parse(String name) {
    return Arrays.stream(values()).filter(m -> m.name().equals(name)).findFirst();
  }

  public static String allowedNames() {
    return Arrays.stream(values()).map(Enum::name).collect(Collectors.joining(", "));
  }
}
