package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.strategy.PolicyEvaluator;
import org.junit.jupiter.api.Test;

/** {@code explain} tells operators how a refused eviction is retried: it must be what the gate does. */
class RefusalBackoffTest {
  @Test
  void explainSaysTheBackoffTheGateUses() {
    assertThat(PolicyEvaluator.REFUSAL_FIRST_BACKOFF).isEqualTo(RemovalGate.FIRST_BACKOFF);
    assertThat(PolicyEvaluator.REFUSAL_MAX_BACKOFF).isEqualTo(RemovalGate.MAX_BACKOFF);
  }
}
