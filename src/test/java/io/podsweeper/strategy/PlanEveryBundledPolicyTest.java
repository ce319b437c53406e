package io.podsweeper.strategy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.safety.RemovalBudget;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every bundled policy planned on every bundled snapshot, the way {@code plan} (and {@code plan --within},
 * {@code explain}, {@code --output json}) evaluates them: no internal exception may reach the top. A PolicyException
 * names bad input and is fine; anything else (an NPE, an IllegalStateException) is a defect. Policies: config/,
 * the manifests' policy ConfigMaps and src/test/resources (policies/, ConfigMaps); snapshots: config/examples and
 * src/test/resources/snapshots.
 */
class PlanEveryBundledPolicyTest {
  /** The time the bundled snapshots are written for, and a month later (lifetimes run out, measurements go stale). */
  private static final List<Instant> AT = List.of(Instant.parse("2026-01-01T12:00:00Z"), Instant.parse("2026-02-01T12:00:00Z"));

  private static List<Path> yamlFiles(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static boolean isSnapshot(Path file) {
    return file.getFileName().toString().contains("snapshot");
  }

  /** The policy a ConfigMap carries under {@code data["policy.yaml"]}, if the file is such a ConfigMap. */
  private static List<String> configMapPolicies(Path file) {
    try {
      List<String> out = new ArrayList<>();
      for (JsonNode doc : new YAMLMapper().readValues(new YAMLMapper().createParser(file.toFile()), JsonNode.class).readAll()) {
        JsonNode policy = doc.path("data").path("policy.yaml");
        if ("ConfigMap".equals(doc.path("kind").asText()) && policy.isTextual()) {
          out.add(policy.asText());
        }
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static final Path CHART = Path.of("manifests/helm/podsweeper");

  /** Every bundled policy by where it comes from. */
  static Map<String, Policy> policies() {
    Map<String, Policy> out = new TreeMap<>();
    List<Path> files = new ArrayList<>(List.of(Path.of("config/policy.yaml")));
    yamlFiles(Path.of("config/examples")).stream().filter(f -> !isSnapshot(f)).forEach(files::add);
    files.addAll(yamlFiles(Path.of("src/test/resources/policies")));
    files.add(CHART.resolve("files/policy.yaml"));
    files.forEach(f -> out.put(f.toString(), PolicyLoader.load(f)));
    // The chart's templates are Go templates, not YAML: what they render is in the golden files under src/test/resources.
    Stream.of(yamlFiles(Path.of("manifests")), yamlFiles(Path.of("src/test/resources"))).flatMap(List::stream)
        .filter(f -> !f.startsWith(CHART.resolve("templates"))).forEach(f -> {
      List<String> texts = configMapPolicies(f);
      for (int i = 0; i < texts.size(); i++) {
        out.put(f + "#" + i, PolicyLoader.parse(texts.get(i), f.toString()));
      }
    });
    return out;
  }

  static Map<String, ClusterSnapshot> snapshots() {
    Map<String, ClusterSnapshot> out = new TreeMap<>();
    Stream.of(yamlFiles(Path.of("config/examples")), yamlFiles(Path.of("src/test/resources/snapshots"))).flatMap(List::stream)
        .filter(PlanEveryBundledPolicyTest::isSnapshot).forEach(f -> out.put(f.toString(), SnapshotReader.read(f)));
    return out;
  }

  @Test
  void findsTheBundledPoliciesAndSnapshots() {
    assertThat(policies()).containsKeys("config/policy.yaml", "config/examples/descheduler-v1alpha1.yaml",
        "config/examples/descheduler-v1alpha2.yaml", "config/examples/koordinator.yaml", "config/examples/koordinator-lownodeload.yaml",
        "config/examples/anti-affinity-fragmentation-policy.yaml", "manifests/install/policy-configmap.yaml#0",
        "src/test/resources/policies/absent-resources-descheduler-policy.yaml");
    assertThat(snapshots()).containsKeys("config/examples/snapshot.yaml", "config/examples/lownodeload-snapshot.yaml",
        "config/examples/anti-affinity-fragmentation-snapshot.yaml", "src/test/resources/snapshots/absent-resources-snapshot.yaml");
  }

  @TestFactory
  Stream<DynamicTest> plansEveryPolicyOnEverySnapshotWithoutAnInternalError() {
    Map<String, Policy> policies = policies();
    Map<String, ClusterSnapshot> snapshots = snapshots();
    return policies.entrySet().stream().flatMap(p -> snapshots.entrySet().stream().map(s ->
        DynamicTest.dynamicTest(p.getKey() + " on " + s.getKey(), () -> plan(p.getValue(), s.getValue()))));
  }

  /** What {@code plan}, {@code plan --within 7d --output json} and {@code explain} do with the two. */
  private static void plan(Policy policy, ClusterSnapshot snapshot) {
    for (Instant at : AT) {
      PolicyEvaluator evaluator = new PolicyEvaluator(policy);
      try {
        PassResult result = evaluator.pass(snapshot, at, new RemovalBudget(policy.limits()), true);
        assertThat(result.decisions()).extracting(Decision::podKey).doesNotHaveDuplicates();
        result.decisions().forEach(d -> d.writeTo(new ObjectMapper().createObjectNode()));
        evaluator.forecast(snapshot, at, Duration.ofDays(7));
        for (PodRecord pod : snapshot.pods()) {
          assertThat(evaluator.explain(pod, snapshot, at)).isNotEmpty();
        }
      } catch (PolicyException e) {
        // Bad input, named at its place: what plan prints as "error: <path>: <message>" with exit code 2.
        assertThat(e.getMessage()).isNotBlank();
      }
    }
  }
}
