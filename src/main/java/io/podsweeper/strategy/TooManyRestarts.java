package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.TooManyRestartsArgs;
import java.util.Comparator;
import java.util.Optional;

/**
 * Upstream's RemovePodsHavingTooManyRestarts. Finished pods are never its candidates: restarting them is not
 * possible, and removing them needs the explicit opt-in of a terminal state or RemoveFailedPods.
 */
public final class TooManyRestarts implements PodStrategy {
  public static final String NAME = "RemovePodsHavingTooManyRestarts";

  private final TooManyRestartsArgs args;
  private final String rule;

  public TooManyRestarts(TooManyRestartsArgs args, String rule) {
    this.args = args;
    this.rule = rule;
  }

  int restarts(PodRecord pod) {
    return Containers.of(pod, args.includingInitContainers(), false).mapToInt(ContainerStatus::restartCount).sum();
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Comparator<PodRecord> candidateOrder() {
    // Upstream: node by node, most restarts first.
    return Comparator.comparing(PodRecord::nodeName).thenComparing(Comparator.comparingInt(this::restarts).reversed())
        .thenComparing(PodRecord::key);
  }

  @Override
  public Optional<Verdict> evaluate(PodRecord pod, ClusterView view) {
    if (pod.terminated()
        || !args.namespaces().matches(pod.namespace())
        || !args.labelSelector().matches(pod.labels())) {
      return Optional.empty();
    }
    int restarts = restarts(pod);
    if (restarts < args.threshold()) {
      return Optional.empty();
    }
    if (!args.states().isEmpty()
        && !args.states().contains(pod.phase())
        && Containers.of(pod, args.includingInitContainers(), false)
            .noneMatch(c -> c.waitingReason().filter(args.states()::contains).isPresent())) {
      return Optional.empty();
    }
    return Optional.of(new Verdict(NAME, rule, pod.creationTimestamp(),
        now -> restarts + " restarts >= threshold " + args.threshold()));
  }
}
