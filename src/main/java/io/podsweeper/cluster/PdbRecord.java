package io.podsweeper.cluster;

import io.podsweeper.policy.LabelSelector;

/** A PodDisruptionBudget's selector (for the PodsWithoutPDB protection). */
public record PdbRecord(String namespace, String name, LabelSelector selector) {}
