package io.podsweeper.policy;

import java.util.Set;

/** RemoveDuplicates: at most an even share of one owner's identical pods per feasible node. */
public record RemoveDuplicatesArgs(NamespaceFilter namespaces, Set<String> excludeOwnerKinds) implements StrategyArgs {
  public static final String NAME = "RemoveDuplicates";

  public RemoveDuplicatesArgs {
    excludeOwnerKinds = Set.copyOf(excludeOwnerKinds);
  }

  @Override
  public String strategyName() {
    return NAME;
  }
}
