package io.podsweeper.strategy;

import io.podsweeper.policy.FinishedPodBudget;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the finished-pod budgets hold at one instant ({@link BudgetLedger#usage}): per budget and namespace, the pods
 * it counts, what it allows there, and of what is over, what cannot be removed now and why. What the budget's metrics
 * and alerts are made of; "cannot be held" is {@link #held()} false.
 *
 * @param cluster the policy file's budget, if it has one
 * @param uses one per namespace counting a pod for the cluster's budget, and one per tenant's budget whose namespace
 *     holds a pod it counts; in namespace order, the cluster's first
 */
public record BudgetUsage(Optional<FinishedPodBudget> cluster, List<Use> uses) {
  public static final String TOO_YOUNG = "too-young";
  public static final String KEPT = "kept";
  public static final String PROTECTED = "protected";

  public BudgetUsage {
    uses = uses.stream().sorted(Comparator.comparing(Use::namespace).thenComparing(u -> u.budget().namespace().isPresent())).toList();
  }

  /**
   * One budget in one namespace.
   *
   * @param pods the pods it counts there (its phases, finished, not terminating, not being removed)
   * @param limit what it allows there: the namespace's fair share of the cluster's budget, or the tenant's cap
   * @param removable pods it may remove now (old enough, neither protected nor kept)
   * @param tooYoung pods it may remove once they are older than its minRetention
   * @param kept pods a keepLast rule keeps
   * @param protectedPods pods a protection holds (annotation on the pod or its namespace, mirror or static pods)
   */
  public record Use(FinishedPodBudget budget, String namespace, int pods, int limit, int removable, int tooYoung, int kept,
      int protectedPods) {
    public int excess() {
      return Math.max(0, pods - limit);
    }

    /** What stays over once every removable pod is gone: the budget cannot be held here now. */
    public int unremovable() {
      return Math.max(0, excess() - removable);
    }

    /** {@link #unremovable()} by reason: too young first (that passes), then kept, then protected. */
    public Map<String, Integer> unremovableBy() {
      int left = unremovable();
      Map<String, Integer> by = new LinkedHashMap<>();
      int young = Math.min(left, tooYoung);
      int keptNow = Math.min(left - young, kept);
      by.put(TOO_YOUNG, young);
      by.put(KEPT, keptNow);
      by.put(PROTECTED, left - young - keptNow);
      return by;
    }
  }

  /** The pods the cluster's budget counts, in every namespace. */
  public int clusterPods() {
    return uses.stream().filter(u -> u.budget().namespace().isEmpty()).mapToInt(Use::pods).sum();
  }

  /** True when every budget is, or will be once its removable pods are gone, within what it allows. */
  public boolean held() {
    return uses.stream().allMatch(u -> u.unremovable() == 0);
  }

  /**
   * A line per namespace where a budget cannot be held, e.g. "finishedPodBudget cannot be held in ci: 312 over its fair
   * share 1,250 once its removable pods are gone (300 too young, 12 protected)".
   */
  public List<String> notHeld() {
    List<String> lines = new ArrayList<>();
    for (Use u : uses) {
      if (u.unremovable() > 0) {
        List<String> why = new ArrayList<>();
        u.unremovableBy().forEach((reason, n) -> {
          if (n > 0) {
            why.add(BudgetLedger.number(n) + " " + reason.replace('-', ' '));
          }
        });
        lines.add(u.budget().name() + " cannot be held in " + u.namespace() + ": " + BudgetLedger.number(u.unremovable()) + " over "
            + (u.budget().namespace().isPresent() ? "its cap " : "its fair share ") + BudgetLedger.number(u.limit())
            + " once its removable pods are gone (" + String.join(", ", why) + ")");
      }
    }
    return lines;
  }
}
