package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.RemoveFailedPodsArgs;
import java.time.Instant;
import java.util.Comparator;
import java.util.Optional;
import java.util.stream.Stream;

/** Upstream's RemoveFailedPods: Failed pods old enough, optionally with given reasons or exit codes. */
public final class RemoveFailedPods implements PodStrategy {
  public static final String NAME = "RemoveFailedPods";

  private final RemoveFailedPodsArgs args;
  private final String rule;

  public RemoveFailedPods(RemoveFailedPodsArgs args, String rule) {
    this.args = args;
    this.rule = rule;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Comparator<PodRecord> candidateOrder() {
    // Upstream does not sort: pods come node by node, in listing order.
    return Comparator.comparing(PodRecord::nodeName).thenComparing(PodRecord::key);
  }

  @Override
  public Optional<Verdict> evaluate(PodRecord pod, ClusterView view) {
    if (!"Failed".equals(pod.phase())
        || !args.namespaces().matches(pod.namespace())
        || !args.labelSelector().matches(pod.labels())
        || pod.owners().stream().map(OwnerRef::kind).anyMatch(args.excludeOwnerKinds()::contains)) {
      return Optional.empty();
    }
    String matched = "Failed";
    if (!args.reasons().isEmpty()) {
      Optional<String> reason = Stream.concat(
              pod.reason().stream(),
              Containers.of(pod, args.includingInitContainers(), false)
                  .flatMap(c -> Stream.concat(c.waitingReason().stream(), c.terminatedReason().stream())))
          .filter(args.reasons()::contains)
          .findFirst();
      if (reason.isEmpty()) {
        return Optional.empty();
      }
      matched += " (" + reason.get() + ")";
    }
    if (!args.exitCodes().isEmpty()) {
      Optional<ContainerStatus> exited = Containers.of(pod, args.includingInitContainers(), false)
          .filter(c -> c.exitCode().isPresent() && args.exitCodes().contains(c.exitCode().getAsInt()))
          .findFirst();
      if (exited.isEmpty()) {
        return Optional.empty();
      }
      matched += ", " + PodFacts.container(exited.get()) + " exited " + exited.get().exitCode().getAsInt();
    }
    Optional<String> ended = PodFacts.ended(pod);
    if (ended.isPresent()) {
      matched += ", " + ended.get();
    }
    // "At least minPodLifetimeSeconds old" is inclusive; isDue is strict, hence one nanosecond earlier.
    Instant due = pod.creationTimestamp().plus(args.minPodLifetime()).minusNanos(1);
    String what = matched;
    return Optional.of(new Verdict(NAME, rule, due, now -> what + ", age " + PodLifeTime.ago(pod.creationTimestamp(), now)
        + " >= minPodLifetime " + Durations.format(args.minPodLifetime())));
  }
}
