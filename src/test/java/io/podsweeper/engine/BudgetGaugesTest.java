package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.NOW;
import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.cluster.PodFixtures.terminatedAt;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.strategy.BudgetUsage;
import io.podsweeper.strategy.PolicyEvaluator;
import io.prometheus.client.Collector.MetricFamilySamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The finished-pod budget's series: what the shipped alerts and docs/metrics.md name, with the ledger's figures. */
class BudgetGaugesTest {
  private static final Path PROJECT = Path.of(System.getProperty("podsweeper.projectDir", "."));
  private static final Pattern BUDGET_SERIES = Pattern.compile("\\bpodsweeper_finished_pod_budget_[a-z_]+\\b");

  private static PodRecord finished(String ns, String name, Duration ago) {
    return pod(name).ns(ns).phase("Succeeded").age(ago.plusMinutes(1)).containers(terminatedAt("main", "Completed", 0, NOW.minus(ago))).build();
  }

  /** ci: 14 pods finished 5 minutes ago (too young for minRetention 10m); quiet: 3 finished a day ago; budget 10. */
  private static BudgetUsage usage() {
    List<PodRecord> pods = new ArrayList<>();
    for (int i = 0; i < 14; i++) {
      pods.add(finished("ci", "ci-" + i, Duration.ofMinutes(5)));
    }
    for (int i = 0; i < 3; i++) {
      pods.add(finished("quiet", "quiet-" + i, Duration.ofDays(1)));
    }
    PolicyEvaluator evaluator = new PolicyEvaluator(PolicyLoader.parse("apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n"
        + "finishedPodBudget: {maxPods: 10, minRetention: 10m, phases: [Succeeded]}\n", "test"));
    return evaluator.budgetLedger(ClusterSnapshot.of(pods, List.of(), List.of())).orElseThrow().usage(NOW);
  }

  private static Map<String, Double> samples(List<MetricFamilySamples> families) {
    return families.stream().flatMap(f -> f.samples.stream())
        .collect(Collectors.toMap(s -> s.name + s.labelValues, s -> s.value));
  }

  @Test
  void theUsePerNamespaceAndTheClustersBudget() {
    Map<String, Double> samples = samples(BudgetGauges.of(Optional.of(usage())));
    assertThat(samples).containsEntry("podsweeper_finished_pod_budget_max_pods[finishedPodBudget]", 10.0)
        .containsEntry("podsweeper_finished_pod_budget_pods[finishedPodBudget, ci]", 14.0)
        .containsEntry("podsweeper_finished_pod_budget_limit[finishedPodBudget, ci]", 7.0)
        .containsEntry("podsweeper_finished_pod_budget_pods[finishedPodBudget, quiet]", 3.0)
        .containsEntry("podsweeper_finished_pod_budget_limit[finishedPodBudget, quiet]", 3.0)
        .containsEntry("podsweeper_finished_pod_budget_unremovable[finishedPodBudget, ci, too-young]", 7.0)
        .containsEntry("podsweeper_finished_pod_budget_unremovable[finishedPodBudget, ci, protected]", 0.0)
        .containsEntry("podsweeper_finished_pod_budget_unremovable[finishedPodBudget, quiet, too-young]", 0.0);
  }

  @Test
  void noSeriesWithoutABudget() {
    assertThat(BudgetGauges.of(Optional.empty())).isEmpty();
  }

  /** Exactly the series the alert rules and the metrics page name: none missing, none unannounced. */
  @Test
  void theSeriesAreThoseTheAlertsAndTheMetricsPageName() throws IOException {
    Set<String> exported = BudgetGauges.of(Optional.of(usage())).stream().map(f -> f.name).collect(Collectors.toSet());
    assertThat(named(PROJECT.resolve("manifests/monitoring/prometheusrule.yaml"))).isSubsetOf(exported);
    assertThat(named(PROJECT.resolve("docs/metrics.md"))).isEqualTo(exported);
  }

  private static Set<String> named(Path file) throws IOException {
    Set<String> names = new TreeSet<>();
    Matcher m = BUDGET_SERIES.matcher(Files.readString(file));
    while (m.find()) {
      names.add(m.group());
    }
    return names;
  }
}
