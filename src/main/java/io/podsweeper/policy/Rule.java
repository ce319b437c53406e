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
 * @param ttlFrom if set, the rule selects only pods whose own lifetime is written on them or on their namespace, and
 *     removes each at the deadline written there (Podsweeper's own rules only)
 * @param match if set, a CEL expression over the pod that must be true for the rule to select it
 * @param endedBy if set, the pod must show one of these as why it ended ({@code PodRecord.endedBy}); Podsweeper's own
 *     rules only, always with a finished state (only a finished pod has ended)
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
    Set<RuleProtection> protections,
    Optional<TtlFrom> ttlFrom,
    Optional<PodMatch> match,
    Set<EndedBy> endedBy) {

  /**
   * Retention by count, for finished pods: of the pods this rule selects, the newest {@code keep} (by finish time)
   * of each owner (or of each namespace) stay, older ones go. Owners: the controller (a CronJob for the Jobs it
   * starts, recognised by their name), else the pod is grouped with the other bare pods of its namespace.
   */
  public record Retention(int keep, boolean perNamespace) {}

  /**
   * Per-pod lifetimes a rule honours.
   *
   * @param sources the keys read (a pod's own values win over its namespace's; of several, the earliest deadline)
   * @param minimum the shortest lifetime honoured: the cluster's minMaxAge for a PodCleanupPolicy's rule, zero for
   *     the policy file's; a shorter TTL or an earlier expiry is moved to this age, never before
   */
  public record TtlFrom(Set<TtlSource> sources, Duration minimum) {
    public TtlFrom {
      sources = Set.copyOf(sources);
    }
  }

  /** A rule without per-pod lifetimes: what every upstream format reads. */
  public Rule(String name, NamespaceFilter namespaces, LabelSelector namespaceSelector, LabelSelector podSelector, List<PodState> states,
      Optional<Duration> maxAge, Optional<Duration> maxAgeAfterFinish, List<ConditionFilter> conditions, Set<Integer> exitCodes,
      Set<String> ownerKindsInclude, Set<String> ownerKindsExclude, boolean includingInitContainers, boolean includingEphemeralContainers,
      Optional<Retention> retention, Set<RuleProtection> protections) {
    this(name, namespaces, namespaceSelector, podSelector, states, maxAge, maxAgeAfterFinish, conditions, exitCodes, ownerKindsInclude,
        ownerKindsExclude, includingInitContainers, includingEphemeralContainers, retention, protections, Optional.empty(), Optional.empty(),
        Set.of());
  }

  /** The same rule with per-pod lifetimes honoured no shorter than {@code minimum} (a PodCleanupPolicy's guard rail). */
  public Rule withTtlMinimum(Duration minimum) {
    return new Rule(name, namespaces, namespaceSelector, podSelector, states, maxAge, maxAgeAfterFinish, conditions, exitCodes,
        ownerKindsInclude, ownerKindsExclude, includingInitContainers, includingEphemeralContainers, retention, protections,
        ttlFrom.map(t -> new TtlFrom(t.sources(), minimum)), match, endedBy);
  }

  public Rule {
    states = List.copyOf(states);
    conditions = List.copyOf(conditions);
    exitCodes = Set.copyOf(exitCodes);
    ownerKindsInclude = Set.copyOf(ownerKindsInclude);
    ownerKindsExclude = Set.copyOf(ownerKindsExclude);
    protections = Set.copyOf(protections);
    endedBy = Set.copyOf(endedBy);
  }

  /** True if the rule names a state only finished pods carry: the explicit opt-in for terminated pods. */
  public boolean optsInToTerminated() {
    return states.stream().anyMatch(PodState::terminal);
  }
}
