package io.podsweeper.policy;

import java.time.Duration;
import java.util.OptionalInt;

/**
 * The blast-radius guard: within one {@code window}, removals stop (and stay stopped until an operator resumes) when
 * the next one would evict more than {@code maxNamespaceShare} of a namespace's running pods, more than
 * {@code maxClusterShare} of the cluster's, or make more than {@code maxRemovals} removals in all. Shares count
 * evictions of running pods only: deleting finished pods is the job, evicting running ones is the risk.
 *
 * @param minEvictions evictions in a namespace within the window that are always allowed, so a one-pod namespace
 *     can still lose its crash-looping pod
 * @param minClusterEvictions evictions in the cluster within the window that are always allowed, so a small cluster
 *     can still lose a few crash-looping pods
 */
public record Guard(
    double maxNamespaceShare, double maxClusterShare, OptionalInt maxRemovals, int minEvictions, int minClusterEvictions,
    Duration window) {
  public static final Guard DEFAULTS = new Guard(0.5, 0.1, OptionalInt.empty(), 1, 10, Duration.ofMinutes(10));
}
