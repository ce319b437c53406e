package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PodFixtures.PodBuilder;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Taint;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * LowNodeUtilization, HighNodeUtilization and LowNodeLoad over generated clusters in which every node has a random
 * subset of the resources as allocatable, every pod requests a random subset, every measurement holds a random subset
 * and every threshold names a random subset: a resource a node, pod or measurement does not have counts as none of it,
 * as upstream's nodeutilization counts it, and no pass ever fails. Seeded, so a failure names a reproducible case.
 */
class UtilizationPropertiesTest {
  private static final List<String> RESOURCES = List.of("cpu", "memory", "pods", "ephemeral-storage", "example.com/foo",
      "example.com/bar");
  private static final int CASES = 400;

  /** One generated cluster: nodes, pods and measurements, and the request-based usage of each node. */
  private record Cluster(List<NodeRecord> nodes, List<PodRecord> pods, List<NodeUsage> usage) {
    /** A node's usage of a resource in percent, from requests; 0 where the node has none of it (upstream's normalizer). */
    double percent(String node, String resource) {
      NodeRecord n = nodes.stream().filter(x -> x.name().equals(node)).findFirst().orElseThrow();
      long capacity = n.allocatable().getOrDefault(resource, 0L);
      List<PodRecord> on = pods.stream().filter(p -> p.nodeName().equals(node)).toList();
      long used = resource.equals("pods") ? on.size() : on.stream().mapToLong(p -> p.scheduling().requests().getOrDefault(resource, 0L)).sum();
      return capacity <= 0 ? 0 : used * 100.0 / capacity;
    }
  }

  private static <T> List<T> someOf(Random random, List<T> all, int atLeast) {
    List<T> out = new ArrayList<>();
    while (out.size() < atLeast) {
      out.clear();
      all.stream().filter(x -> random.nextInt(3) > 0).forEach(out::add);
    }
    return out;
  }

  private static Map<String, Long> amounts(Random random, List<String> resources, long max) {
    Map<String, Long> out = new LinkedHashMap<>();
    someOf(random, resources, 0).forEach(r -> out.put(r, (long) random.nextInt((int) max + 1)));
    return out;
  }

  private static Cluster cluster(Random random) {
    List<NodeRecord> nodes = new ArrayList<>();
    int nodeCount = 2 + random.nextInt(4);
    for (int i = 0; i < nodeCount; i++) {
      List<Taint> taints = random.nextInt(5) == 0 ? List.of(new Taint("dedicated", "x", "NoSchedule")) : List.of();
      nodes.add(new NodeRecord("n" + i, Map.of("zone", "z" + random.nextInt(2)), true, random.nextInt(5) == 0, taints,
          amounts(random, RESOURCES, 40)));
    }
    List<PodRecord> pods = new ArrayList<>();
    int podCount = random.nextInt(15);
    for (int i = 0; i < podCount; i++) {
      PodBuilder b = pod("p" + i).on("n" + random.nextInt(nodeCount));
      amounts(random, RESOURCES.stream().filter(r -> !r.equals("pods")).toList(), 8).forEach(b::requests);
      if (random.nextBoolean()) {
        b.priority(random.nextInt(3) * 100);
      }
      switch (random.nextInt(6)) {
        case 0 -> b.bare();
        case 1 -> b.ownedBy("DaemonSet", "ds");
        case 2 -> b.nodeSelector(Map.of("zone", "z" + random.nextInt(2)));
        default -> { }
      }
      pods.add(b.build());
    }
    List<NodeUsage> usage = new ArrayList<>();
    for (NodeRecord node : nodes) {
      if (random.nextInt(5) > 0) {
        Map<String, Map<String, Long>> podUsage = new HashMap<>();
        pods.stream().filter(p -> p.nodeName().equals(node.name()) && random.nextInt(4) > 0)
            .forEach(p -> podUsage.put(p.key(), amounts(random, RESOURCES, 8)));
        usage.add(new NodeUsage(node.name(), amounts(random, RESOURCES, 40), Passes.NOW.minusSeconds(random.nextInt(240)),
            random.nextBoolean() ? "NodeMetric" : "metrics.k8s.io", podUsage));
      }
    }
    return new Cluster(nodes, pods, usage);
  }

  /** {@code {cpu: 20, example.com/foo: 35}}: a random non-empty subset of the resources, each from {@code base}. */
  private static Map<String, Integer> thresholds(Random random, List<String> resources, Function<String, Integer> base) {
    return someOf(random, resources, 1).stream().collect(Collectors.toMap(r -> r, base, (a, b) -> a, LinkedHashMap::new));
  }

  /** For each of {@code low}'s resources, a target at or above it (and at most 100). */
  private static Map<String, Integer> targets(Random random, Map<String, Integer> low) {
    return low.keySet().stream().collect(Collectors.toMap(r -> r, r -> low.get(r) + random.nextInt(101 - low.get(r))));
  }

  private static String yaml(Map<String, Integer> thresholds) {
    return thresholds.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue()).collect(Collectors.joining(", ", "{", "}"));
  }

  private static PassResult pass(PolicyEvaluator e, Cluster c) {
    return Passes.run(e, c.usage(), c.nodes(), c.pods().toArray(PodRecord[]::new));
  }

  /** What holds for every pass: each decision a pod of the cluster, once, by the plugin, and the same decisions again. */
  private static void assertSane(PassResult r, Cluster c, String plugin, PolicyEvaluator again) {
    assertThat(r.decisions()).extracting(Decision::name).doesNotHaveDuplicates()
        .allSatisfy(name -> assertThat(c.pods()).extracting(PodRecord::name).contains(name));
    assertThat(r.decisions()).allSatisfy(d -> assertThat(d.strategy()).isEqualTo(plugin));
    // DaemonSet pods are protected by the DefaultEvictor's defaults: never decided.
    assertThat(r.decisions()).allSatisfy(d -> assertThat(d.owner()).doesNotStartWith("DaemonSet/"));
    assertThat(pass(again, c).decisions()).isEqualTo(r.decisions());
  }

  @Test
  void lowNodeUtilizationOnRequestsNeverFailsAndMovesPodsOnlyOffNodesAboveATarget() {
    Random random = new Random(38);
    for (int i = 0; i < CASES; i++) {
      Cluster c = cluster(random);
      Map<String, Integer> low = thresholds(random, RESOURCES, r -> random.nextInt(60));
      Map<String, Integer> high = targets(random, low);
      int nodeLimit = random.nextInt(4);
      String args = "{thresholds: " + yaml(low) + ", targetThresholds: " + yaml(high) + (nodeLimit > 0 ? ", evictionLimits: {node: " + nodeLimit + "}" : "")
          + "}";
      String evictor = random.nextBoolean() ? "{nodeFit: true}" : "{}";
      PassResult r = pass(Passes.policy(evictor, "balance", "LowNodeUtilization", args), c);
      assertSane(r, c, "LowNodeUtilization", Passes.policy(evictor, "balance", "LowNodeUtilization", args));
      for (Decision d : r.decisions()) {
        assertThat(high.keySet()).as("case %d %s: %s leaves %s", i, args, d.name(), d.node())
            .anyMatch(res -> c.percent(d.node(), res) > high.get(res));
      }
      if (nodeLimit > 0) {
        assertThat(r.decisions().stream().collect(Collectors.groupingBy(Decision::node, Collectors.counting())).values())
            .allSatisfy(n -> assertThat(n).isLessThanOrEqualTo((long) nodeLimit));
      }
    }
  }

  @Test
  void lowNodeUtilizationWithDeviationOrMeasuredUsageNeverFails() {
    Random random = new Random(3838);
    for (int i = 0; i < CASES; i++) {
      Cluster c = cluster(random);
      boolean deviation = random.nextBoolean();
      Map<String, Integer> low = thresholds(random, RESOURCES, r -> random.nextInt(30));
      // As distances from the average, the low one may be the larger.
      Map<String, Integer> high = low.keySet().stream().collect(Collectors.toMap(r -> r, r -> (deviation ? 0 : low.get(r)) + random.nextInt(30)));
      String args = "{thresholds: " + yaml(low) + ", targetThresholds: " + yaml(high) + ", useDeviationThresholds: " + deviation
          + (random.nextBoolean() ? ", metricsUtilization: {source: KubernetesMetrics}" : "") + "}";
      PassResult r = pass(Passes.policy("{}", "balance", "LowNodeUtilization", args), c);
      assertSane(r, c, "LowNodeUtilization", Passes.policy("{}", "balance", "LowNodeUtilization", args));
    }
  }

  @Test
  void highNodeUtilizationNeverFailsAndMovesPodsOnlyOffNodesAtOrBelowEveryThreshold() {
    Random random = new Random(380);
    for (int i = 0; i < CASES; i++) {
      Cluster c = cluster(random);
      Map<String, Integer> low = thresholds(random, RESOURCES, r -> random.nextInt(101));
      String args = "{thresholds: " + yaml(low) + (random.nextBoolean() ? ", evictionModes: [OnlyThresholdingResources]" : "") + "}";
      PassResult r = pass(Passes.policy("{nodeFit: true}", "balance", "HighNodeUtilization", args), c);
      assertSane(r, c, "HighNodeUtilization", Passes.policy("{nodeFit: true}", "balance", "HighNodeUtilization", args));
      for (Decision d : r.decisions()) {
        assertThat(low.keySet()).as("case %d %s: %s leaves %s", i, args, d.name(), d.node())
            .allMatch(res -> c.percent(d.node(), res) <= low.get(res));
      }
    }
  }

  @Test
  void lowNodeLoadNeverFailsOnMeasurementsMissingAnyResource() {
    Random random = new Random(83);
    List<String> measurable = RESOURCES.stream().filter(r -> !r.equals("example.com/bar")).toList();
    for (int i = 0; i < CASES; i++) {
      Cluster c = cluster(random);
      Map<String, Integer> low = thresholds(random, measurable, r -> random.nextInt(60));
      Map<String, Integer> high = targets(random, low);
      String prod = "";
      if (random.nextBoolean()) {
        Map<String, Integer> prodHigh = high.keySet().stream().collect(Collectors.toMap(r -> r, r -> random.nextInt(high.get(r) + 1)));
        Map<String, Integer> prodLow = prodHigh.keySet().stream().collect(Collectors.toMap(r -> r, r -> random.nextInt(prodHigh.get(r) + 1)));
        prod = ", prodLowThresholds: " + yaml(prodLow) + ", prodHighThresholds: " + yaml(prodHigh);
      }
      String args = "{lowThresholds: " + yaml(low) + ", highThresholds: " + yaml(high) + prod + ", nodeFit: " + random.nextBoolean()
          + ", anomalyCondition: {consecutiveAbnormalities: 1}}";
      PassResult r = pass(Passes.nativePolicy("{}", "balance", "LowNodeLoad", args), c);
      assertSane(r, c, "LowNodeLoad", Passes.nativePolicy("{}", "balance", "LowNodeLoad", args));
    }
  }
}
