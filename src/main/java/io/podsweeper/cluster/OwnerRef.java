package io.podsweeper.cluster;

/** An ownerReference of a pod. */
public record OwnerRef(String kind, String name, String uid, boolean controller) {}
