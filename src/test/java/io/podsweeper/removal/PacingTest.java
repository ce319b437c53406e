package io.podsweeper.removal;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.policy.Limits;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** Waits for the rate and a request slot that give way, with time in the test's hands. */
class PacingTest {
  private long nanos = 1_000_000_000L;
  private int waits;
  private Runnable onWait = () -> {};

  private final Pacing.Waits fakeWaits = new Pacing.Waits() {
    @Override
    public void await(BooleanSupplier ready, long millis) {
      waits++;
      nanos += millis * 1_000_000;
      onWait.run();
    }

    @Override
    public void wake() {}
  };

  private Pacing pacing(double perSecond) {
    return new Pacing(new Limits(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(), perSecond), () -> nanos, fakeWaits);
  }

  @Test
  void theRateWaitsGiveUpTheMomentTheRemovalCanNoLongerGo() throws InterruptedException {
    Pacing pacing = pacing(0.1);
    assertThat(pacing.awaitTurn(() -> true)).as("the burst").isTrue();
    assertThat(pacing.awaitSend(() -> true)).as("the burst").isTrue();
    AtomicBoolean goes = new AtomicBoolean(true);
    onWait = () -> goes.set(false);

    assertThat(pacing.awaitTurn(goes::get)).isFalse();
    assertThat(waits).as("one slice, not the ten seconds the token takes").isEqualTo(1);
    goes.set(true);
    assertThat(pacing.awaitSend(goes::get)).isFalse();
    assertThat(waits).isEqualTo(2);
  }

  @Test
  void aRaisedRateAppliesToAWaitingRemovalAtOnce() throws InterruptedException {
    Pacing pacing = pacing(0.01);
    pacing.awaitTurn(() -> true);
    pacing.awaitSend(() -> true);
    onWait = () -> pacing.setRate(new Limits(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(), 100));

    assertThat(pacing.awaitTurn(() -> true)).isTrue();
    assertThat(pacing.awaitSend(() -> true)).isTrue();
    assertThat(nanos - 1_000_000_000L).as("waited not the 100 s that 0.01/s would take").isLessThan(100_000_000L);
  }

  @Test
  void aReloadGivesNoFreshBurst() throws InterruptedException {
    Pacing pacing = pacing(1);
    pacing.awaitTurn(() -> true);
    pacing.awaitSend(() -> true);
    pacing.setRate(new Limits(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(), 1));

    assertThat(pacing.awaitTurn(() -> false)).as("the spent turn stays spent").isFalse();
    assertThat(pacing.trySend()).as("the spent send stays spent").isFalse();
  }

  /** A removal takes one token of each bucket: its turn on the worker does not spend its request's turn, or the reverse. */
  @Test
  void aTurnAndASendAreSpentApart() throws InterruptedException {
    Pacing pacing = pacing(1);
    assertThat(pacing.awaitTurn(() -> true)).isTrue();
    assertThat(pacing.trySend()).isTrue();
    assertThat(pacing.trySend()).isFalse();
    assertThat(waits).isZero();
  }

  @Test
  void requestSlotsAreFewAndTheWaitForOneGivesWay() throws InterruptedException {
    Pacing pacing = pacing(1000);
    for (int i = 0; i < Pacing.MAX_IN_FLIGHT; i++) {
      assertThat(pacing.awaitSlot(() -> true)).isTrue();
    }
    AtomicBoolean goes = new AtomicBoolean(true);
    onWait = () -> goes.set(false);
    assertThat(pacing.awaitSlot(goes::get)).isFalse();

    pacing.releaseSlot();
    assertThat(pacing.awaitSlot(() -> true)).isTrue();
  }
}
