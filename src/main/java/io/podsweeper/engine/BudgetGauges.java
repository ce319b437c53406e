package io.podsweeper.engine;

import io.podsweeper.strategy.BudgetUsage;
import io.prometheus.client.Collector;
import io.prometheus.client.Collector.MetricFamilySamples;
import io.prometheus.client.Collector.MetricFamilySamples.Sample;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The finished-pod budget's use as Prometheus series (docs/metrics.md), read at scrape time from one {@link BudgetUsage}:
 * what the alerts {@code PodsweeperFinishedPodBudgetNearlyReached} and {@code PodsweeperFinishedPodBudgetCannotBeHeld}
 * (manifests/monitoring) are made of. No series while the policy sets no budget.
 */
final class BudgetGauges {
  static final String MAX_PODS = "podsweeper_finished_pod_budget_max_pods";
  static final String PODS = "podsweeper_finished_pod_budget_pods";
  static final String LIMIT = "podsweeper_finished_pod_budget_limit";
  static final String UNREMOVABLE = "podsweeper_finished_pod_budget_unremovable";

  private BudgetGauges() {}

  static List<MetricFamilySamples> of(Optional<BudgetUsage> usage) {
    if (usage.isEmpty()) {
      return List.of();
    }
    List<Sample> maxPods = new ArrayList<>();
    List<Sample> pods = new ArrayList<>();
    List<Sample> limits = new ArrayList<>();
    List<Sample> unremovable = new ArrayList<>();
    usage.get().cluster().ifPresent(b -> maxPods.add(new Sample(MAX_PODS, List.of("budget"), List.of(b.name()), b.maxPods())));
    for (BudgetUsage.Use u : usage.get().uses()) {
      List<String> labels = List.of(u.budget().name(), u.namespace());
      if (u.budget().namespace().isPresent()) {
        maxPods.add(new Sample(MAX_PODS, List.of("budget"), List.of(u.budget().name()), u.budget().maxPods()));
      }
      pods.add(new Sample(PODS, List.of("budget", "namespace"), labels, u.pods()));
      limits.add(new Sample(LIMIT, List.of("budget", "namespace"), labels, u.limit()));
      u.unremovableBy().forEach((reason, n) -> unremovable.add(new Sample(UNREMOVABLE, List.of("budget", "namespace", "reason"),
          List.of(u.budget().name(), u.namespace(), reason), n)));
    }
    return List.of(
        new MetricFamilySamples(MAX_PODS, Collector.Type.GAUGE, "The finished-pod budget's maxPods.", maxPods),
        new MetricFamilySamples(PODS, Collector.Type.GAUGE,
            "Finished pods the budget counts in the namespace (its phases, not terminating, not being removed).", pods),
        new MetricFamilySamples(LIMIT, Collector.Type.GAUGE,
            "What the budget allows in the namespace: its fair share of the cluster's budget, or the team's cap.", limits),
        new MetricFamilySamples(UNREMOVABLE, Collector.Type.GAUGE,
            "Of what is over the budget's limit in the namespace, the pods it cannot remove now, by reason.", unremovable));
  }
}
