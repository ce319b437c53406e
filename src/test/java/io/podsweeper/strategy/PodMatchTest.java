package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.CleanupPolicies;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** A rule's CEL match expression: compiled with the policy, evaluated over the slim records, bounded for tenants. */
class PodMatchTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final NamespaceRecord TEAM = new NamespaceRecord("team-a", Map.of("kubernetes.io/metadata.name", "team-a", "tier", "dev"));

  private static PolicyEvaluator policy(String rules) {
    Policy p = PolicyLoader.parse("apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules:\n" + rules.stripIndent(), "test");
    return new PolicyEvaluator(p);
  }

  private static ClusterSnapshot cluster(PodRecord pod) {
    return ClusterSnapshot.of(List.of(pod), List.of(TEAM), List.of());
  }

  /** A container restarted {@code restarts} times, its last run ended with {@code lastReason}. */
  private static PodRecord crashing(int restarts, String lastReason) {
    ContainerStatus c = new ContainerStatus("app", ContainerStatus.Kind.MAIN, Optional.of("CrashLoopBackOff"), Optional.empty(),
        OptionalInt.empty(), Optional.empty(), restarts, Optional.of(lastReason), OptionalInt.of(137));
    return pod("p").ns("team-a").created(T0).phase("Running").label("app", "api").images("registry.example/api:1.2").container(c).build();
  }

  private static final String OOM = "pod.status.containerStatuses.exists(c, c.restartCount > 20 && c.lastState.terminated.reason == 'OOMKilled')";

  @Test
  void theIssuesExampleSelectsTheCrashLoopingOomKilledPodOnly() {
    PolicyEvaluator e = policy("  - {name: oom, maxAge: 1h, match: \"" + OOM + "\"}\n");
    assertThat(e.evaluate(crashing(21, "OOMKilled"), cluster(crashing(21, "OOMKilled")))).isPresent();
    assertThat(e.evaluate(crashing(20, "OOMKilled"), cluster(crashing(20, "OOMKilled")))).isEmpty();
    assertThat(e.evaluate(crashing(21, "Error"), cluster(crashing(21, "Error")))).isEmpty();
  }

  @Test
  void theViewHoldsMetadataSpecStatusAndTheNamespacesLabels() {
    PodRecord p = crashing(3, "Error");
    for (String expression : List.of(
        "pod.metadata.name == 'p' && pod.metadata.namespace == 'team-a' && pod.metadata.labels['app'] == 'api'",
        "pod.metadata.ownerReferences.exists(o, o.kind == 'ReplicaSet' && o.controller)",
        "pod.spec.containers.all(c, c.image.startsWith('registry.example/')) && pod.spec.priority == 0",
        "pod.status.phase == 'Running' && pod.status.containerStatuses[0].state.waiting.reason == 'CrashLoopBackOff'",
        "pod.status.containerStatuses[0].lastState.terminated.exitCode == 137",
        "namespaceObject.labels['tier'] == 'dev' && !('podsweeper.io/keep' in pod.metadata.labels)")) {
      assertThat(policy("  - {name: m, maxAge: 1h, match: \"" + expression + "\"}\n").evaluate(p, cluster(p))).as(expression).isPresent();
    }
  }

  @Test
  void explainShowsTheExpressionsResultAndAnEvaluationErrorSelectsNothing() {
    PodRecord p = crashing(3, "Error");
    PolicyEvaluator e = policy("""
          - {name: oom, maxAge: 1h, match: "%s"}
          - {name: owner, maxAge: 1h, match: "pod.metadata.labels['owner'] == 'me'"}
          - {name: api, maxAge: 1h, match: "pod.metadata.labels['app'] == 'api'"}
        """.formatted(OOM));
    List<String> lines = e.explain(p, cluster(p), T0.plusSeconds(60));
    assertThat(lines).anySatisfy(l -> assertThat(l).contains("rule oom: match " + OOM + " is false"));
    assertThat(lines).anySatisfy(l -> assertThat(l).contains("rule owner: match pod.metadata.labels['owner'] == 'me' is error: ")
        .contains("owner"));
    assertThat(lines).anySatisfy(l -> assertThat(l).contains("rule api: due at").endsWith("(match pod.metadata.labels['app'] == 'api' is true)"));
  }

  @Test
  void syntaxAndTypeErrorsAreRejectedWithTheRuleAndTheColumn() {
    assertThatThrownBy(() -> policy("  - {name: a, maxAge: 1h, match: \"pod.status.phse == 'Running'\"}\n"))
        .isInstanceOf(PolicyException.class).hasMessageContaining("rules[0].match: rule a, line 1, column 11: undefined field 'phse'");
    assertThatThrownBy(() -> policy("  - {name: a, maxAge: 1h}\n  - {name: b, maxAge: 1h, match: \"pod.spec.priority > 'high'\"}\n"))
        .hasMessageContaining("rules[1].match: rule b, line 1, column 19: found no matching overload for '_>_' applied to '(int, string)'");
    assertThatThrownBy(() -> policy("  - {name: a, maxAge: 1h, match: \"pod.metadata.name\"}\n"))
        .hasMessageContaining("rules[0].match: ").hasMessageContaining("bool");
    assertThatThrownBy(() -> policy("  - {name: a, maxAge: 1h, match: \"pod.status.phase ==\"}\n"))
        .hasMessageContaining("rules[0].match: rule a, line 1, column 20: mismatched input");
    // Only what the slim record holds: the pod's volumes are not in the view.
    assertThatThrownBy(() -> policy("  - {name: a, maxAge: 1h, match: \"size(pod.spec.volumes) > 0\"}\n"))
        .hasMessageContaining("undefined field 'volumes'");
  }

  @Test
  void aNamespacedPolicysExpressionIsBoundedByItsEstimatedCost() throws Exception {
    ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
    var rails = CleanupPolicies.clusterRails(Optional.of(yaml.readTree("{minMaxAge: 1h}")));
    String nested = "pod.status.containerStatuses.exists(a, pod.status.containerStatuses.exists(b, "
        + "pod.status.conditions.exists(c, a.name == b.name && c.type == a.name)))";
    CleanupPolicies.Verdict tooCostly = CleanupPolicies.judge(new CleanupPolicies.Source("team-a", "cleanup",
        yaml.readTree("rules: [{name: n, maxAge: 2h, match: \"" + nested + "\"}]")), rails);
    assertThat(tooCostly.outcome().accepted()).isFalse();
    assertThat(tooCostly.outcome().reason()).isEqualTo("ExceedsGuardRails");
    assertThat(tooCostly.outcome().message()).startsWith("spec.rules[0].match: estimated cost ").contains("is over the limit 10000000 ");
    CleanupPolicies.Verdict fine = CleanupPolicies.judge(new CleanupPolicies.Source("team-a", "cleanup",
        yaml.readTree("rules: [{name: n, maxAge: 2h, match: \"" + OOM + "\"}]")), rails);
    assertThat(fine.outcome().accepted()).as(fine.outcome().message()).isTrue();
    CleanupPolicies.Verdict typeError = CleanupPolicies.judge(new CleanupPolicies.Source("team-a", "cleanup",
        yaml.readTree("rules: [{name: n, maxAge: 2h, match: \"pod.nme == 'x'\"}]")), rails);
    assertThat(typeError.outcome().reason()).isEqualTo("InvalidSpec");
    assertThat(typeError.outcome().message()).isEqualTo("spec.rules[0].match: rule n, line 1, column 4: undefined field 'nme'");
    // The admin's own file is not bounded by it.
    assertThat(policy("  - {name: n, maxAge: 2h, match: \"" + nested + "\"}\n").policy().profiles()).hasSize(1);
  }

  @Test
  void anEvaluationStoppedAtTheCostLimitSelectsNothingForThatPodAloneAndSaysWhyInExplain() {
    // The admin's file is not held to the estimate, so it may run the finding's expression; the meter stops it on the
    // pod with many labels, where it reads all of them at every turn, and only there.
    PodFixtures.PodBuilder hostile = pod("big").ns("team-a").created(T0).phase("Running").images("registry.example/api:1");
    for (int i = 0; i < 50_000; i++) {
      hostile.label("example.com/label-" + i, "v");
    }
    PodRecord big = hostile.build();
    PodRecord small = pod("small").ns("team-a").created(T0).phase("Running").label("app", "api").images("registry.example/api:1").build();
    PolicyEvaluator e = policy("""
          - {name: hostile, maxAge: 1h, match: "pod.metadata.labels.exists(k, pod.metadata.labels[k] == 'x') || true"}
          - {name: ordinary, maxAge: 2h, match: "pod.spec.containers.exists(c, c.image.startsWith('registry.example/'))"}
        """);
    ClusterSnapshot both = ClusterSnapshot.of(List.of(big, small), List.of(TEAM), List.of());
    assertThat(e.evaluate(small, both).orElseThrow().rule()).isEqualTo("hostile");
    assertThat(e.evaluate(big, both).orElseThrow().rule()).isEqualTo("ordinary");
    assertThat(e.explain(big, both, T0.plusSeconds(60))).anySatisfy(l -> assertThat(l.strip())
        .startsWith("rule hostile: match pod.metadata.labels.exists(k, pod.metadata.labels[k] == 'x') || true is error: stopped: cost ")
        .endsWith(" is over the limit 200000 per evaluation"));
  }

  @Test
  void aMatchOnlyNarrowsTheRule() {
    PodRecord old = PodFixtures.pod("p").ns("team-a").created(T0).phase("Running").label("app", "api").build();
    PolicyEvaluator e = policy("  - {name: r, states: [Running], maxAge: 1h, match: \"pod.metadata.labels['app'] == 'api'\"}\n");
    assertThat(e.evaluate(old, cluster(old)).orElseThrow().dueAt()).isEqualTo(T0.plusSeconds(3600));
  }
}
