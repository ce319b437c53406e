package io.podsweeper.cluster;

/** A node taint. */
public record Taint(String key, String value, String effect) {}
