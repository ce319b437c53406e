package io.podsweeper.policy;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A lifetime rule: which pods (namespaces, namespace labels, pod labels, owner kinds) and when they must go (an
 * age, states, conditions, exit codes). All set conditions must hold; within {@code states}, {@code conditions} and
 * {@code exitCodes}, any one entry is enough. Upstream PodLifeTime arguments become one such rule.
 *
 * @param maxAge the pod goes once it is strictly older than this, counted from its creation
 * @param maxAgeAfterFinish the pod goes once it finished (PodRecord.finish: latest container finishedAt, or the
 *     evidence a disrupted pod leaves) longer ago than this; only finished pods have such an age, so validation
 *     requires every state of the rule to be terminal
 * @param ownerKindsInclude if set, some ownerReference must be of one of these kinds
 * @param ownerKindsExclude no ownerReference may be of one of these kinds
 * @param protections the pods the rule never evicts while they run or wait: for Podsweeper's own rules, every
 *     {@link RuleProtection} their {@code evict} list does not name; none for rules read from upstream formats,
 *     whose profile's evictor protects pods instead
 */
public record Rule(
    String name,
    NamespaceFilter namespaces,
    LabelSelector namespaceSelector,
    LabelSelector podSelector,
    List<PodState> states,
    Optional<Duration> maxAge,
    Optional<Duration> maxAgeAfterFinish,
    List<ConditionFilter> conditions,
    Set<Integer> exitCodes,
    Set<String> ownerKindsInclude,
    Set<String> ownerKindsExclude,
    boolean includingInitContainers,
    boolean includingEphemeralContainers,
    Optional<Retention> retention,
    Set<RuleProtection> protections) {

  /**
   * Retention by count, for finished pods: of the pods this rule selects, the newest {@code keep} (by finish time)
   * of each owner (or of each namespace) stay, older ones go. Owners: the controller (a CronJob for the Jobs it
   * starts, recognised by their name), else the pod is grouped with the other bare pods of its namespace.
   */
  public record Retention(int keep, boolean perNamespace) {}

  public Rule {
    states = List.copyOf(states);
    conditions = List.copyOf(conditions);
    exitCodes = Set.copyOf(exitCodes);
    ownerKindsInclude = Set.copyOf(ownerKindsInclude);
    ownerKindsExclude = Set.copyOf(ownerKindsExclude);
    protections = Set.copyOf(protections);
  }

  /** True if the rule names a state only finished pods carry: the explicit opt-in for terminated pods. */
  public boolean optsInToTerminated() {
    return states.stream().anyMatch(PodState::terminal);
  }
}
