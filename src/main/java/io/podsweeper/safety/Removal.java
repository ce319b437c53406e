package io.podsweeper.safety;

/**
 * What the limits and the blast-radius guard count of one removal: where it happens and whether it evicts a running
 * pod (a DELETE of a finished pod takes nothing away from a workload).
 *
 * @param node empty for a pod not bound to a node
 */
public record Removal(String namespace, String node, boolean eviction) {}
