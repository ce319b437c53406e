package io.podsweeper.cluster;

import java.time.Instant;
import java.util.Optional;

/** One entry of a pod's {@code status.conditions}. */
public record PodCondition(String type, String status, Optional<String> reason, Optional<Instant> lastTransitionTime) {}
