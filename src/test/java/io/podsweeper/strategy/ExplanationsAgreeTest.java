package io.podsweeper.strategy;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.policy.PolicyLoader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code explain} never says two contradictory things about one rule: every explanation of every pod of every plan-level
 * test snapshot (config/examples and src/test/resources/snapshots), under every bundled and test policy, is read and
 * checked line by line.
 */
class ExplanationsAgreeTest {
  private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");
  private static final Pattern PROTECTED = Pattern.compile("  (\\S+): rule (\\S+) selects it, but it is protected: (.*)");
  private static final Pattern RULE = Pattern.compile("    rule (\\S+): (.*)");
  private static final Pattern STATES = Pattern.compile("state (.*) is not one of \\[(.*?)\\].*");

  /** Each plan-level test snapshot, with the policies the tests plan it with (ExamplesPlanTest, PodShapesPlanTest). */
  private static final List<List<String>> PLANNED = List.of(
      List.of("config/examples/snapshot.yaml", "config/policy.yaml", "config/examples/descheduler-v1alpha2.yaml",
          "config/examples/descheduler-v1alpha1.yaml", "config/examples/koordinator.yaml"),
      List.of("config/examples/anti-affinity-fragmentation-snapshot.yaml", "config/examples/anti-affinity-fragmentation-policy.yaml"),
      List.of("config/examples/lownodeload-snapshot.yaml", "config/examples/koordinator-lownodeload.yaml"),
      List.of("config/examples/finished-pods-snapshot.yaml", "config/examples/finished-pod-budget.yaml"),
      List.of("src/test/resources/snapshots/absent-resources-snapshot.yaml", "src/test/resources/policies/absent-resources-descheduler-policy.yaml", "src/test/resources/policies/absent-resources-lownodeload-policy.yaml"),
      List.of("src/test/resources/snapshots/k8s-1.30-pod-shapes-snapshot.yaml", "src/test/resources/snapshots/pod-shapes-policy.yaml",
          "config/policy.yaml", "config/examples/descheduler-v1alpha2.yaml"));

  /** Every snapshot file of config/examples and src/test/resources/snapshots. */
  private static List<String> snapshotFiles() {
    List<String> all = new ArrayList<>();
    for (String dir : List.of("config/examples", "src/test/resources/snapshots")) {
      try (Stream<Path> files = Files.list(Path.of(dir))) {
        files.map(Path::toString).filter(f -> f.endsWith("snapshot.yaml")).forEach(all::add);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return all;
  }

  @Test
  void noExplanationSaysTwoContradictoryThingsAboutOneRule() {
    assertThat(PLANNED).extracting(p -> p.get(0)).as("every snapshot is read").containsExactlyInAnyOrderElementsOf(snapshotFiles());
    int explained = 0;
    List<String> contradictions = new ArrayList<>();
    for (List<String> planned : PLANNED) {
      ClusterSnapshot snapshot = SnapshotReader.read(Path.of(planned.get(0)));
      for (String policyFile : planned.subList(1, planned.size())) {
        PolicyEvaluator evaluator = new PolicyEvaluator(PolicyLoader.load(Path.of(policyFile)));
        for (PodRecord pod : snapshot.pods()) {
          explained++;
          contradictions(evaluator.explain(pod, snapshot, NOW))
              .forEach(c -> contradictions.add(policyFile + " on " + planned.get(0) + ", pod " + pod.key() + ": " + c));
        }
      }
    }
    assertThat(explained).isGreaterThan(100);
    assertThat(contradictions).isEmpty();
  }

  /** What in one explanation contradicts another line of it, or itself. */
  static List<String> contradictions(List<String> lines) {
    List<String> found = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      Matcher p = PROTECTED.matcher(lines.get(i));
      if (p.matches()) {
        // The strategy says the rule selects the pod but a protection keeps it: the rule's own line must say the same.
        String expected = "    rule " + p.group(2) + ": selects it, but it is protected: " + p.group(3);
        if (ruleLines(lines, i).stream().filter(l -> l.startsWith("    rule " + p.group(2) + ": ")).noneMatch(expected::equals)) {
          found.add("\"" + lines.get(i).strip() + "\" but its rule line is " + ruleLines(lines, i));
        }
      }
      if (lines.get(i).endsWith(": no rule wants it as it is now")
          && ruleLines(lines, i).stream().anyMatch(l -> RULE.matcher(l).matches() && RULE.matcher(l).replaceAll("$2").startsWith("due "))) {
        found.add("\"" + lines.get(i).strip() + "\" but a rule is due: " + ruleLines(lines, i));
      }
      Matcher rule = RULE.matcher(lines.get(i));
      if (rule.matches()) {
        Matcher states = STATES.matcher(rule.group(2));
        if (states.matches()) {
          // The pod's states the rule counts, and the rule's states it is not in: none may be in both.
          for (String state : states.group(2).split(", ")) {
            if (Pattern.compile("\\b" + Pattern.quote(state) + "\\b").matcher(states.group(1)).find()) {
              found.add("\"" + lines.get(i).strip() + "\" names " + state + " on both sides");
            }
          }
        }
        if (rule.group(2).endsWith("the rule's conditions []")) {
          found.add("\"" + lines.get(i).strip() + "\": a rule without conditions");
        }
      }
    }
    return found;
  }

  /** The rule lines under the strategy line at {@code index}. */
  private static List<String> ruleLines(List<String> lines, int index) {
    List<String> rules = new ArrayList<>();
    for (int j = index + 1; j < lines.size() && lines.get(j).startsWith("    "); j++) {
      rules.add(lines.get(j));
    }
    return rules;
  }

  /** The checks themselves catch what the issue showed (a protected pod's rule line, a sidecar read as not counted). */
  @Test
  void theChecksCatchTheContradictionsOfIssue37() {
    assertThat(contradictions(List.of("  PodLifeTime: rule crash-loops selects it, but it is protected: a bare pod",
        "    rule crash-loops: no condition of the pod matches the rule's conditions []"))).hasSize(2);
    assertThat(contradictions(List.of("  PodLifeTime: no rule wants it as it is now",
        "    rule crash-loops: state Running (container istio-proxy CrashLoopBackOff) is not one of [CrashLoopBackOff]"))).hasSize(1);
    assertThat(contradictions(List.of("  PodLifeTime: no rule wants it as it is now",
        "    rule crash-loops: state Pending (container main PodInitializing) is not one of [CrashLoopBackOff];"
            + " init container setup CrashLoopBackOff counts only with includingInitContainers: true"))).isEmpty();
  }
}
