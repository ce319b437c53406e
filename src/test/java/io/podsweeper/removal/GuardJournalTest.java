package io.podsweeper.removal;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.metrics.Metrics;
import io.podsweeper.safety.GuardWindowStore;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import io.podsweeper.testing.AnswerLostStore;
import io.podsweeper.testing.MemoryGuardWindowStore;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The window the cluster remembers goes into every guard that counts, once per term: not into none, not twice. And
 * the window is written only over what this term read or wrote, so two leaders' writes never overwrite each other.
 */
class GuardJournalTest {
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:30Z");
  private static final String REMEMBERED = "evict a 1767225610:2\n";
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

  private final MemoryGuardWindowStore store = new MemoryGuardWindowStore(REMEMBERED);
  private final GuardJournal journal = new GuardJournal(store, new Metrics(), () -> 0L);
  /** Nothing stored yet, and a way to lose the next write's answer. */
  private final MemoryGuardWindowStore memory = new MemoryGuardWindowStore();
  private final AnswerLostStore answerLost = new AnswerLostStore(memory);

  /**
   * A dry-run switch replaces the guard and forgets the term; a caller that read the guard just before reads the
   * window into the old one. The new guard must still read it before it counts, and only once.
   */
  @Test
  void aGuardReplacedWhileACallerHeldTheOldOneStillReadsTheWindowOnce() {
    PlainGuard old = new PlainGuard(CLOCK);
    assertThat(journal.takeOver(old)).isTrue();
    PlainGuard replaced = new PlainGuard(CLOCK);
    journal.forget();
    assertThat(journal.takeOver(old)).as("the caller that still held the old guard").isTrue();
    assertThat(journal.takeOver(replaced)).isTrue();
    assertThat(replaced.window(NOW).encode()).isEqualTo(REMEMBERED);
    replaced.count(eviction(), NOW);
    assertThat(journal.takeOver(old)).isTrue();
    assertThat(journal.takeOver(replaced)).isTrue();
    assertThat(replaced.window(NOW).encode()).as("read again, the window would drop the new count").isEqualTo("evict a 1767225610:2 1767225630:1\n");
  }

  /**
   * The old leader's write is on the wire when its lease runs out; the new leader reads the window, evicts and writes
   * it; then the old write arrives. It must not land: the next leader would take over a window without the new
   * leader's evictions. The old leader holds its removal and counts the new leader's.
   */
  @Test
  void aDeposedLeadersLateWriteLeavesTheNewLeadersWindow() throws Exception {
    PlainGuard oldGuard = new PlainGuard(CLOCK);
    assertThat(journal.takeOver(oldGuard)).isTrue();
    oldGuard.count(eviction(), NOW);
    CountDownLatch onTheWire = new CountDownLatch(1);
    CountDownLatch arrive = new CountDownLatch(1);
    store.beforeEachWrite(() -> {
      store.beforeEachWrite(() -> {});
      onTheWire.countDown();
      await(arrive);
    });
    CompletableFuture<Boolean> lateWrite = CompletableFuture.supplyAsync(() -> journal.persist(oldGuard));
    assertThat(onTheWire.await(5, TimeUnit.SECONDS)).isTrue();

    GuardJournal newLeader = new GuardJournal(store, new Metrics(), () -> 0L);
    PlainGuard newGuard = new PlainGuard(CLOCK);
    assertThat(newLeader.takeOver(newGuard)).isTrue();
    newGuard.count(eviction(), NOW);
    newGuard.count(eviction(), NOW);
    assertThat(newLeader.persist(newGuard)).isTrue();
    String newLeadersWindow = "evict a 1767225610:2 1767225630:2\n";
    assertThat(store.remembered()).isEqualTo(newLeadersWindow);

    arrive.countDown();
    assertThat(lateWrite.get(5, TimeUnit.SECONDS)).as("the old leader's removal is held").isFalse();
    assertThat(store.remembered()).isEqualTo(newLeadersWindow);
    assertThat(oldGuard.window(NOW).encode()).as("the old leader counts the new leader's evictions too")
        .isEqualTo("evict a 1767225610:2 1767225630:3\n");
  }

  /**
   * The other order: the old leader's write lands after the new leader read the window. The new leader's write then
   * finds the window changed; it counts what the old leader added (that removal may have gone) and writes both.
   */
  @Test
  void aNewLeaderCountsWhatALateWriteAddedBeforeItWrites() {
    GuardJournal newLeader = new GuardJournal(store, new Metrics(), () -> 0L);
    PlainGuard newGuard = new PlainGuard(CLOCK);
    assertThat(newLeader.takeOver(newGuard)).isTrue();
    store.writeAsAnotherReplica("evict a 1767225610:3\n");
    newGuard.count(eviction(), NOW);
    assertThat(newLeader.persist(newGuard)).as("held once, to count the other write").isFalse();
    assertThat(store.remembered()).isEqualTo("evict a 1767225610:3\n");
    assertThat(newLeader.persist(newGuard)).isTrue();
    assertThat(store.remembered()).isEqualTo("evict a 1767225610:3 1767225630:1\n");
  }

  /**
   * Another writer's window can read exactly as this one's would (times are remembered in 10 s buckets): still another
   * writer's, whose removal counts here too. Only the write's own name tells this replica's writes from others'.
   */
  @Test
  void anotherWritersWindowThatReadsTheSameIsStillCounted() {
    GuardJournal newLeader = new GuardJournal(store, new Metrics(), () -> 0L);
    PlainGuard guard = new PlainGuard(CLOCK);
    assertThat(newLeader.takeOver(guard)).isTrue();
    store.writeAsAnotherReplica("evict a 1767225610:2 1767225630:1\n"); // the deposed leader's eviction, its write late
    guard.count(eviction(), NOW); // this leader's eviction of another pod, in the same 10 s
    assertThat(newLeader.persist(guard)).as("held once, to count the other write").isFalse();
    assertThat(guard.window(NOW).encode()).isEqualTo("evict a 1767225610:2 1767225630:2\n");
  }

  /**
   * A write that landed although its answer was lost (a timeout; or the HTTP layer's retry of it refused) is this
   * replica's own, not another writer's: the next write goes over it without counting its removals twice.
   */
  @Test
  void aWriteWhoseAnswerWasLostIsNotCountedTwice() {
    GuardJournal journal = new GuardJournal(answerLost, new Metrics(), () -> 0L);
    PlainGuard guard = guardReadBy(journal);
    Decision first = eviction();
    guard.count(first, NOW);
    guard.count(eviction(), NOW);
    answerLost.loseTheNextAnswer();
    assertThat(journal.persist(guard)).as("no answer: the first removal is held").isFalse();
    guard.uncount(first, NOW);
    assertThat(journal.persist(guard)).isTrue();
    assertThat(guard.window(NOW).encode()).isEqualTo("evict a 1767225630:1\n");
    assertThat(memory.remembered()).isEqualTo("evict a 1767225630:1\n");
  }

  /**
   * Two writes in a row without an answer, the first landed and the second not: the stored window is still this
   * replica's own, and what it counted (a removal held, then given back) is not counted again.
   */
  @Test
  void twoWritesInARowWithoutAnAnswerAreBothKnownAsItsOwn() {
    GuardJournal journal = new GuardJournal(new GuardWindowStore() {
      @Override
      public Stored load() {
        return memory.load();
      }

      @Override
      public Optional<String> saveOver(String window, String version, String writeId) {
        if (window.contains(":2")) {
          throw new IllegalStateException("connection reset (never reached the server)");
        }
        return answerLost.saveOver(window, version, writeId);
      }
    }, new Metrics(), () -> 0L);
    PlainGuard guard = guardReadBy(journal);
    Decision first = eviction();
    guard.count(first, NOW);
    answerLost.loseTheNextAnswer();
    assertThat(journal.persist(guard)).as("landed, no answer").isFalse();
    guard.count(eviction(), NOW);
    assertThat(journal.persist(guard)).as("not sent at all").isFalse();
    guard.uncount(first, NOW);
    guard.uncount(first, NOW);
    guard.count(eviction(), NOW);
    assertThat(journal.persist(guard)).isTrue();
    assertThat(guard.window(NOW).encode()).isEqualTo("evict a 1767225630:1\n");
  }

  /**
   * A writer that writes the text only leaves the name of this replica's lost write on the stored window: the text
   * shows it is another writer's, whose removal counts here too.
   */
  @Test
  void aLostWritesNameLeftOnAnotherWritersWindowDoesNotMakeItItsOwn() {
    GuardJournal journal = new GuardJournal(answerLost, new Metrics(), () -> 0L);
    PlainGuard guard = guardReadBy(journal);
    guard.count(eviction(), NOW);
    answerLost.loseTheNextAnswer();
    assertThat(journal.persist(guard)).isFalse();
    memory.writeTextOnlyAsAnotherReplica("evict a 1767225610:1\n");
    assertThat(journal.persist(guard)).as("held once, to count the other write").isFalse();
    assertThat(guard.window(NOW).encode()).isEqualTo("evict a 1767225610:1 1767225630:1\n");
  }

  /** Writes that keep failing (a refusal, the server away, for hours) are not all remembered. */
  @Test
  void writesThatKeepFailingAreNotAllRemembered() {
    GuardJournal journal = new GuardJournal(new GuardWindowStore() {
      @Override
      public Stored load() {
        return Stored.NOTHING;
      }

      @Override
      public Optional<String> saveOver(String window, String version, String writeId) {
        throw new IllegalStateException("403 forbidden");
      }
    }, new Metrics(), () -> 0L);
    PlainGuard guard = guardReadBy(journal);
    for (int i = 0; i < 1000; i++) {
      guard.count(eviction(), NOW);
      assertThat(journal.persist(guard)).isFalse();
    }
    assertThat(journal.writesWithoutAnswer()).isLessThanOrEqualTo(8);
  }

  /** A term that ended while a removal waited writes nothing: the next term reads first. */
  @Test
  void aGuardNotReadThisTermWritesNothing() {
    PlainGuard guard = new PlainGuard(CLOCK);
    assertThat(journal.takeOver(guard)).isTrue();
    guard.count(eviction(), NOW);
    journal.forget();
    assertThat(journal.persist(guard)).isFalse();
    assertThat(store.remembered()).isEqualTo(REMEMBERED);
  }

  /** A resume on a leader that has not read the window yet clears it, over the version it read. */
  @Test
  void aResumeStartsTheRememberedWindowOver() {
    PlainGuard guard = new PlainGuard(CLOCK);
    assertThat(journal.startOver(guard)).isTrue();
    assertThat(store.remembered()).isEmpty();
    assertThat(guard.window(NOW)).isEqualTo(io.podsweeper.safety.GuardWindow.EMPTY);
  }

  private static PlainGuard guardReadBy(GuardJournal journal) {
    PlainGuard guard = new PlainGuard(CLOCK);
    assertThat(journal.takeOver(guard)).isTrue();
    return guard;
  }

  private static Decision eviction() {
    return new Decision("a", "p", "u", "1", "n", "PodLifeTime", "p", "r", Action.EVICT, "x", NOW, "");
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
