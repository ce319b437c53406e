package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.podsweeper.kube.MigrationJobs.ReservationPhase;
import com.fasterxml.jackson.databind.JsonNode;
import io.podsweeper.policy.MigrationJobs.DeleteOptions;
import io.podsweeper.policy.MigrationJobs.EvictionPolicy;
import io.podsweeper.policy.MigrationJobs.Mode;
import java.time.Duration;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** Koordinator's objects as read and written: a job's fields, a Reservation's verdict, Go durations. */
class MigrationJobsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aJobIsReadWithKoordinatorsFieldNames() throws Exception {
    MigrationJobs.Job job = MigrationJobs.job(JSON.readTree("""
        {"metadata": {"name": "j", "uid": "u", "creationTimestamp": "2026-01-01T12:00:00Z",
                      "labels": {"koordinator.sh/evict-policy": "Delete"},
                      "annotations": {"koordinator.sh/evict-reason": "hot node", "koordinator.sh/evict-trigger": "LowNodeLoad"}},
         "spec": {"ttl": "5m0s", "mode": "EvictDirectly", "podRef": {"namespace": "ns", "name": "web"},
                  "reservationOptions": {"reservationRef": {"name": "r"}},
                  "deleteOptions": {"gracePeriodSeconds": 0, "preconditions": {"uid": "other"}}},
         "status": {"phase": "Running", "conditions": [{"type": "Eviction", "status": "False", "reason": "Evicting"}]}}
        """));
    assertThat(job.ttl()).hasValue(Duration.ofMinutes(5));
    assertThat(job.mode()).hasValue(Mode.EVICT_DIRECTLY);
    assertThat(job.podKey()).isEqualTo("ns/web");
    assertThat(job.podUid()).isEmpty();
    assertThat(job.reservation()).hasValue("r");
    assertThat(job.evictPolicyLabel()).hasValue(EvictionPolicy.DELETE);
    assertThat(job.evictTrigger()).isEqualTo("LowNodeLoad");
    assertThat(job.condition("Eviction")).hasValue(new MigrationJobs.Condition("Eviction", "False", "Evicting"));
    assertThat(job.createdBy()).isEmpty();
    assertThat(job.deleteOptions()).hasValue(new DeleteOptions(OptionalLong.of(0), Optional.empty()));
  }

  /** A job's delete options go with its request: its grace period over the policy's, never its own preconditions. */
  @Test
  void aJobsDeleteOptionsGoWithTheRequestButThePreconditionsAreAlwaysTheDecisions() {
    Decision d = new Decision("ns", "web", "uid-1", "42", "node-a", "PodLifeTime", "p", "r", Action.EVICT, "old", Instant.EPOCH,
        "");
    JsonNode plain = PodRemover.deleteOptions(d, OptionalLong.of(30), Optional.empty());
    assertThat(plain.path("gracePeriodSeconds").asLong()).isEqualTo(30);
    JsonNode job = PodRemover.deleteOptions(d, OptionalLong.of(30), Optional.of(new DeleteOptions(OptionalLong.of(0), Optional.of("Orphan"))));
    assertThat(job.path("gracePeriodSeconds").asLong()).isZero();
    assertThat(job.path("propagationPolicy").asText()).isEqualTo("Orphan");
    assertThat(job.path("preconditions").toString()).isEqualTo("{\"uid\":\"uid-1\",\"resourceVersion\":\"42\"}");
    // Options without a grace period leave the policy's.
    assertThat(PodRemover.deleteOptions(d, OptionalLong.of(30), Optional.of(new DeleteOptions(OptionalLong.empty(), Optional.empty())))
        .path("gracePeriodSeconds").asLong()).isEqualTo(30);
  }

  /** Scheduled as koord-descheduler judges it: a node and condition Scheduled True (reason Scheduled); pending without a phase. */
  @Test
  void aReservationIsScheduledOnlyWithANodeAndItsScheduledCondition() throws Exception {
    assertThat(MigrationJobs.reservationState(JSON.readTree("{}")).phase()).isEqualTo(ReservationPhase.PENDING);
    assertThat(MigrationJobs.reservationState(JSON.readTree("""
        {"phase": "Available", "nodeName": "n", "conditions": [{"type": "Scheduled", "status": "True", "reason": "Scheduled"}],
         "currentOwners": [{"namespace": "ns", "name": "web-2"}]}
        """))).isEqualTo(new MigrationJobs.ReservationState(ReservationPhase.SCHEDULED, "n", "", Optional.of("ns/web-2")));
    assertThat(MigrationJobs.reservationState(JSON.readTree("""
        {"phase": "Failed", "conditions": [{"type": "Scheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes"}]}
        """))).isEqualTo(new MigrationJobs.ReservationState(ReservationPhase.UNSCHEDULABLE, "", "0/3 nodes", Optional.empty()));
  }

  @Test
  void durationsAreWrittenAsGoWritesThem() {
    assertThat(MigrationJobs.goDuration(Duration.ofMinutes(5))).isEqualTo("5m0s");
    assertThat(MigrationJobs.goDuration(Duration.ofSeconds(90))).isEqualTo("1m30s");
    assertThat(MigrationJobs.goDuration(Duration.ofHours(2))).isEqualTo("2h0m0s");
    assertThat(MigrationJobs.goDuration(Duration.ofSeconds(7))).isEqualTo("7s");
  }
}
