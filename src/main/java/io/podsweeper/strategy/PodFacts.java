package io.podsweeper.strategy;

import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.EndedBy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How reasons and {@code explain} describe a pod as today's Kubernetes makes it: held by scheduling gates, running
 * native sidecars, or ended by one of the cluster's evictors. One wording, wherever a pod is described.
 */
final class PodFacts {
  private PodFacts() {}

  /** What a pod's phase says of it: "Pending: held by scheduling gates …", "Pending with no node", or the phase. */
  static String describe(PodRecord pod) {
    if (pod.gated()) {
      return "Pending: " + held(pod);
    }
    if ("Pending".equals(pod.phase()) && !pod.scheduled()) {
      return "Pending with no node";
    }
    return pod.phase();
  }

  /** "held by scheduling gates a, b", for a gated pod (one gate too: the field's name, as issue 37 asked it said). */
  static String held(PodRecord pod) {
    return "held by scheduling gates " + String.join(", ", pod.schedulingGates());
  }

  /** A container status by its kind: "container app", "sidecar istio-proxy", "init container setup", "ephemeral container debug". */
  static String container(ContainerStatus c) {
    return switch (c.kind()) {
      case MAIN -> "container " + c.name();
      case SIDECAR -> "sidecar " + c.name();
      case INIT -> "init container " + c.name();
      case EPHEMERAL -> "ephemeral container " + c.name();
    };
  }

  /** "ended by KubeletEviction and TerminationByKubelet", for a pod that shows why it ended; for reasons. */
  static Optional<String> ended(PodRecord pod) {
    Set<EndedBy> endedBy = pod.endedBy();
    return endedBy.isEmpty() ? Optional.empty()
        : Optional.of("ended by " + endedBy.stream().map(Enum::name).collect(Collectors.joining(" and ")));
  }

  /** The lines {@code explain} starts with, one per fact of this kind the pod shows; none for most pods. */
  static List<String> explain(PodRecord pod) {
    List<String> lines = new ArrayList<>();
    if (pod.gated()) {
      lines.add("pod: Pending, " + held(pod) + " (spec.schedulingGates): held back on purpose, not stuck; a rule removes it only with"
          + " evict: [SchedulingGatedPods], and counts its age from its creation, as it has been held since");
    }
    List<String> sidecars = pod.containers().stream().filter(c -> c.kind() == ContainerStatus.Kind.SIDECAR).map(ContainerStatus::name).toList();
    if (!sidecars.isEmpty()) {
      lines.add("pod: native sidecar" + (sidecars.size() == 1 ? " " + sidecars.get(0) + " (an init container" : "s "
          + String.join(", ", sidecars) + " (init containers") + " with restartPolicy Always): counted as a long-running container,"
          + " for states and restarts alike");
    }
    Set<EndedBy> endedBy = pod.endedBy();
    if (!endedBy.isEmpty()) {
      lines.add("pod: " + endedBy.stream().map(e -> "endedBy " + e.name() + ": " + e.description()).collect(Collectors.joining("; ")));
    }
    return lines;
  }
}
