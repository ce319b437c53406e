package io.podsweeper.removal;

import io.podsweeper.policy.Guard;
import io.podsweeper.safety.BlastRadiusGuard;
import io.podsweeper.safety.GuardWindow;
import io.podsweeper.strategy.Decision;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;

/** A blast-radius guard of its own for the journal's tests, counted by hand (no ledger). */
final class PlainGuard implements JournaledGuard {
  private final BlastRadiusGuard guard = new BlastRadiusGuard(Guard.DEFAULTS);
  private final Clock clock;

  PlainGuard(Clock clock) {
    this.clock = clock;
  }

  void count(Decision d, Instant at) {
    guard.count(d.removal(), at);
  }

  void uncount(Decision d, Instant at) {
    guard.uncount(d.removal(), at);
  }

  GuardWindow window(Instant now) {
    return guard.window(now);
  }

  @Override
  public Optional<Ledger.GuardState> state() {
    return Optional.of(new Ledger.GuardState(guard.version(), guard.window(clock.instant())));
  }

  @Override
  public void restore(GuardWindow remembered) {
    guard.restore(remembered);
  }

  @Override
  public void absorb(GuardWindow added) {
    guard.absorb(added);
  }

  @Override
  public void reset() {
    guard.reset();
  }
}
