package io.podsweeper.policy;

import java.time.Duration;
import java.util.Optional;

/** PodLifeTime's {@code conditions[]} entry: every set field must hold on one and the same pod condition. */
public record ConditionFilter(
    Optional<String> type, Optional<String> status, Optional<String> reason, Optional<Duration> minTimeSinceLastTransition) {}
