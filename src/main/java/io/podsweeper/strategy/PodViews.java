package io.podsweeper.strategy;

import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.PodView;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/** The slim records as a match expression sees them ({@link PodView}); built only for a rule with match that got that far. */
final class PodViews {
  private static final PodView.Waiting NOT_WAITING = new PodView.Waiting("");
  private static final PodView.Terminated NOT_TERMINATED = new PodView.Terminated("", 0);
  private static final PodView.State NO_STATE = new PodView.State(NOT_WAITING, NOT_TERMINATED);

  private PodViews() {}

  static PodView.Pod pod(PodRecord pod) {
    List<PodView.ContainerStatus> main = new ArrayList<>();
    List<PodView.ContainerStatus> sidecars = new ArrayList<>();
    List<PodView.ContainerStatus> init = new ArrayList<>();
    for (ContainerStatus c : pod.containers()) {
      PodView.State state = new PodView.State(c.waitingReason().map(PodView.Waiting::new).orElse(NOT_WAITING),
          terminated(c.terminatedReason(), c.exitCode()));
      PodView.State last = c.lastTerminatedReason().isEmpty() && c.lastExitCode().isEmpty() ? NO_STATE
          : new PodView.State(NOT_WAITING, terminated(c.lastTerminatedReason(), c.lastExitCode()));
      PodView.ContainerStatus status = new PodView.ContainerStatus(c.name(), c.restartCount(), state, last, c.kind() == ContainerStatus.Kind.SIDECAR);
      switch (c.kind()) {
        case MAIN -> main.add(status);
        case SIDECAR -> sidecars.add(status);
        case INIT -> init.add(status);
        case EPHEMERAL -> { }
      }
    }
    main.addAll(sidecars);
    return new PodView.Pod(
        new PodView.Metadata(pod.name(), pod.namespace(), pod.labels(), pod.annotations(),
            pod.owners().stream().map(o -> new PodView.OwnerReference(o.kind(), o.name(), o.controller())).toList()),
        new PodView.Spec(pod.priority().orElse(0), pod.priorityClassName(), pod.nodeName(),
            pod.images().stream().map(PodView.Container::new).toList()),
        new PodView.Status(pod.phase(), pod.reason().orElse(""),
            pod.conditions().stream().map(c -> new PodView.Condition(c.type(), c.status(), c.reason().orElse(""))).toList(),
            main, init));
  }

  static PodView.Namespace namespace(NamespaceRecord namespace) {
    return new PodView.Namespace(namespace.name(), namespace.labels());
  }

  private static PodView.Terminated terminated(Optional<String> reason, OptionalInt exitCode) {
    return reason.isEmpty() && exitCode.isEmpty() ? NOT_TERMINATED : new PodView.Terminated(reason.orElse(""), exitCode.orElse(0));
  }
}
