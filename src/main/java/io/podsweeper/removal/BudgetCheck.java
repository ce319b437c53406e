package io.podsweeper.removal;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.strategy.Decision;
import java.util.Optional;

/**
 * The finished-pod budget's last word on a removal it decided (strategy {@code FinishedPodBudget}): the scheduler keeps
 * the budget's ledger current with every pod event, and the final check asks it, as it asks the rules for a deadline.
 */
@FunctionalInterface
public interface BudgetCheck {
  /** Before the scheduler holds a budget: no budget removal may go. */
  BudgetCheck NONE = (decision, current) -> Optional.of("no finished-pod budget is held");

  /** Why removing {@code current} (the pod as the cache has it now) for the budget no longer holds; empty if it does. */
  Optional<String> refusal(Decision decision, PodRecord current);
}
