package io.podsweeper.strategy;

import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.PodRecord;
import java.util.stream.Stream;

/**
 * Which container statuses a strategy looks at: the long-running ones (main containers and native sidecars), plus
 * ordinary init and ephemeral ones when asked ({@code includingInitContainers}, {@code includingEphemeralContainers}).
 */
final class Containers {
  private Containers() {}

  static Stream<ContainerStatus> of(PodRecord pod, boolean init, boolean ephemeral) {
    return pod.containers().stream().filter(c -> considered(c, init, ephemeral));
  }

  static boolean considered(ContainerStatus c, boolean init, boolean ephemeral) {
    return c.kind() == ContainerStatus.Kind.MAIN
        || c.kind() == ContainerStatus.Kind.SIDECAR
        || (init && c.kind() == ContainerStatus.Kind.INIT)
        || (ephemeral && c.kind() == ContainerStatus.Kind.EPHEMERAL);
  }
}
