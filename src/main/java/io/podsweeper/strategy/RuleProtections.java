package io.podsweeper.strategy;

import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.EvictorArgs;
import io.podsweeper.policy.Rule;
import io.podsweeper.policy.RuleProtection;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** The protections of Podsweeper's own rules ({@link RuleProtection}) applied to a pod: whether one keeps it, and why. */
final class RuleProtections {
  /**
   * The priority classes of cluster add-ons, recognised by name too: a pod whose priority was never resolved from its
   * class (no Priority admission, a hand-written snapshot) is as critical.
   */
  private static final Set<String> SYSTEM_CRITICAL_CLASSES = Set.of("system-cluster-critical", "system-node-critical");

  private RuleProtections() {}

  /** True if a protection the rule keeps applies to the pod: the rule must leave it. */
  static boolean keeps(Rule rule, PodRecord pod) {
    // A finished pod holds nothing and is deleted, not evicted: removing it is garbage collection.
    if (pod.terminated()) {
      return false;
    }
    for (RuleProtection protection : rule.protections()) {
      if (applies(protection, pod)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Why the rule must leave the pod, e.g. "system-critical priority (system-cluster-critical); a rule evicts it only
   * with evict: [SystemCriticalPods]"; empty if it may remove it. The opt-in named is every protection that applies to
   * the pod, as a rule needs them all.
   */
  static Optional<String> protection(Rule rule, PodRecord pod) {
    if (!keeps(rule, pod)) {
      return Optional.empty();
    }
    List<String> kept = new ArrayList<>();
    List<String> optIn = new ArrayList<>();
    for (RuleProtection protection : RuleProtection.values()) {
      if (applies(protection, pod)) {
        optIn.add(protection.name());
        if (rule.protections().contains(protection)) {
          kept.add(describe(protection, pod));
        }
      }
    }
    return Optional.of(String.join(" and ", kept) + "; a rule evicts it only with evict: [" + String.join(", ", optIn) + "]");
  }

  private static boolean applies(RuleProtection protection, PodRecord pod) {
    // A pod annotated evictable gives up the DefaultEvictor's protections, as upstream's DefaultEvictor lets it; not the
    // scheduling gates' hold, which upstream never sees.
    boolean evictable = pod.annotations().containsKey(PodRecord.EVICT_ANNOTATION);
    return switch (protection) {
      case SystemCriticalPods -> !evictable && (pod.priority().orElse(Integer.MIN_VALUE) >= EvictorArgs.SYSTEM_CRITICAL_PRIORITY
          || SYSTEM_CRITICAL_CLASSES.contains(pod.priorityClassName()));
      case DaemonSetPods -> !evictable && ownedByDaemonSet(pod);
      case BarePods -> !evictable && !controlled(pod);
      case SchedulingGatedPods -> pod.gated();
    };
  }

  private static String describe(RuleProtection protection, PodRecord pod) {
    return switch (protection) {
      case SystemCriticalPods -> "system-critical priority (" + (SYSTEM_CRITICAL_CLASSES.contains(pod.priorityClassName())
          ? pod.priorityClassName() : "priority " + pod.priority().getAsInt()) + ")";
      case DaemonSetPods -> "a DaemonSet pod";
      case BarePods -> "a bare pod (no controller recreates it)";
      case SchedulingGatedPods -> PodFacts.held(pod) + " (held back on purpose, not stuck)";
    };
  }

  // Plain loops: these run for every pod a rule selects in every pass.
  private static boolean ownedByDaemonSet(PodRecord pod) {
    for (OwnerRef owner : pod.owners()) {
      if ("DaemonSet".equals(owner.kind())) {
        return true;
      }
    }
    return false;
  }

  private static boolean controlled(PodRecord pod) {
    for (OwnerRef owner : pod.owners()) {
      if (owner.controller()) {
        return true;
      }
    }
    return false;
  }
}
