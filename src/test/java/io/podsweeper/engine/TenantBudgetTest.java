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
  void aNamespaceThatOverspentWaitsUntilItHasPaidItBackAndOthersDoNot() {
    assertThat(budget.waitFor("hostile")).isEmpty();
    budget.spend("hostile", TenantBudget.TOTAL.toNanos());
    advance(Duration.ofMillis(300));

    // Its balance: 250 ms less 250 spent, plus 300 ms at 250 ms a second: 75 ms; but all teams' balance is as low.
    assertThat(budget.waitFor("hostile")).isEmpty();
    budget.spend("hostile", Duration.ofMillis(575).toNanos());
    // It owes 500 ms: two seconds at its share; another namespace's balance is its own, but all teams' is owed too.
    assertThat(budget.waitFor("hostile")).hasValueSatisfying(d -> assertThat(d).isBetween(Duration.ofMillis(1999), Duration.ofMillis(2001)));
    assertThat(budget.waitFor("ordinary")).hasValueSatisfying(d -> assertThat(d).isBetween(Duration.ofMillis(1999), Duration.ofMillis(2001)));

    advance(Duration.ofMillis(2001));
    assertThat(budget.waitFor("ordinary")).isEmpty();
  }

  /**
   * The finding: ten namespaces whose every judging costs 100 ms each began one per interval while the owed time was
   * forgotten at each interval, a second of judging per second. Now all of them together take at most the teams'
   * quarter, plus one judging.
   */
  @Test
  void costlyJudgingsTakeNoMoreThanTheTeamsQuarterOverTime() {
    long took = 0;
    for (int step = 0; step < 10_000; step++) {
      String ns = "ns-" + step % 10;
      if (budget.waitFor(ns).isEmpty()) {
        budget.spend(ns, Duration.ofMillis(100).toNanos());
        took += Duration.ofMillis(100).toNanos();
        advance(Duration.ofMillis(100));
      } else {
        advance(Duration.ofMillis(1));
      }
    }
    double seconds = nanos / 1e9;
    double quarter = TenantBudget.TOTAL.toNanos() / 1e9;
    // The quarter of the time, the balance full at the start, and the one judging that overspends it.
    assertThat(took / 1e9).isLessThanOrEqualTo(seconds * quarter + quarter + 0.1);
  }

  @Test
  void theShareIsDividedAmongTheNamespacesThatAskedButNeverBelowTheFloor() {
    for (int i = 0; i < 10; i++) {
      budget.waitFor("ns-" + i);
    }
    advance(TenantBudget.INTERVAL);
    budget.waitFor("ns-0");
    assertThat(budget.share()).isEqualTo(TenantBudget.TOTAL.toNanos() / 10);

    for (int i = 0; i < 100; i++) {
      budget.waitFor("ns-" + i);
    }
    advance(TenantBudget.INTERVAL);
    budget.waitFor("ns-0");
    assertThat(budget.share()).isEqualTo(TenantBudget.FLOOR.toNanos());
  }
}
