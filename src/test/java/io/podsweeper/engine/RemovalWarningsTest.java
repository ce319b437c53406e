package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.strategy.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Warnings before a removal: once per pod and deadline, only within the lead time, only by the leader; a warned pod that
 * is no longer to go then is told so once; a pod removed on time is not.
 */
class RemovalWarningsTest {
  private static final Instant T0 = Instant.parse("2026-06-30T12:00:00Z");
  private static final Duration LEAD = Duration.ofMinutes(10);
  private static final Instant DUE = T0.plus(Duration.ofMinutes(30));

  private final Metrics metrics = new Metrics();
  private final AtomicBoolean leading = new AtomicBoolean(true);
  private final RemovalWarnings warnings = new RemovalWarnings(metrics, leading::get);
  private final List<String> events = new ArrayList<>();
  private final PodRecord pod = pod("web-1").uid("u1").build();

  RemovalWarningsTest() {
    warnings.sendTo((p, reason, message) -> events.add(p.name() + " " + reason + ": " + message));
  }

  private static Optional<Verdict> dueAt(Instant at) {
    return Optional.of(new Verdict("PodLifeTime", "old-pods", at, now -> "older than 1h"));
  }

  private double counted(String kind) {
    Double v = metrics.registry().getSampleValue("podsweeper_removal_warnings_total", new String[] {"kind"}, new String[] {kind});
    return v == null ? 0 : v;
  }

  @Test
  void warnsOnceWhenTheDeadlineComesWithinTheLeadTime() {
    assertThat(RemovalWarnings.warnAt(dueAt(DUE).get(), LEAD, T0)).contains(DUE.minus(LEAD));
    warnings.check(pod, dueAt(DUE), LEAD, false, T0);
    assertThat(events).isEmpty();

    Instant at = DUE.minus(LEAD);
    assertThat(RemovalWarnings.warnAt(dueAt(DUE).get(), LEAD, at)).isEmpty();
    warnings.check(pod, dueAt(DUE), LEAD, false, at);
    warnings.check(pod, dueAt(DUE), LEAD, false, at.plusSeconds(60));
    assertThat(events).containsExactly("web-1 PodSweeperRemovalScheduled: to be evicted at 2026-06-30T12:30:00Z (in 10m) by PodLifeTime"
        + " rule old-pods: older than 1h; annotate it podsweeper.io/protect=true to keep it");
    assertThat(counted("scheduled")).isEqualTo(1.0);

    // Removed on time: nothing more to say.
    warnings.check(pod, dueAt(DUE), LEAD, false, DUE);
    assertThat(events).hasSize(1);
    assertThat(counted("canceled")).isZero();
  }

  @Test
  void aPodProtectedOrPostponedAfterItsWarningIsToldOnce() {
    Instant at = DUE.minus(Duration.ofMinutes(5));
    warnings.check(pod, dueAt(DUE), LEAD, false, at);
    warnings.check(pod, Optional.empty(), LEAD, false, at.plusSeconds(1));
    warnings.check(pod, Optional.empty(), LEAD, false, at.plusSeconds(2));
    assertThat(events).hasSize(2).last().asString().isEqualTo("web-1 PodSweeperRemovalCanceled: the eviction announced for"
        + " 2026-06-30T12:30:00Z (rule old-pods) is off: no rule wants it as it is now");

    // Warned again when due again; a deadline moved past the lead time is off, with the new one named.
    warnings.check(pod, dueAt(DUE), LEAD, false, at.plusSeconds(3));
    warnings.check(pod, dueAt(DUE.plus(Duration.ofHours(1))), LEAD, false, at.plusSeconds(4));
    assertThat(events).hasSize(4).last().asString().endsWith("is off: now due at 2026-06-30T13:30:00Z (rule old-pods)");
    // A deadline moved within the lead time is a new warning.
    warnings.check(pod, dueAt(DUE.plusSeconds(60)), LEAD, false, at.plusSeconds(5));
    assertThat(events).hasSize(5).last().asString().contains("PodSweeperRemovalScheduled: to be evicted at 2026-06-30T12:31:00Z");
    assertThat(counted("scheduled")).isEqualTo(3.0);
    assertThat(counted("canceled")).isEqualTo(2.0);
  }

  @Test
  void aNewPodUnderTheNameIsNotToldAboutTheOldOnesWarning() {
    Instant at = DUE.minus(Duration.ofMinutes(5));
    warnings.check(pod, dueAt(DUE), LEAD, false, at);
    warnings.check(pod("web-1").uid("u2").build(), Optional.empty(), LEAD, false, at.plusSeconds(1));
    warnings.forget(pod);
    warnings.check(pod, Optional.empty(), LEAD, false, at.plusSeconds(2));
    assertThat(events).hasSize(1);
  }

  @Test
  void onlyTheLeaderWarnsAndNothingWithoutALeadTime() {
    Instant at = DUE.minus(Duration.ofMinutes(5));
    warnings.check(pod, dueAt(DUE), Duration.ZERO, false, at);
    assertThat(RemovalWarnings.warnAt(dueAt(DUE).get(), Duration.ZERO, T0)).isEmpty();
    leading.set(false);
    warnings.check(pod, dueAt(DUE), LEAD, false, at);
    assertThat(events).isEmpty();
    // A new leader warns, whoever warned before.
    leading.set(true);
    PodRecord finished = pod("job-1").uid("u3").phase("Succeeded").build();
    warnings.check(finished, dueAt(DUE), LEAD, true, at);
    assertThat(events).singleElement().asString().startsWith("job-1 PodSweeperRemovalScheduled: dry-run: would be deleted at");
  }
}
