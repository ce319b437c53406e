package io.podsweeper.strategy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Max-min fair shares of a budget among namespaces (water-filling). Each namespace's share is
 * {@code min(count, cap, level)}, with the level the highest at which the shares sum to no more than the budget: a
 * namespace holding less than the level keeps all it holds, the others share what is left equally. Shares are whole
 * pods: the level's remainder goes one pod each to the namespaces at the level, in name order.
 *
 * <p>Example, budget 5,000, no cap: {@code ci} 4,812, {@code data} 1,900, {@code web} 900, {@code ml} 600. Holding
 * 8,212, the cluster is 3,212 over. {@code web} and {@code ml} are under the level and keep everything (1,500 of the
 * budget); the other 3,500 go to {@code ci} and {@code data}, 1,750 each. So {@code ci} loses 3,062, {@code data}
 * 150, {@code web} and {@code ml} nothing. With a cap of 1,000 per namespace, {@code ci} and {@code data} get 1,000
 * each whatever the budget leaves, and the cluster is under it.
 *
 * @param shares each namespace's share (only those given)
 * @param level the share of the namespaces at the level (the remainder aside), or {@link Integer#MAX_VALUE} when the
 *     counts, capped, fit the budget
 */
record FairShares(Map<String, Integer> shares, int level) {
  static final int NO_LEVEL = Integer.MAX_VALUE;

  /** The shares of {@code budget} for these counts, each namespace held to {@code cap} ({@link #NO_LEVEL}: none). */
  static FairShares of(Map<String, Integer> counts, int cap, long budget) {
    Map<String, Integer> shares = new HashMap<>(counts.size() * 2);
    List<Map.Entry<String, Integer>> byDemand = new ArrayList<>(counts.size());
    long capped = 0;
    for (Map.Entry<String, Integer> e : counts.entrySet()) {
      int demand = Math.min(e.getValue(), cap);
      byDemand.add(Map.entry(e.getKey(), demand));
      capped += demand;
    }
    if (capped <= budget) {
      byDemand.forEach(e -> shares.put(e.getKey(), e.getValue()));
      return new FairShares(shares, NO_LEVEL);
    }
    byDemand.sort(Map.Entry.<String, Integer>comparingByValue().thenComparing(Map.Entry.comparingByKey()));
    long left = budget;
    int i = 0;
    // Smallest first: a namespace whose demand fits in an equal split of what is left keeps its demand.
    while (i < byDemand.size() && (long) byDemand.get(i).getValue() * (byDemand.size() - i) <= left) {
      shares.put(byDemand.get(i).getKey(), byDemand.get(i).getValue());
      left -= byDemand.get(i).getValue();
      i++;
    }
    List<String> atLevel = new ArrayList<>(byDemand.subList(i, byDemand.size()).stream().map(Map.Entry::getKey).toList());
    atLevel.sort(Comparator.naturalOrder());
    int level = (int) (left / atLevel.size());
    long remainder = left % atLevel.size();
    for (int j = 0; j < atLevel.size(); j++) {
      shares.put(atLevel.get(j), level + (j < remainder ? 1 : 0));
    }
    return new FairShares(shares, level);
  }

  /** The namespace's share; one this was not computed for holds nothing counted, and has a share of 0. */
  int of(String namespace) {
    return shares.getOrDefault(namespace, 0);
  }
}
