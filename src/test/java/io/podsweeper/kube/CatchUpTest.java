package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** When a resumed watch's store counts as caught up again: only once it has reached the fence read after the break. */
class CatchUpTest {
  private static final Duration PATIENCE = Duration.ofSeconds(5);
  private static final long SECOND = 1_000_000_000L;
  private final CatchUp catchUp = new CatchUp();

  @Test
  void aListIsCaughtUpByItself() {
    catchUp.listed("100");
    assertThat(catchUp.caughtUp()).isTrue();
  }

  @Test
  void aResumedWatchIsBehindUntilItHasAppliedTheFence() {
    catchUp.listed("100");
    int generation = catchUp.resumed(0);
    assertThat(catchUp.caughtUp()).as("no fence yet").isFalse();
    catchUp.applied("150", 0); // replayed before the fence arrives
    assertThat(catchUp.caughtUp()).isFalse();
    catchUp.fence(generation, "180", 0);
    assertThat(catchUp.caughtUp()).isFalse();
    catchUp.applied("179", 0);
    assertThat(catchUp.caughtUp()).isFalse();
    catchUp.applied("180", 0);
    assertThat(catchUp.caughtUp()).isTrue();
  }

  @Test
  void aFenceTheStoreHasAlreadyPassedIsReachedAtOnce() {
    catchUp.listed("100");
    int generation = catchUp.resumed(0);
    catchUp.fence(generation, "90", 0); // a quiet kind: the watch cache is where the store's last list was, or behind
    assertThat(catchUp.caughtUp()).isTrue();
  }

  /** Versions compare as the integers etcd writes, not as strings: "99" is not past "100". */
  @Test
  void versionsCompareAsNumbers() {
    catchUp.listed("99");
    int generation = catchUp.resumed(0);
    catchUp.fence(generation, "100", 0);
    assertThat(catchUp.caughtUp()).isFalse();
    catchUp.applied("100", 0);
    assertThat(catchUp.caughtUp()).isTrue();
  }

  /** The answer to an earlier restart's question was read before this break: it says nothing about it. */
  @Test
  void aFenceAskedForAnEarlierRestartIsNotTaken() {
    catchUp.listed("100");
    int first = catchUp.resumed(0);
    catchUp.resumed(0);
    catchUp.fence(first, "100", 0);
    assertThat(catchUp.caughtUp()).isFalse();
  }

  @Test
  void aWatchThatIsEndingIsBehindEvenPastItsLastFence() {
    catchUp.listed("100");
    catchUp.fence(catchUp.resumed(0), "100", 0);
    assertThat(catchUp.caughtUp()).isTrue();
    catchUp.ending();
    assertThat(catchUp.caughtUp()).isFalse();
    catchUp.listed("120");
    assertThat(catchUp.caughtUp()).isTrue();
  }

  /** A version that is not etcd's integer compares with nothing: never caught up by comparison, so listed again. */
  @Test
  void versionsThatDoNotCompareAreNeverReachedAndStall() {
    catchUp.listed("abc");
    int generation = catchUp.resumed(0);
    catchUp.fence(generation, "100", 0);
    catchUp.applied("200", 0);
    assertThat(catchUp.caughtUp()).as("the list's version did not compare, but the events' do").isTrue();

    generation = catchUp.resumed(0);
    catchUp.fence(generation, "x7", 0);
    catchUp.applied("300", 0);
    assertThat(catchUp.caughtUp()).isFalse();
    assertThat(catchUp.stalled(10 * SECOND, PATIENCE)).isTrue();
  }

  @Test
  void stalledOnlyWhenNothingCameCloserForThePatience() {
    catchUp.listed("100");
    int generation = catchUp.resumed(0);
    assertThat(catchUp.stalled(10 * SECOND, PATIENCE)).as("no fence known yet").isFalse();
    catchUp.fence(generation, "200", 1 * SECOND);
    assertThat(catchUp.stalled(5 * SECOND, PATIENCE)).isFalse();
    catchUp.applied("150", 5 * SECOND);
    assertThat(catchUp.stalled(9 * SECOND, PATIENCE)).as("an event came 4 s ago").isFalse();
    assertThat(catchUp.stalled(10 * SECOND, PATIENCE)).isTrue();
    catchUp.applied("200", 10 * SECOND);
    assertThat(catchUp.stalled(20 * SECOND, PATIENCE)).as("caught up").isFalse();
  }

  @Test
  void parsesOnlyNonNegativeDecimalIntegers() {
    assertThat(CatchUp.parse("0")).hasValue(0);
    assertThat(CatchUp.parse("123456789012")).hasValue(123456789012L);
    assertThat(CatchUp.parse(null)).isEmpty();
    assertThat(CatchUp.parse("")).isEmpty();
    assertThat(CatchUp.parse("-1")).isEmpty();
    assertThat(CatchUp.parse("1e3")).isEmpty();
    assertThat(CatchUp.parse("99999999999999999999")).isEmpty();
    assertThat(CatchUp.parse("9999999999999999999")).isEmpty(); // past Long.MAX_VALUE
  }
}
