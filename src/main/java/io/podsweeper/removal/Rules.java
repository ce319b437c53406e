package io.podsweeper.removal;

import io.podsweeper.policy.Policy;
import io.podsweeper.strategy.PolicyEvaluator;

/** The policy in force, numbered: what a decision was made under, and what the final check judges by. */
public record Rules(Policy policy, PolicyEvaluator evaluator, long generation) {}
