package io.podsweeper.policy;

import java.util.List;

/** PodLifeTime: Podsweeper's own rules, or one upstream PodLifeTime plugin's arguments as a single rule. */
public record PodLifeTimeArgs(List<Rule> rules) implements StrategyArgs {
  public PodLifeTimeArgs {
    rules = List.copyOf(rules);
  }

  @Override
  public String strategyName() {
    return "PodLifeTime";
  }
}
