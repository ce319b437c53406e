package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.policy.Guard;
import io.podsweeper.safety.BlastRadiusGuard;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The window the cluster remembers goes into every guard that counts, once per term: not into none, not twice. */
class GuardJournalTest {
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:30Z");
  private static final String REMEMBERED = "evict a 1767225610:2\n";

  private final AtomicReference<String> remembered = new AtomicReference<>(REMEMBERED);
  private final GuardJournal journal = new GuardJournal(GuardWindowStore.of(() -> Optional.ofNullable(remembered.get()), remembered::set),
      Clock.fixed(NOW, ZoneOffset.UTC));

  /**
   * A dry-run switch replaces the guard and forgets the term; a caller that read the guard just before reads the
   * window into the old one. The new guard must still read it before it counts, and only once.
   */
  @Test
  void aGuardReplacedWhileACallerHeldTheOldOneStillReadsTheWindowOnce() {
    BlastRadiusGuard old = new BlastRadiusGuard(Guard.DEFAULTS);
    assertThat(journal.takeOver(old)).isTrue();
    BlastRadiusGuard replaced = new BlastRadiusGuard(Guard.DEFAULTS);
    journal.forget();
    assertThat(journal.takeOver(old)).as("the caller that still held the old guard").isTrue();
    assertThat(journal.takeOver(replaced)).isTrue();
    assertThat(replaced.window(NOW).encode()).isEqualTo(REMEMBERED);
    replaced.count(new Decision("a", "p", "u", "1", "n", "PodLifeTime", "p", "r", Action.EVICT, "x", NOW, ""), NOW);
    assertThat(journal.takeOver(old)).isTrue();
    assertThat(journal.takeOver(replaced)).isTrue();
    assertThat(replaced.window(NOW).encode()).as("read again, the window would drop the new count").isEqualTo("evict a 1767225610:2 1767225630:1\n");
  }
}
