package io.podsweeper.testing;

import io.podsweeper.cluster.PodListener;
import io.podsweeper.cluster.PodRecord;

/** A cache's listener that hears nothing: for tests about the cache itself. */
public final class IgnoringListener implements PodListener {
  @Override
  public void podChanged(PodRecord pod) {}

  @Override
  public void podDeleted(PodRecord pod) {}

  @Override
  public void namespaceChanged(String namespace) {}
}
