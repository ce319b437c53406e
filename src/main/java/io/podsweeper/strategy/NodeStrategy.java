package io.podsweeper.strategy;

/**
 * A strategy that decides over the whole node set at once, as upstream's deschedule and balance plugins do: whether a
 * pod must go depends on its node and on the other pods, not only on the pod. Runs only in a pass.
 */
interface NodeStrategy {
  void run(NodePass pass);
}
