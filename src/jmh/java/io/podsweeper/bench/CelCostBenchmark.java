package io.podsweeper.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.podsweeper.policy.CleanupPolicies;
import io.podsweeper.policy.PodLifeTimeArgs;
import io.podsweeper.policy.PodMatch;
import io.podsweeper.policy.PodView;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.policy.Profile;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What one evaluation of a CEL {@code match} costs in time (docs/benchmarks.md, "CEL match: cost limits"), on the
 * finding's pod of issue 35: 100 labels and a 50,000-character image. The {@code tenant-*} expressions are accepted
 * in a PodCleanupPolicy (checked when set up) and are the costliest accepted ones found for this pod; the
 * {@code stopped-*} ones, only an admin's file can hold, run into the per-evaluation limit, each spending its units
 * on one kind of work (reading maps, evaluating nodes, string work): the time of the limit itself.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = "-Xmx1g")
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class CelCostBenchmark {
  private static final Map<String, String> TENANT = Map.of(
      // a regular expression over the long image, as large as a tenant's may be (estimated 9.8M over a 3 MiB image)
      "tenant-regex", "pod.spec.containers[0].image.matches('^reg[.]ex/.*:v[0-9]+([.][0-9]+)?$')",
      // two passes over the labels with string work
      "tenant-labels", "pod.metadata.labels.exists(k, k.startsWith('team.example/') && k.endsWith('/owner'))"
          + " || pod.metadata.labels.exists(k, k.contains('legacy'))",
      // the README's kinds together: a label lookup, the OOMKilled loop, an image prefix loop
      "tenant-mixed", "'app' in pod.metadata.labels && pod.metadata.labels['app'].startsWith('web')"
          + " && pod.status.containerStatuses.exists(c, c.restartCount > 20 && c.lastState.terminated.reason == 'OOMKilled')"
          + " && pod.spec.containers.exists(c, c.image.startsWith('registry.example/'))");

  private static final Map<String, String> STOPPED = Map.of(
      // the label map read again at every turn of two loops
      "stopped-reads", "pod.spec.containers.exists(c, pod.metadata.labels.exists(k, pod.metadata.labels[k] == c.image))",
      // many nodes per turn, nothing large
      "stopped-nodes", "pod.metadata.labels.exists(a, pod.metadata.labels.exists(b, " + alternatives(20) + "))",
      // the long image copied and searched at every turn
      "stopped-strings", "pod.metadata.labels.exists(k, (pod.spec.containers[0].image + k).contains('zz'))");

  @Param({"tenant-regex", "tenant-labels", "tenant-mixed", "stopped-reads", "stopped-nodes", "stopped-strings"})
  String expression;

  private PodMatch match;
  private PodView.Pod pod;
  private PodView.Namespace namespace;

  private static String alternatives(int n) {
    List<String> or = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      or.add("a == b + '#" + i + "'");
    }
    return String.join(" || ", or);
  }

  @Setup
  public void setUp() {
    Map<String, String> labels = new LinkedHashMap<>();
    for (int i = 0; i < 100; i++) {
      labels.put("team.example/label-" + i, "value-" + i);
    }
    labels.put("app", "web");
    List<PodView.Container> containers = new ArrayList<>();
    List<PodView.ContainerStatus> statuses = new ArrayList<>();
    PodView.State none = new PodView.State(new PodView.Waiting(""), new PodView.Terminated("", 0));
    for (int i = 0; i < 10; i++) {
      // An image the pattern below goes through to its end: RE2 at its worst.
      containers.add(new PodView.Container(i == 0 ? "reg.ex/" + "x".repeat(50_000) + ":v1" : "registry.example/app:" + i));
      statuses.add(new PodView.ContainerStatus("c" + i, i, none, none, false));
    }
    pod = new PodView.Pod(new PodView.Metadata("web-1", "team-a", Map.copyOf(labels), Map.of(), List.of()),
        new PodView.Spec(0, "", "node-1", containers), new PodView.Status("Running", "", List.of(), statuses, List.of()));
    namespace = new PodView.Namespace("team-a", Map.of("kubernetes.io/metadata.name", "team-a"));
    match = TENANT.containsKey(expression) ? tenant(TENANT.get(expression)) : admin(STOPPED.get(expression));
    PodMatch.Result once = match.evaluate(pod, namespace);
    System.out.printf("%n%s: estimated %,d; on this pod %,d units, %s%n", expression, match.cost(), once.cost(), once);
  }

  /** The expression as a PodCleanupPolicy's rule: it must be accepted. */
  private static PodMatch tenant(String expression) {
    JsonNodeFactory json = JsonNodeFactory.instance;
    ObjectNode rule = json.objectNode().put("name", "r").put("maxAge", "2h").put("match", expression);
    JsonNode spec = json.objectNode().set("rules", json.arrayNode().add(rule));
    CleanupPolicies.Verdict verdict = CleanupPolicies.judge(new CleanupPolicies.Source("team-a", "p", spec),
        CleanupPolicies.clusterRails(Optional.of(json.objectNode().put("minMaxAge", "1h"))));
    if (!verdict.outcome().accepted()) {
      throw new IllegalStateException(expression + ": " + verdict.outcome().message());
    }
    return firstMatch(verdict.profile().orElseThrow());
  }

  /** The expression in the admin's policy file, which no estimate limits. */
  private static PodMatch admin(String expression) {
    String policy = "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules:\n  - {name: r, maxAge: 2h, match: \"" + expression + "\"}\n";
    return firstMatch(PolicyLoader.parse(policy, "bench").profiles().get(0));
  }

  private static PodMatch firstMatch(Profile profile) {
    return ((PodLifeTimeArgs) profile.deschedule().get(0)).rules().get(0).match().orElseThrow();
  }

  @Benchmark
  public PodMatch.Result evaluate() {
    return match.evaluate(pod, namespace);
  }
}
