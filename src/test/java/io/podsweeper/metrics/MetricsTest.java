package io.podsweeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The upstream descheduler's series beside ours, with upstream's names and labels, for the dashboards that read them. */
class MetricsTest {
  private final Metrics metrics = new Metrics();

  private Double sample(String name, String[] labels, String[] values) {
    return metrics.registry().getSampleValue(name, labels, values);
  }

  @Test
  void buildInfoHasUpstreamsLabels() {
    assertThat(sample("descheduler_build_info", new String[] {"GoVersion", "AppVersion", "DeschedulerVersion", "GitBranch", "GitSha1"},
        new String[] {"", "dev", "dev", "", ""})).isEqualTo(1.0);
  }

  @Test
  void aFullPassIsUpstreamsLoopAndEachNodeAwareStrategyItsStrategyDuration() {
    metrics.fullPass(0.2);
    metrics.timeStrategy("default", "RemoveDuplicates", () -> {});
    assertThat(sample("descheduler_loop_duration_seconds_count", new String[0], new String[0])).isEqualTo(1.0);
    assertThat(sample("podsweeper_full_pass_duration_seconds_count", new String[0], new String[0])).isEqualTo(1.0);
    assertThat(sample("descheduler_strategy_duration_seconds_count", new String[] {"strategy", "profile"},
        new String[] {"RemoveDuplicates", "default"})).isEqualTo(1.0);
    assertThat(sample("descheduler_loop_duration_seconds_bucket", new String[] {"le"}, new String[] {"500.0"})).isEqualTo(1.0);
  }
}
