package io.podsweeper.migration;

import io.podsweeper.kube.MigrationJobs.Condition;
import io.podsweeper.kube.MigrationJobs.Job;
import io.podsweeper.kube.MigrationJobs.ReservationState;
import io.podsweeper.policy.MigrationJobs.Mode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * What a PodMigrationJob needs next, as koord-descheduler's MigrationController decides it (its phases, reasons and
 * conditions; pkg/descheduler/controllers/migration/controller.go): a pure function of the job, its pod as cached
 * (empty if gone), its Reservation, whether the replacement that took the Reservation is Ready, and the time. The caller carries the step out; limits, kill switch and final
 * check are the gate's.
 */
final class MigrationJobSteps {
  static final String PENDING = "Pending";
  static final String RUNNING = "Running";
  static final String SUCCEEDED = "Succeeded";
  static final String FAILED = "Failed";

  static final String EVICTION = "Eviction";
  static final String RESERVATION_CREATED = "ReservationCreated";
  static final String RESERVATION_SCHEDULED = "ReservationScheduled";
  static final String POD_BOUND_RESERVATION = "PodBoundReservation";
  static final String RESERVATION_BOUND = "ReservationBound";
  static final String BOUND_POD_READY = "BoundPodReady";
  static final String WAIT_FOR_BOUND_POD_READY = "WaitForBoundPodReady";

  static final String EVICTING = "Evicting";
  static final String EVICT_COMPLETE = "EvictComplete";
  static final String FORBIDDEN = "ForbiddenMigratePod";

  enum Kind {
    /** Nothing to do: a finished or paused job, or one waiting (for its Reservation, for its pod to go). */
    WAIT,
    /** End the job Failed with the step's reason and message. */
    FAIL,
    /** Pending → Running (after the admission: protections, limits). */
    START,
    CREATE_RESERVATION,
    /** The Reservation is scheduled: condition ReservationScheduled, status.nodeName. */
    RESERVATION_SCHEDULED,
    /** Ask the gate to evict the pod now. */
    EVICT,
    /** The evicted pod is gone: condition Eviction True, EvictComplete. */
    EVICT_COMPLETE,
    /** ReservationFirst, evicted: waiting for the replacement to take the Reservation. */
    WAIT_FOR_BIND,
    /** The replacement took the Reservation: condition ReservationBound True, status.podRef. */
    RESERVATION_BOUND,
    /** The replacement took the Reservation but is not Ready yet: condition BoundPodReady False, WaitForBoundPodReady. */
    WAIT_FOR_READY,
    SUCCEED
  }

  /**
   * @param detail the Reservation's node for RESERVATION_SCHEDULED, the new pod (namespace/name) for RESERVATION_BOUND,
   *     WAIT_FOR_READY and a ReservationFirst SUCCEED
   */
  record Step(Kind kind, String reason, String message, String detail) {
    static Step of(Kind kind) {
      return new Step(kind, "", "", "");
    }

    static Step fail(String reason, String message) {
      return new Step(Kind.FAIL, reason, message, "");
    }
  }

  /** The pod a job names, as cached now. */
  record PodAt(String uid, String node) {}

  private MigrationJobSteps() {}

  /**
   * The jobs by phase, as {@code podsweeper_migration_jobs} shows them: Koordinator's five phases always (0 if none), a
   * job without a phase yet counted Pending as Koordinator treats it.
   */
  static Map<String, Long> byPhase(List<Job> jobs) {
    Map<String, Long> counts = new TreeMap<>();
    for (String phase : List.of(PENDING, RUNNING, SUCCEEDED, FAILED, "Aborted")) {
      counts.put(phase, 0L);
    }
    jobs.forEach(j -> counts.merge(j.phase().isEmpty() ? PENDING : j.phase(), 1L, Long::sum));
    return counts;
  }

  static boolean finished(Job job) {
    return !(job.phase().isEmpty() || job.phase().equals(PENDING) || job.phase().equals(RUNNING));
  }

  static Mode mode(Job job, Mode defaultMode) {
    return job.mode().orElse(defaultMode);
  }

  /**
   * @param reservation read only for a running ReservationFirst job that has one; empty otherwise
   * @param ready whether the pod (namespace/name) that took the Reservation is Ready; as in Koordinator, a pod that is
   *     gone counts as Ready
   */
  static Step next(Job job, Optional<PodAt> pod, Optional<ReservationState> reservation, Predicate<String> ready, Mode defaultMode,
      Instant now) {
    if (job.paused() || finished(job)) {
      return Step.of(Kind.WAIT);
    }
    Optional<Duration> ttl = job.ttl().filter(t -> !t.isZero());
    if (ttl.isPresent() && !now.isBefore(job.created().plus(ttl.get()))) {
      return Step.fail("Timeout", "Abort job caused by timeout");
    }
    if (job.podNamespace().isEmpty() || job.podName().isEmpty()) {
      return Step.fail("InvalidPodRef", "Abort job caused by invalid PodRef");
    }
    boolean sameUid = pod.isPresent() && (job.podUid().isEmpty() || job.podUid().equals(pod.get().uid()));
    Optional<Condition> eviction = job.condition(EVICTION);
    boolean evictComplete = eviction.filter(c -> c.status().equals("True")).isPresent();
    boolean evicting = eviction.filter(c -> c.reason().equals(EVICTING)).isPresent();
    if (!job.phase().equals(RUNNING)) {
      return sameUid ? Step.of(Kind.START) : missingPod(job);
    }
    if (evicting && !evictComplete) {
      return sameUid ? Step.of(Kind.WAIT) : Step.of(Kind.EVICT_COMPLETE);
    }
    boolean reservationFirst = mode(job, defaultMode) == Mode.RESERVATION_FIRST;
    if (evictComplete) {
      if (!reservationFirst) {
        return new Step(Kind.SUCCEED, "", "Pod \"" + job.podKey() + "\" has been evicted", "");
      }
      Optional<String> bound = reservation.flatMap(ReservationState::boundPod);
      if (bound.isEmpty()) {
        return Step.of(Kind.WAIT_FOR_BIND);
      }
      if (!conditionTrue(job, RESERVATION_BOUND)) {
        return new Step(Kind.RESERVATION_BOUND, "", "", bound.get());
      }
      if (!conditionTrue(job, BOUND_POD_READY) && !ready.test(bound.get())) {
        return new Step(Kind.WAIT_FOR_READY, "", "", bound.get());
      }
      return new Step(Kind.SUCCEED, "", "Bind Pod \"" + bound.get() + "\" in Reservation \"" + job.reservation().orElse("") + "\"", bound.get());
    }
    if (!sameUid) {
      return missingPod(job);
    }
    if (!reservationFirst) {
      return Step.of(Kind.EVICT);
    }
    if (job.reservation().isEmpty()) {
      return Step.of(Kind.CREATE_RESERVATION);
    }
    ReservationState r = reservation.orElseThrow();
    return switch (r.phase()) {
      case NOT_SERVED, MISSING -> Step.fail("MissingReservation", "Abort job caused by missing Reservation \"" + job.reservation().get() + "\"");
      case PENDING -> Step.of(Kind.WAIT);
      case UNSCHEDULABLE -> Step.fail("Unschedulable", r.message());
      case SCHEDULED -> {
        if (r.nodeName().equals(pod.get().node())) {
          yield Step.fail(FORBIDDEN, "Scheduler assignes the Reservation \"" + job.reservation().get() + "\" on the same node as the Pod");
        }
        yield conditionTrue(job, RESERVATION_SCHEDULED) ? Step.of(Kind.EVICT) : new Step(Kind.RESERVATION_SCHEDULED, "", "", r.nodeName());
      }
    };
  }

  static boolean conditionTrue(Job job, String type) {
    return job.condition(type).filter(c -> c.status().equals("True")).isPresent();
  }

  private static Step missingPod(Job job) {
    return Step.fail("MissingPod", "Abort job caused by missing Pod \"" + job.podKey() + "\"");
  }

  /** Whether a job still needs its Reservation read: running, ReservationFirst, with one named. */
  static boolean readsReservation(Job job, Mode defaultMode) {
    return job.phase().equals(RUNNING) && mode(job, defaultMode) == Mode.RESERVATION_FIRST && job.reservation().isPresent()
        && !job.paused();
  }
}
