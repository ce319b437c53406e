package io.podsweeper.cluster;

/** A PersistentVolumeClaim's storage class (for the PodsWithPVC protection); empty when unset. */
public record PvcRecord(String namespace, String name, String storageClass) {}
