package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.CleanupPolicies;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.policy.TtlSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Per-pod lifetimes (ttlFrom): written on the pod or its namespace, honoured only by rules that say so, within the rails. */
class PodTtlTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final String NS = "dev";

  private static PolicyEvaluator policy(String rules) {
    Policy p = PolicyLoader.parse("apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules:\n" + rules.stripIndent(), "test");
    return new PolicyEvaluator(p);
  }

  private static final PolicyEvaluator TTL = policy("""
      - {name: ttl, ttlFrom: [podsweeper.io]}
      - {name: ttl-finished, states: [Succeeded, Failed], ttlFrom: [podsweeper.io]}
      """);

  private static NamespaceRecord namespace(Map<String, String> annotations) {
    return new NamespaceRecord(NS, Map.of("kubernetes.io/metadata.name", NS), false, annotations);
  }

  private static Optional<Verdict> evaluate(PolicyEvaluator e, PodRecord pod, NamespaceRecord namespace) {
    return e.evaluate(pod, ClusterSnapshot.of(List.of(pod), List.of(namespace), List.of()));
  }

  private static Optional<Verdict> evaluate(PolicyEvaluator e, PodRecord pod) {
    return evaluate(e, pod, namespace(Map.of()));
  }

  private static PodFixtures.PodBuilder running() {
    return pod("p").ns(NS).created(T0).phase("Running").container(PodFixtures.running("c"));
  }

  @Test
  void aTtlOnThePodIsItsAgeLimit() {
    Verdict v = evaluate(TTL, running().annotation("podsweeper.io/ttl", "2h").build()).orElseThrow();
    assertThat(v.dueAt()).isEqualTo(T0.plus(Duration.ofHours(2)));
    assertThat(v.rule()).isEqualTo("ttl");
    assertThat(v.reason().apply(T0.plus(Duration.ofHours(3))))
        .isEqualTo("Running, age 3h; rule ttl honours podsweeper.io/ttl: 2h on the pod");
  }

  @Test
  void anExpiryOnThePodIsItsDeadlineAndTheEarlierOfTwoValuesCounts() {
    Instant at = T0.plus(Duration.ofMinutes(30));
    assertThat(evaluate(TTL, running().annotation("podsweeper.io/expires", "2026-01-01T01:30:00+01:00").build()).orElseThrow().dueAt())
        .isEqualTo(at);
    assertThat(evaluate(TTL, running().annotation("podsweeper.io/expires", at.toString()).annotation("podsweeper.io/ttl", "2h").build())
        .orElseThrow().dueAt()).isEqualTo(at);
  }

  @Test
  void theNamespaceGivesTheDefaultAndThePodsOwnValueWins() {
    NamespaceRecord ns = namespace(Map.of("podsweeper.io/ttl", "1h"));
    Verdict byNamespace = evaluate(TTL, running().build(), ns).orElseThrow();
    assertThat(byNamespace.dueAt()).isEqualTo(T0.plus(Duration.ofHours(1)));
    assertThat(byNamespace.reason().apply(T0.plus(Duration.ofHours(2)))).contains("podsweeper.io/ttl: 1h on namespace dev");
    assertThat(evaluate(TTL, running().annotation("podsweeper.io/ttl", "3h").build(), ns).orElseThrow().dueAt())
        .isEqualTo(T0.plus(Duration.ofHours(3)));
    assertThat(evaluate(TTL, running().build(), namespace(Map.of("podsweeper.io/expires", "2026-01-02T00:00:00Z"))).orElseThrow().dueAt())
        .isEqualTo(T0.plus(Duration.ofDays(1)));
  }

  @Test
  void withoutALifetimeWrittenARuleWithTtlFromWantsNothing() {
    assertThat(evaluate(TTL, running().build())).isEmpty();
    assertThat(TTL.explain(running().build(), ClusterSnapshot.of(List.of(running().build()), List.of(namespace(Map.of())), List.of()),
        T0)).contains("    rule ttl: no lifetime from ttlFrom [podsweeper.io] on the pod or its namespace dev");
  }

  @Test
  void aFinishedPodCountsFromItsFinishAndOnlyForARuleThatOptsInToFinishedPods() {
    Instant finished = T0.plus(Duration.ofMinutes(10));
    PodRecord done = pod("p").ns(NS).created(T0).phase("Succeeded")
        .container(PodFixtures.terminatedAt("c", "Completed", 0, finished)).annotation("podsweeper.io/ttl", "1h").build();
    Verdict v = evaluate(TTL, done).orElseThrow();
    assertThat(v.rule()).isEqualTo("ttl-finished");
    assertThat(v.dueAt()).isEqualTo(finished.plus(Duration.ofHours(1)));
    assertThat(v.reason().apply(finished.plus(Duration.ofHours(2)))).startsWith("Succeeded, finished 2h ago; rule ttl-finished honours");
    assertThat(evaluate(policy("  - {name: ttl, ttlFrom: [podsweeper.io]}\n"), done)).isEmpty();
  }

  /**
   * Java's parsers take a signed year of up to nine digits; such a time is out of RFC 3339's range and no deadline
   * anyone meant. It does not parse, as any other bad value (before, the arithmetic on it overflowed and every full pass
   * that met the pod threw).
   */
  @Test
  void aTimeOutOfRangeDoesNotParse() {
    for (String[] value : new String[][] {{"podsweeper.io/expires", "+999999999-12-31T23:59:59Z"},
        {"janitor/expires", "+999999999-12-31"}, {"janitor/expires", "-999999999-01-01T00:00"}}) {
      PolicyEvaluator both = policy("  - {name: ttl, ttlFrom: [podsweeper.io, janitor]}\n");
      PodRecord poisoned = running().annotation(value[0], value[1]).build();
      ClusterSnapshot snapshot = ClusterSnapshot.of(List.of(poisoned), List.of(namespace(Map.of())), List.of());
      assertThat(evaluate(both, poisoned)).as(value[1]).isEmpty();
      assertThat(both.invalidLifetimes(poisoned, snapshot)).as(value[1]).singleElement()
          .satisfies(f -> assertThat(f.value()).isEqualTo(new TtlSource.Value.Invalid("a time out of range (years 0001 to 9999)")));
      assertThat(both.forecast(snapshot, T0, Duration.ofDays(30)).removals()).isEmpty();
    }
  }

  @Test
  void aValueThatDoesNotParseIsIgnoredAndNotReplacedByTheNamespaceDefault() {
    PodRecord bad = running().annotation("podsweeper.io/ttl", "3x").build();
    NamespaceRecord ns = namespace(Map.of("podsweeper.io/ttl", "1h"));
    assertThat(evaluate(TTL, bad, ns)).isEmpty();
    ClusterSnapshot snapshot = ClusterSnapshot.of(List.of(bad), List.of(ns), List.of());
    assertThat(TTL.invalidLifetimes(bad, snapshot)).singleElement().satisfies(f -> {
      assertThat(f.key()).isEqualTo("podsweeper.io/ttl");
      assertThat(f.value()).isInstanceOf(TtlSource.Value.Invalid.class);
    });
    assertThat(TTL.explain(bad, snapshot, T0)).anySatisfy(l -> assertThat(l).contains("podsweeper.io/ttl: \"3x\" on the pod does not parse"));
    // A bad namespace default is the pod's problem too; a pod with a good value of its own is fine.
    NamespaceRecord badNs = namespace(Map.of("podsweeper.io/expires", "tomorrow"));
    assertThat(TTL.invalidLifetimes(running().build(), ClusterSnapshot.of(List.of(), List.of(badNs), List.of()))).hasSize(1);
    assertThat(TTL.invalidLifetimes(running().annotation("podsweeper.io/ttl", "1h").build(),
        ClusterSnapshot.of(List.of(), List.of(badNs), List.of()))).isEmpty();
    // Keys no rule reads are nobody's business.
    assertThat(policy("  - {name: old, maxAge: 1h}\n").invalidLifetimes(bad, snapshot)).isEmpty();
  }

  @Test
  void onlyARuleWithTtlFromHonoursLifetimesAndOnlyFromTheSourcesItNames() {
    PodRecord annotated = running().annotation("podsweeper.io/ttl", "1m").build();
    assertThat(evaluate(policy("  - {name: old, maxAge: 1h}\n"), annotated).orElseThrow().dueAt()).isEqualTo(T0.plus(Duration.ofHours(1)));
    PodRecord janitor = running().annotation("janitor/ttl", "2w").build();
    assertThat(evaluate(TTL, janitor)).isEmpty();
    PolicyEvaluator migrating = policy("  - {name: ttl, ttlFrom: [podsweeper.io, janitor, kyverno]}\n");
    assertThat(evaluate(migrating, janitor).orElseThrow().dueAt()).isEqualTo(T0.plus(Duration.ofDays(14)));
    assertThat(evaluate(migrating, running().annotation("janitor/ttl", "forever").build())).isEmpty();
    assertThat(evaluate(migrating, running().annotation("janitor/expires", "2026-01-03").build()).orElseThrow().dueAt())
        .isEqualTo(Instant.parse("2026-01-03T00:00:00Z"));
    assertThat(evaluate(migrating, running().annotation("janitor/expires", "2026-01-03T04:05").build()).orElseThrow().dueAt())
        .isEqualTo(Instant.parse("2026-01-03T04:05:00Z"));
    // Kyverno's is a label, with a duration or a time of its own format.
    assertThat(evaluate(migrating, running().label("cleanup.kyverno.io/ttl", "4h").build()).orElseThrow().dueAt())
        .isEqualTo(T0.plus(Duration.ofHours(4)));
    assertThat(evaluate(migrating, running().label("cleanup.kyverno.io/ttl", "2026-01-02T030405Z").build()).orElseThrow().dueAt())
        .isEqualTo(Instant.parse("2026-01-02T03:04:05Z"));
    assertThat(evaluate(migrating, running().annotation("cleanup.kyverno.io/ttl", "4h").build())).as("an annotation is not the label").isEmpty();
  }

  @Test
  void theRuleProtectionsHoldForPodsWithALifetime() {
    PodRecord bare = running().bare().annotation("podsweeper.io/ttl", "1h").build();
    assertThat(evaluate(TTL, bare)).isEmpty();
    assertThat(evaluate(policy("  - {name: ttl, ttlFrom: [podsweeper.io], evict: [BarePods]}\n"), bare)).isPresent();
    PodRecord critical = running().priorityClassName("system-node-critical").annotation("podsweeper.io/ttl", "1h").build();
    assertThat(evaluate(TTL, critical)).isEmpty();
  }

  @Test
  void aPodCleanupPolicysRuleHoldsLifetimesToTheClustersMinMaxAge() throws Exception {
    ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
    CleanupPolicies.Verdict verdict = CleanupPolicies.judge(
        new CleanupPolicies.Source(NS, "cleanup", yaml.readTree("rules: [{name: ttl, ttlFrom: [podsweeper.io]}]")),
        CleanupPolicies.clusterRails(Optional.of(yaml.readTree("{minMaxAge: 1h}"))));
    assertThat(verdict.outcome().accepted()).as(verdict.outcome().message()).isTrue();
    Policy file = PolicyLoader.parse("apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules: [{name: x, maxAge: 30d}]\n", "f");
    PolicyEvaluator composed = new PolicyEvaluator(CleanupPolicies.compose(file, List.of(verdict)));
    Verdict tooShort = evaluate(composed, running().annotation("podsweeper.io/ttl", "1m").build()).orElseThrow();
    assertThat(tooShort.dueAt()).isEqualTo(T0.plus(Duration.ofHours(1)));
    assertThat(tooShort.reason().apply(T0.plus(Duration.ofHours(2))))
        .endsWith("podsweeper.io/ttl: 1m on the pod, held to the cluster's minMaxAge 1h");
    assertThat(evaluate(composed, running().annotation("podsweeper.io/expires", T0.plusSeconds(1).toString()).build()).orElseThrow().dueAt())
        .isEqualTo(T0.plus(Duration.ofHours(1)));
    assertThat(evaluate(composed, running().annotation("podsweeper.io/ttl", "3h").build()).orElseThrow().dueAt())
        .isEqualTo(T0.plus(Duration.ofHours(3)));
  }

  @Test
  void validationNamesThePlace() {
    assertThatThrownBy(() -> policy("  - {name: ttl, ttlFrom: [janitr]}\n")).isInstanceOf(PolicyException.class)
        .hasMessageContaining("rules[0].ttlFrom[0]: unknown TTL source \"janitr\" (one of podsweeper.io, janitor, kyverno)");
    assertThatThrownBy(() -> policy("  - {name: ttl, ttlFrom: [janitor, janitor]}\n")).hasMessageContaining("rules[0].ttlFrom[1]: duplicate");
    assertThatThrownBy(() -> policy("  - {name: ttl, ttlFrom: []}\n")).hasMessageContaining("rules[0].ttlFrom: name at least one");
    assertThatThrownBy(() -> policy("  - {name: ttl, ttlFrom: [podsweeper.io], maxAge: 1h}\n"))
        .hasMessageContaining("rules[0].maxAge: does not go with ttlFrom");
  }
}
