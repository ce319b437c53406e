package io.podsweeper.cluster;

import java.util.List;

/** What the evictor's protections read of a pod's volumes and resource claims. */
public record Volumes(boolean localStorage, List<String> persistentVolumeClaims, boolean resourceClaims) {
  public static final Volumes NONE = new Volumes(false, List.of(), false);

  public Volumes {
    persistentVolumeClaims = List.copyOf(persistentVolumeClaims);
  }
}
