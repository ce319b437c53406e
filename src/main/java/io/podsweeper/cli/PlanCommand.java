package io.podsweeper.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.policy.PolicySummary;
import io.podsweeper.safety.RemovalBudget;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.Forecast;
import io.podsweeper.strategy.PassResult;
import io.podsweeper.strategy.PolicyEvaluator;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "plan",
    description = "Evaluate a policy once against a snapshot file or the live cluster (read only) and print the decisions;"
        + " with --within, also what will be removed by then, and when.")
final class PlanCommand implements Callable<Integer> {
  enum Output {
    table,
    json
  }

  @Spec CommandSpec spec;

  @Option(names = "--policy", required = true, description = "Policy file (YAML or JSON).")
  Path policyFile;

  @Mixin ClusterInput cluster;

  @Option(names = "--now", description = "Evaluate as of this instant (RFC 3339, e.g. 2026-01-01T00:00:00Z); default: now.")
  String now;

  @Option(
      names = "--within",
      paramLabel = "DURATION",
      description = "Also forecast the removals due by now + DURATION (such as 90m, 6h or 7d; at most 30d).")
  String within;

  @Option(names = "--output", defaultValue = "table", description = "table or json (default: ${DEFAULT-VALUE}).")
  Output output;

  @Override
  public Integer call() throws Exception {
    Instant at = instant(now);
    Optional<Duration> horizon = Optional.ofNullable(within).map(w -> Forecast.within("--within", w));
    ClusterInput.Read input = cluster.read(PolicyLoader.load(policyFile));
    Policy policy = input.policy();
    ClusterSnapshot snapshot = input.snapshot();
    PolicyEvaluator evaluator = new PolicyEvaluator(policy);
    RemovalBudget limits = new RemovalBudget(policy.limits());
    PassResult result = evaluator.pass(snapshot, at, limits, true);
    Optional<Forecast> forecast = horizon.map(h -> evaluator.forecast(snapshot, at, h));
    List<Decision> decisions = result.decisions();
    List<String> warnings = warnings(policy, decisions, snapshot);
    PrintWriter out = spec.commandLine().getOut();
    if (output == Output.json) {
      out.println(json(result, forecast, at, policy, warnings, limits.heldBack()));
    } else {
      out.print(DecisionTable.render(decisions));
      warnings.forEach(w -> out.println("warning: " + w));
      result.skipped().ifPresent(s -> out.println("node-aware strategies skipped: " + s));
      result.notes().forEach(n -> out.println("note: " + n));
      result.faults().forEach(f -> out.println("fault: " + f));
      result.plans().forEach(p -> out.println("plan: " + p.describe()));
      heldBack(limits.heldBack()).ifPresent(h -> out.println("held back: " + h));
      out.printf("%d decision(s)%s for %d pod(s) at %s%s%n", decisions.size(),
          result.plans().isEmpty() ? "" : ", " + result.plans().size() + " plan(s)", snapshot.pods().size(), at,
          policy.dryRun() ? " (policy is dry-run)" : "");
      forecast.ifPresent(f -> {
        out.printf("%nforecast: %d removal(s) due by %s (within %s)%n", f.removals().size(), f.until(), Durations.format(f.within()));
        out.print(DecisionTable.renderWithDueAt(f.removals()));
        out.println("note: " + Forecast.NOTE);
        f.faults().forEach(fault -> out.println("fault: " + fault));
      });
    }
    out.flush();
    return 0;
  }

  /** {@code --now}: an RFC 3339 instant, or the current time when not given. */
  static Instant instant(String now) {
    if (now == null) {
      return Instant.now();
    }
    try {
      return Instant.parse(now);
    } catch (DateTimeParseException e) {
      throw new PolicyException("--now", "not an RFC 3339 instant such as 2026-01-01T00:00:00Z: \"" + now + "\"");
    }
  }

  /** The policy's warnings ({@link PolicySummary#warnings}), then each eviction a PodDisruptionBudget of the snapshot refuses now. */
  private static List<String> warnings(Policy policy, List<Decision> decisions, ClusterSnapshot snapshot) {
    List<String> warnings = new ArrayList<>(PolicySummary.warnings(policy));
    Map<String, PodRecord> pods = new HashMap<>();
    snapshot.pods().forEach(p -> pods.put(p.uid(), p));
    for (Decision d : decisions) {
      PodRecord pod = pods.get(d.uid());
      if (d.action() == Action.EVICT && pod != null) {
        PolicyEvaluator.refusingBudget(pod, snapshot).ifPresent(b -> warnings.add("eviction of " + d.podKey() + " would be refused now:"
            + " PodDisruptionBudget " + b.namespace() + "/" + b.name() + " allows no disruption (status.disruptionsAllowed 0); the service"
            + " retries it with backoff until the budget allows one"));
      }
    }
    return warnings;
  }

  /**
   * The pass's removals the limits held back, which the table does not list (the service reports them as limited, and
   * takes them in a later pass): how many, and by which cap.
   */
  static Optional<String> heldBack(Map<String, Integer> byCap) {
    if (byCap.isEmpty()) {
      return Optional.empty();
    }
    int total = byCap.values().stream().mapToInt(Integer::intValue).sum();
    List<String> caps = byCap.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue()).toList();
    return Optional.of(total + " due removal(s) not in the table, over the policy's limits for one pass (" + String.join("; ", caps)
        + "); the service takes them in later passes, `explain` says it per pod");
  }

  private static String json(PassResult result, Optional<Forecast> forecast, Instant at, Policy policy, List<String> warnings,
      Map<String, Integer> heldBack) {
    ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode root = mapper.createObjectNode();
    root.put("now", at.toString());
    root.put("policy", policy.source());
    root.put("dryRun", policy.dryRun());
    result.skipped().ifPresent(s -> root.put("skipped", s));
    result.notes().forEach(n -> root.withArray("notes").add(n));
    result.faults().forEach(f -> root.withArray("faults").add(f));
    warnings.forEach(w -> root.withArray("warnings").add(w));
    if (!heldBack.isEmpty()) {
      heldBack.forEach((cap, n) -> root.with("heldBack").put(cap, n));
    }
    ArrayNode array = root.putArray("decisions");
    for (Decision d : result.decisions()) {
      d.writeTo(array.addObject());
    }
    ArrayNode plans = root.putArray("plans");
    result.plans().forEach(p -> p.writeTo(plans.addObject()));
    forecast.ifPresent(f -> f.writeTo(root.putObject("forecast")));
    try {
      return mapper.writeValueAsString(root);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
