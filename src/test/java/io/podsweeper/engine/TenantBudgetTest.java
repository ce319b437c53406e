package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The teams' share of the evaluation thread, with time in the test's hands. */
class TenantBudgetTest {
  private long nanos;
  private final TenantBudget budget = new TenantBudget(() -> nanos);

  private void advance(Duration by) {
    nanos += by.toNanos();
  }

  @Test
  void aNamespaceOverItsShareWaitsForTheNextIntervalAndOthersDoNot() {
    assertThat(budget.waitFor("hostile")).isEmpty();
    budget.spend("hostile", TenantBudget.TOTAL.toNanos());
    advance(Duration.ofMillis(300));

    assertThat(budget.waitFor("hostile")).contains(Duration.ofMillis(700));
    assertThat(budget.waitFor("ordinary")).as("another namespace's share is its own").isEmpty();

    advance(Duration.ofMillis(700));
    assertThat(budget.waitFor("hostile")).as("a new interval").isEmpty();
  }

  @Test
  void theShareIsDividedAmongTheNamespacesThatAskedButNeverBelowTheFloor() {
    for (int i = 0; i < 10; i++) {
      budget.waitFor("ns-" + i);
      budget.spend("ns-" + i, 1);
    }
    advance(TenantBudget.INTERVAL);
    budget.waitFor("ns-0");
    assertThat(budget.share()).isEqualTo(TenantBudget.TOTAL.toNanos() / 10);

    for (int i = 0; i < 100; i++) {
      budget.waitFor("ns-" + i);
      budget.spend("ns-" + i, 1);
    }
    advance(TenantBudget.INTERVAL);
    budget.waitFor("ns-0");
    assertThat(budget.share()).isEqualTo(TenantBudget.FLOOR.toNanos());
  }
}
