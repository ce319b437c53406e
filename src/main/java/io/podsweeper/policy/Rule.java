package io.podsweeper.policy;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A lifetime rule: which pods (namespaces, namespace labels, pod labels) and when they must go (an age, and/or
 * states). All set conditions must hold; {@code states} match if any one of them does.
 *
 * @param maxAge the pod goes once it is strictly older than this, counted from its creation
 * @param maxAgeAfterFinish the pod goes once it finished (latest container finishedAt) longer ago than this;
 *     only finished pods have such an age, so validation requires every state of the rule to be terminal
 */
public record Rule(
    String name,
    NamespaceFilter namespaces,
    LabelSelector namespaceSelector,
    LabelSelector podSelector,
    List<PodState> states,
    Optional<Duration> maxAge,
    Optional<Duration> maxAgeAfterFinish) {

  public Rule {
    states = List.copyOf(states);
  }

  /** True if the rule names a state only finished pods carry: the explicit opt-in for terminated pods. */
  public boolean optsInToTerminated() {
    return states.stream().anyMatch(PodState::terminal);
  }
}
