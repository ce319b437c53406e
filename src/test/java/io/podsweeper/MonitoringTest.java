package io.podsweeper;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.podsweeper.metrics.Metrics;
import io.prometheus.client.Collector;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped alerts ({@code manifests/monitoring/prometheusrule.yaml}) and dashboard
 * ({@code grafana-dashboard.json}): well-formed, and naming only series the service exports. With promtool (from
 * {@code scripts/install-promtool.sh}) the rules are also checked and unit-tested by Prometheus itself.
 */
class MonitoringTest {
  private static final Path MONITORING = Path.of(System.getProperty("podsweeper.projectDir", ".")).resolve("manifests/monitoring");
  private static final YAMLMapper YAML = new YAMLMapper();
  /** Series announced for leader election, the kill switch and the blast-radius guard (being added). */
  private static final Set<String> ANNOUNCED = Set.of("podsweeper_leader", "podsweeper_paused", "podsweeper_guard_tripped");
  private static final Pattern SERIES = Pattern.compile("\\b((?:podsweeper|descheduler|jvm|process)_[a-z_]+)\\b");
  private static final Pattern DURATION = Pattern.compile("([0-9]+[smhdw])+");

  @Test
  void everyAlertIsCompleteAndNamesOnlyExportedSeries() throws IOException {
    JsonNode rule = YAML.readTree(MONITORING.resolve("prometheusrule.yaml").toFile());
    assertThat(rule.path("kind").asText()).isEqualTo("PrometheusRule");
    Set<String> names = new HashSet<>();
    List<String> exprs = new ArrayList<>();
    for (JsonNode group : rule.path("spec").path("groups")) {
      for (JsonNode r : group.path("rules")) {
        String alert = r.path("alert").asText();
        assertThat(alert).matches("Podsweeper[A-Za-z]+");
        assertThat(names.add(alert)).as("duplicate alert " + alert).isTrue();
        assertThat(r.path("for").asText()).as(alert).matches(DURATION);
        assertThat(r.path("labels").path("severity").asText()).as(alert).isIn("info", "warning", "critical");
        assertThat(r.path("annotations").path("summary").asText()).as(alert).isNotBlank();
        assertThat(r.path("annotations").path("description").asText()).as(alert).isNotBlank();
        String expr = r.path("expr").asText();
        assertBalanced(alert, expr);
        assertThat(unknownSeries(expr)).as(alert + ": series the service does not export").isEmpty();
        exprs.add(expr);
      }
    }
    // The situations the rules must cover.
    String all = String.join("\n", exprs);
    assertThat(all).contains("podsweeper_removals_total{result=\"success\"}", "podsweeper_removals_total{result=\"error\"}",
        "podsweeper_pdb_refusals_total", "sum(podsweeper_terminated_pods) > 0.8 * 12500", "max(podsweeper_guard_tripped) == 1",
        "max(podsweeper_paused) == 1", "up{job=\"podsweeper\"}", "podsweeper_informer_watching) == 0", "sum(podsweeper_leader) == 0",
        "> 0.9 * max(podsweeper_finished_pod_budget_max_pods", "(podsweeper_finished_pod_budget_unremovable)) > 0");
  }

  @Test
  void theDashboardNamesOnlyExportedSeries() throws IOException {
    JsonNode dashboard = new ObjectMapper().readTree(MONITORING.resolve("grafana-dashboard.json").toFile());
    assertThat(dashboard.path("uid").asText()).isEqualTo("podsweeper");
    Set<Integer> ids = new HashSet<>();
    int targets = 0;
    for (JsonNode panel : dashboard.path("panels")) {
      assertThat(ids.add(panel.path("id").asInt())).as("duplicate panel id").isTrue();
      assertThat(panel.path("gridPos").path("w").asInt()).isPositive();
      for (JsonNode target : panel.path("targets")) {
        String expr = target.path("expr").asText();
        assertBalanced(panel.path("title").asText(), expr);
        assertThat(unknownSeries(expr)).as(panel.path("title").asText()).isEmpty();
        targets++;
      }
    }
    assertThat(targets).isGreaterThan(20);
  }

  /** docs/metrics.md names only series that exist (it once named a descheduler_pod_evictions_total). */
  @Test
  void theMetricsPageNamesOnlyExportedSeries() throws IOException {
    String page = Files.readString(MONITORING.resolve("../../docs/metrics.md").normalize());
    assertThat(unknownSeries(page)).isEmpty();
    assertThat(page).contains("`descheduler_pods_evicted_total`", "`descheduler_build_info`", "`descheduler_loop_duration_seconds`",
        "`descheduler_strategy_duration_seconds`");
  }

  @Test
  void promtoolChecksAndTestsTheRules(@TempDir Path dir) throws Exception {
    Optional<Path> promtool = promtool();
    if (promtool.isEmpty()) {
      System.err.println("SKIPPED promtool checks of manifests/monitoring/prometheusrule.yaml: promtool not found"
          + " (run scripts/install-promtool.sh, or put promtool on PATH)");
    }
    Assumptions.assumeTrue(promtool.isPresent(), "promtool not found: run scripts/install-promtool.sh");
    JsonNode rule = YAML.readTree(MONITORING.resolve("prometheusrule.yaml").toFile());
    YAML.writeValue(dir.resolve("rules.yaml").toFile(), rule.path("spec"));
    try (var test = MonitoringTest.class.getResourceAsStream("/promtool/alerts-test.yaml")) {
      Files.copy(test, dir.resolve("alerts-test.yaml"));
    }
    assertThat(promtool(promtool.get(), dir, "check", "rules", "rules.yaml")).contains("SUCCESS");
    assertThat(promtool(promtool.get(), dir, "test", "rules", "alerts-test.yaml")).contains("SUCCESS");
  }

  /** Names of series in {@code expr} that neither {@link Metrics} nor the service's scrape-time gauges export. */
  private static Set<String> unknownSeries(String expr) {
    Set<String> unknown = new TreeSet<>();
    Matcher m = SERIES.matcher(expr);
    while (m.find()) {
      if (!exported().contains(m.group(1))) {
        unknown.add(m.group(1));
      }
    }
    return unknown;
  }

  private static Set<String> exportedCache;

  private static synchronized Set<String> exported() {
    if (exportedCache == null) {
      Set<String> names = new HashSet<>(ANNOUNCED);
      // registered by engine.Service, read from the caches at scrape time
      names.add("podsweeper_terminated_pods");
      names.add("podsweeper_migration_jobs");
      // registered by engine.Sweeper, read from the budget's ledger at scrape time (BudgetGaugesTest checks the names)
      names.addAll(Set.of("podsweeper_finished_pod_budget_pods", "podsweeper_finished_pod_budget_limit",
          "podsweeper_finished_pod_budget_max_pods", "podsweeper_finished_pod_budget_unremovable"));
      for (Collector.MetricFamilySamples family : Collections.list(new Metrics().registry().metricFamilySamples())) {
        for (String suffix : List.of("", "_total", "_bucket", "_count", "_sum", "_created")) {
          names.add(family.name + suffix);
        }
      }
      exportedCache = names;
    }
    return exportedCache;
  }

  /** Brackets balance outside string literals: the commonest way a hand-edited expression breaks. */
  private static void assertBalanced(String where, String expr) {
    StringBuilder open = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < expr.length(); i++) {
      char c = expr.charAt(i);
      if (c == '"' && (i == 0 || expr.charAt(i - 1) != '\\')) {
        quoted = !quoted;
      } else if (!quoted && "([{".indexOf(c) >= 0) {
        open.append(c);
      } else if (!quoted && ")]}".indexOf(c) >= 0) {
        assertThat(open.length()).as(where + ": unopened " + c + " in " + expr).isPositive();
        assertThat(open.charAt(open.length() - 1)).as(where + ": mismatched " + c).isEqualTo("([{".charAt(")]}".indexOf(c)));
        open.setLength(open.length() - 1);
      }
    }
    assertThat(quoted).as(where + ": unterminated string").isFalse();
    assertThat(open.toString()).as(where + ": unclosed brackets").isEmpty();
  }

  private static Optional<Path> promtool() {
    Path cached = Path.of(System.getenv().getOrDefault("PODSWEEPER_CACHE", System.getProperty("user.home") + "/.cache/podsweeper"), "bin", "promtool");
    if (Files.isExecutable(cached)) {
      return Optional.of(cached);
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      Path candidate = Path.of(dir, "promtool");
      if (!dir.isEmpty() && Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  private static String promtool(Path promtool, Path dir, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(promtool.toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("promtool " + String.join(" ", args) + ":\n" + out).isZero();
    return out;
  }
}
