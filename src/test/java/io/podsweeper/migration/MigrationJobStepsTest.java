package io.podsweeper.migration;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.migration.MigrationJobSteps.Kind;
import io.podsweeper.migration.MigrationJobSteps.PodAt;
import io.podsweeper.migration.MigrationJobSteps.Step;
import io.podsweeper.kube.MigrationJobs.Condition;
import io.podsweeper.kube.MigrationJobs.Job;
import io.podsweeper.kube.MigrationJobs.ReservationPhase;
import io.podsweeper.kube.MigrationJobs.ReservationState;
import io.podsweeper.policy.MigrationJobs.Mode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A PodMigrationJob's next step as koord-descheduler's MigrationController takes it: phases, reasons, conditions. */
class MigrationJobStepsTest {
  private static final Instant CREATED = Instant.parse("2026-01-01T12:00:00Z");
  private static final Instant NOW = CREATED.plusSeconds(30);
  private static final Optional<PodAt> POD = Optional.of(new PodAt("uid-1", "node-a"));

  private static Job job(String phase, Optional<Mode> mode, Optional<String> reservation, Condition... conditions) {
    return new Job("job", "job-uid", CREATED, false, Optional.of(Duration.ofMinutes(5)), mode, "ns", "web", "uid-1", phase,
        List.of(conditions), reservation, "", "", Optional.empty(), "", "", "", Optional.empty());
  }

  private static Step next(Job job, Optional<PodAt> pod, ReservationState reservation) {
    return MigrationJobSteps.next(job, pod, Optional.ofNullable(reservation), key -> false, Mode.RESERVATION_FIRST, NOW);
  }

  private static ReservationState reservation(ReservationPhase phase, String node) {
    return new ReservationState(phase, node, phase == ReservationPhase.UNSCHEDULABLE ? "0/3 nodes are available" : "", Optional.empty());
  }

  @Test
  void aPendingJobStartsIfItsPodIsThereAndFailsWithMissingPodIfNot() {
    assertThat(next(job("", Optional.empty(), Optional.empty()), POD, null).kind()).isEqualTo(Kind.START);
    assertThat(next(job("Pending", Optional.empty(), Optional.empty()), Optional.empty(), null))
        .isEqualTo(Step.fail("MissingPod", "Abort job caused by missing Pod \"ns/web\""));
    // Another pod of the same name (recreated) is not the job's pod.
    assertThat(next(job("Pending", Optional.empty(), Optional.empty()), Optional.of(new PodAt("uid-2", "node-a")), null).reason())
        .isEqualTo("MissingPod");
  }

  @Test
  void aJobPastItsTtlFailsWithTimeoutWhateverItWaitsFor() {
    Job job = job("Running", Optional.empty(), Optional.of("r"));
    assertThat(MigrationJobSteps.next(job, POD, Optional.of(reservation(ReservationPhase.PENDING, "")), key -> false, Mode.RESERVATION_FIRST,
        CREATED.plus(Duration.ofMinutes(5)))).isEqualTo(Step.fail("Timeout", "Abort job caused by timeout"));
  }

  @Test
  void pausedAndFinishedJobsAreLeftAlone() {
    Job paused = new Job("job", "job-uid", CREATED, true, Optional.empty(), Optional.empty(), "ns", "web", "", "", List.of(),
        Optional.empty(), "", "", Optional.empty(), "", "", "", Optional.empty());
    assertThat(next(paused, POD, null).kind()).isEqualTo(Kind.WAIT);
    for (String phase : List.of("Succeeded", "Failed", "Aborted")) {
      assertThat(next(job(phase, Optional.empty(), Optional.empty()), POD, null).kind()).isEqualTo(Kind.WAIT);
    }
  }

  @Test
  void evictDirectlyEvictsWaitsForThePodToGoThenSucceeds() {
    Optional<Mode> direct = Optional.of(Mode.EVICT_DIRECTLY);
    assertThat(next(job("Running", direct, Optional.empty()), POD, null).kind()).isEqualTo(Kind.EVICT);
    Condition evicting = new Condition("Eviction", "False", "Evicting");
    assertThat(next(job("Running", direct, Optional.empty(), evicting), POD, null).kind()).isEqualTo(Kind.WAIT);
    assertThat(next(job("Running", direct, Optional.empty(), evicting), Optional.empty(), null).kind()).isEqualTo(Kind.EVICT_COMPLETE);
    Step done = next(job("Running", direct, Optional.empty(), new Condition("Eviction", "True", "EvictComplete")), Optional.empty(), null);
    assertThat(done).isEqualTo(new Step(Kind.SUCCEED, "", "Pod \"ns/web\" has been evicted", ""));
  }

  @Test
  void reservationFirstEvictsOnlyOnceTheReservationIsScheduledOnAnotherNode() {
    assertThat(next(job("Running", Optional.empty(), Optional.empty()), POD, null).kind()).isEqualTo(Kind.CREATE_RESERVATION);
    Job waiting = job("Running", Optional.empty(), Optional.of("r"));
    assertThat(next(waiting, POD, reservation(ReservationPhase.PENDING, "")).kind()).isEqualTo(Kind.WAIT);
    assertThat(next(waiting, POD, reservation(ReservationPhase.SCHEDULED, "node-b")))
        .isEqualTo(new Step(Kind.RESERVATION_SCHEDULED, "", "", "node-b"));
    Job scheduled = job("Running", Optional.empty(), Optional.of("r"), new Condition("ReservationScheduled", "True", ""));
    assertThat(next(scheduled, POD, reservation(ReservationPhase.SCHEDULED, "node-b")).kind()).isEqualTo(Kind.EVICT);
    assertThat(next(waiting, POD, reservation(ReservationPhase.SCHEDULED, "node-a")).reason()).isEqualTo("ForbiddenMigratePod");
    assertThat(next(waiting, POD, reservation(ReservationPhase.UNSCHEDULABLE, "")))
        .isEqualTo(Step.fail("Unschedulable", "0/3 nodes are available"));
    assertThat(next(waiting, POD, reservation(ReservationPhase.MISSING, "")))
        .isEqualTo(Step.fail("MissingReservation", "Abort job caused by missing Reservation \"r\""));
  }

  /** As Koordinator: bound (ReservationBound, status.podRef), then BoundPodReady once the replacement is Ready, then done. */
  @Test
  void reservationFirstSucceedsOnlyOnceTheReplacementThatTookTheReservationIsReady() {
    Condition evictComplete = new Condition("Eviction", "True", "EvictComplete");
    Job evicted = job("Running", Optional.empty(), Optional.of("r"), evictComplete);
    assertThat(next(evicted, Optional.empty(), reservation(ReservationPhase.SCHEDULED, "node-b")).kind()).isEqualTo(Kind.WAIT_FOR_BIND);
    ReservationState bound = new ReservationState(ReservationPhase.SCHEDULED, "node-b", "", Optional.of("ns/web-2"));
    assertThat(next(evicted, Optional.empty(), bound)).isEqualTo(new Step(Kind.RESERVATION_BOUND, "", "", "ns/web-2"));
    Job boundJob = job("Running", Optional.empty(), Optional.of("r"), evictComplete, new Condition("ReservationBound", "True", ""));
    assertThat(next(boundJob, Optional.empty(), bound)).isEqualTo(new Step(Kind.WAIT_FOR_READY, "", "", "ns/web-2"));
    Step done = new Step(Kind.SUCCEED, "", "Bind Pod \"ns/web-2\" in Reservation \"r\"", "ns/web-2");
    assertThat(MigrationJobSteps.next(boundJob, Optional.empty(), Optional.of(bound), "ns/web-2"::equals, Mode.RESERVATION_FIRST, NOW))
        .isEqualTo(done);
    // Once BoundPodReady is True it is not asked again.
    Job ready = job("Running", Optional.empty(), Optional.of("r"), evictComplete, new Condition("ReservationBound", "True", ""),
        new Condition("BoundPodReady", "True", ""));
    assertThat(next(ready, Optional.empty(), bound)).isEqualTo(done);
    // A replacement never Ready: the TTL ends the job.
    assertThat(MigrationJobSteps.next(boundJob, Optional.empty(), Optional.of(bound), key -> false, Mode.RESERVATION_FIRST,
        CREATED.plus(Duration.ofMinutes(5)))).isEqualTo(Step.fail("Timeout", "Abort job caused by timeout"));
  }

  @Test
  void jobsAreCountedByPhaseWithKoordinatorsPhasesAlwaysShown() {
    assertThat(MigrationJobSteps.byPhase(List.of(job("", Optional.empty(), Optional.empty()), job("Running", Optional.empty(),
        Optional.empty()), job("Running", Optional.empty(), Optional.empty()))))
        .containsExactlyEntriesOf(new java.util.TreeMap<>(java.util.Map.of("Aborted", 0L, "Failed", 0L, "Pending", 1L, "Running", 2L,
            "Succeeded", 0L)));
  }
}
