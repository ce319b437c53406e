package io.podsweeper.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.podsweeper.policy.CleanupPolicies.Verdict;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The cost of a match expression: estimated over the largest pod the API server accepts, refused in a tenant's policy
 * above {@link PodMatch#MAX_NAMESPACED_COST}, and metered at run time, where every evaluation stops past
 * {@link PodMatch#MAX_COST}. Costs are counted units, never times.
 */
class CelCostTest {
  private static final PodView.State NO_STATE = new PodView.State(new PodView.Waiting(""), new PodView.Terminated("", 0));

  /** A pod with {@code labels} labels and {@code containers} containers, the first of them of image {@code image}. */
  private static PodView.Pod pod(int labels, int containers, String image) {
    Map<String, String> l = new HashMap<>();
    for (int i = 0; i < labels; i++) {
      l.put("example.com/label-" + i, "value-" + i);
    }
    List<PodView.Container> specs = new ArrayList<>();
    List<PodView.ContainerStatus> statuses = new ArrayList<>();
    for (int i = 0; i < containers; i++) {
      specs.add(new PodView.Container(i == 0 ? image : "registry.example/app:" + i));
      statuses.add(new PodView.ContainerStatus("c" + i, i, NO_STATE, NO_STATE, false));
    }
    return new PodView.Pod(new PodView.Metadata("web-1", "team-a", l, Map.of(), List.of(new PodView.OwnerReference("ReplicaSet", "web", true))),
        new PodView.Spec(0, "", "node-1", specs),
        new PodView.Status("Running", "", List.of(new PodView.Condition("Ready", "True", "")), statuses, List.of()));
  }

  private static final PodView.Namespace TEAM = new PodView.Namespace("team-a", Map.of("kubernetes.io/metadata.name", "team-a"));
  private static final PodView.Pod ORDINARY = pod(10, 2, "registry.example/web:1.2");
  /** What the finding used: a hundred labels, a long image. */
  private static final PodView.Pod LARGE = pod(100, 3, "registry.example/" + "x".repeat(100_000) + ":1");
  private static final PodView.Pod HUGE = pod(50_000, 500, "registry.example/" + "x".repeat(1_000_000) + ":1");

  private static PodMatch compile(String expression) {
    return PodMatch.compile(new ConfigNode(JsonNodeFactory.instance.textNode(expression), "match"), "r");
  }

  private static Verdict tenant(String expression) {
    JsonNode spec = JsonNodeFactory.instance.objectNode().set("rules", JsonNodeFactory.instance.arrayNode()
        .add(JsonNodeFactory.instance.objectNode().put("name", "n").put("maxAge", "2h").put("match", expression)));
    return CleanupPolicies.judge(new CleanupPolicies.Source("team-a", "cleanup", spec),
        CleanupPolicies.clusterRails(Optional.of(JsonNodeFactory.instance.objectNode().put("minMaxAge", "1h"))));
  }

  /** The expressions of the finding and their kin: each costs more than any evaluation may, on a pod a tenant can make. */
  private static final List<String> HOSTILE = List.of(
      // matches over a long image, in a loop
      "pod.spec.containers.exists(c, c.image.matches('^registry[.]example/.*:v[0-9]+$'))",
      // nested comprehensions over labels, and a label map read at every turn
      "pod.metadata.labels.exists(k, pod.metadata.labels.exists(j, k == j + 'x'))",
      "pod.metadata.labels.exists(k, pod.metadata.labels[k] == 'x')",
      // string concatenation blow-ups
      "pod.metadata.labels.exists(k, (k + k + k + k + k + k + k + k).contains(pod.spec.containers[0].image))",
      "pod.metadata.labels.map(k, pod.spec.containers[0].image + k).exists(s, s.contains('zz'))");

  /** Ordinary expressions: the README's and the tests' own. */
  private static final List<String> ORDINARY_EXPRESSIONS = List.of(
      "pod.status.containerStatuses.exists(c, c.restartCount > 20 && c.lastState.terminated.reason == 'OOMKilled')",
      "namespaceObject.labels['kubernetes.io/metadata.name'] == 'team-a' && pod.spec.containers.exists(c, c.image.startsWith('registry.example/'))",
      "'example.com/label-1' in pod.metadata.labels && pod.metadata.labels['example.com/label-1'] == 'value-1'",
      "pod.metadata.ownerReferences.exists(o, o.kind == 'ReplicaSet' && o.controller) && pod.status.phase == 'Running'",
      "pod.metadata.name.matches('^web-[0-9]+$') && pod.spec.nodeName.startsWith('node-')",
      "pod.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True') && size(pod.metadata.name) < 64");

  @Test
  void everyStringListAndMapOfTheViewHasABound() {
    for (Class<?> type : PodView.TYPES) {
      for (RecordComponent c : type.getRecordComponents()) {
        boolean sized = c.getType() == String.class || c.getType() == List.class || c.getType() == Map.class;
        PodView.Max max = c.getAnnotation(PodView.Max.class);
        assertThat(max != null).as(type.getSimpleName() + "." + c.getName()).isEqualTo(sized);
        if (max != null) {
          assertThat(c.getType() == String.class ? max.length() : max.items()).as(type.getSimpleName() + "." + c.getName()).isPositive();
        }
      }
    }
    ValueBound labels = ValueBound.fields(PodView.Metadata.class).get("labels");
    assertThat(labels).isEqualTo(ValueBound.map(393_216, ValueBound.string(317), ValueBound.string(63)));
    assertThat(ValueBound.fields(PodView.Container.class).get("image")).isEqualTo(ValueBound.string(3 * 1024 * 1024));
  }

  @Test
  void theEstimateCountsWhatCostsAndIsNeverBelowWhatAnEvaluationSpends() {
    PodMatch read = compile("pod.metadata.labels['app'] == 'api'");
    PodMatch name = compile("pod.metadata.name == 'api'");
    // Reading the labels goes through all of them; a string compared by its length; the estimate at the largest pod.
    assertThat(read.cost()).isGreaterThan(CelCost.read(PodView.LABELS));
    assertThat(name.cost()).isLessThan(10);
    assertThat(compile("pod.spec.containers[0].image.contains('abc')").cost())
        .isGreaterThan(compile("pod.spec.containers[0].image.startsWith('abc')").cost() + PodView.REQUEST * 3L / 100 - 1);
    assertThat(compile("pod.metadata.name.matches('^web-[0-9]+$')").cost()).isGreaterThan(compile("pod.metadata.name.startsWith('web-')").cost());
    for (String expression : concat(ORDINARY_EXPRESSIONS, HOSTILE)) {
      PodMatch match = compile(expression);
      for (PodView.Pod pod : List.of(ORDINARY, LARGE)) {
        assertThat(match.evaluate(pod, TEAM).cost()).as(expression).isLessThanOrEqualTo(match.cost());
      }
    }
  }

  @Test
  void ordinaryExpressionsAreAcceptedInATenantsPolicyAndNeverStoppedOnOrdinaryPods() {
    for (String expression : ORDINARY_EXPRESSIONS) {
      Verdict v = tenant(expression);
      assertThat(v.outcome().accepted()).as(expression + ": " + v.outcome().message()).isTrue();
      PodMatch.Result r = compile(expression).evaluate(LARGE, TEAM);
      assertThat(r.error()).as(expression).isEmpty();
      assertThat(r.cost()).as(expression).isLessThan(PodMatch.MAX_COST / 100);
    }
  }

  @Test
  void theFindingsExpressionsAreRefusedInATenantsPolicyAtTheMatchField() {
    for (String expression : HOSTILE) {
      Verdict v = tenant(expression);
      assertThat(v.outcome().accepted()).as(expression).isFalse();
      assertThat(v.outcome().reason()).isEqualTo("ExceedsGuardRails");
      assertThat(v.outcome().message()).as(expression).startsWith("spec.rules[0].match: estimated cost ")
          .contains("is over the limit 10000000 for namespaced policies");
    }
  }

  @Test
  void inTheAdminsFileTheyAreStoppedAtRunTimeWithinOneNodeOfTheLimit() {
    // A node costs at most 1 and reading the largest list it yields: the stop comes within that of the limit, or
    // before a charged call runs, or at the runtime's 10,000 comprehension iterations, whichever comes first.
    long node = CelCost.read(50_000) + 1;
    for (String expression : HOSTILE) {
      PodMatch match = compile(expression);
      PodMatch.Result r = match.evaluate(HUGE, TEAM);
      assertThat(r.cost()).as(expression).isLessThanOrEqualTo(match.cost());
      assertThat(r.matches()).isFalse();
      assertThat(r.error()).as(expression).hasValueSatisfying(e -> assertThat(e).containsAnyOf("over the limit 200000 per evaluation",
          "the limit is 200000 per evaluation", "Iteration budget exceeded: 10000"));
      assertThat(r.cost()).as(expression).isLessThanOrEqualTo(PodMatch.MAX_COST + node);
      if (expression.equals(HOSTILE.get(2))) {
        // The label map read at every turn: 150,000 units a turn, stopped by cost at the second.
        assertThat(r.error()).hasValue("stopped: cost " + r.cost() + " is over the limit 200000 per evaluation");
        assertThat(r.cost()).isGreaterThan(PodMatch.MAX_COST);
      }
    }
  }

  @Test
  void aMatchesOverALongStringIsChargedBeforeItRunsAndNotRun() {
    // Charged at its last operand: the pattern's program (~30 instructions) times a million characters by ten is
    // three million, so the evaluation stops before RE2 reads a character, having spent a few units.
    String expression = "pod.spec.containers[0].image.matches('^registry[.]example/.*:v[0-9]+$')";
    PodMatch.Result r = compile(expression).evaluate(HUGE, TEAM);
    long program = RegexSize.bound("^registry[.]example/.*:v[0-9]+$");
    assertThat(r.error()).hasValueSatisfying(e -> assertThat(e).startsWith("stopped before matches, which would cost "
        + program * (1 + 100_002) + " more than the " + r.cost() + " spent: the limit is 200000 per evaluation"));
    assertThat(r.cost()).isLessThan(CelCost.read(500) + 10);
    // An error forgiven by || does not let the evaluation go on past the stop.
    assertThat(compile(expression + " || true").evaluate(HUGE, TEAM).error()).hasValueSatisfying(e -> assertThat(e).startsWith("stopped before matches"));
    // On the finding's pod (100,000 characters) it would cost 310,000: stopped too; over 10,000 characters it runs.
    assertThat(compile(expression).evaluate(LARGE, TEAM).error()).hasValueSatisfying(e -> assertThat(e).startsWith("stopped before matches"));
    assertThat(compile(expression).evaluate(pod(10, 1, "registry.example/" + "x".repeat(10_000) + ":1"), TEAM).error()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"pod.metadata.labels.app == 'x'", "has(pod.metadata.labels.app)", "namespaceObject.labels.env == 'dev'",
      "[pod.metadata.labels].exists(m, m.app == 'x')"})
  void aMapsKeyIsReadWithAnIndexNotAsAField(String expression) {
    // CEL for Java reads the map whole for a field of it and reports only the field: it could not be metered.
    assertThatThrownBy(() -> compile(expression)).isInstanceOf(PolicyException.class)
        .hasMessageContaining("match: rule r, line 1, column ").hasMessageContaining("not as a field");
  }

  @ParameterizedTest
  @ValueSource(strings = {"pod.metadata.name.matches(pod.metadata.labels['pattern'])", "pod.metadata.name.matches('^' + pod.metadata.namespace)",
      "matches(pod.metadata.name, namespaceObject.name)"})
  void aPatternMustBeALiteralInEveryPolicy(String expression) {
    assertThatThrownBy(() -> compile(expression)).isInstanceOf(PolicyException.class)
        .hasMessageContaining("match: rule r, line 1, column ").hasMessageContaining(": the pattern of matches must be a string literal");
    assertThat(tenant(expression).outcome().reason()).isEqualTo("InvalidSpec");
    assertThat(tenant(expression).outcome().message()).startsWith("spec.rules[0].match: rule n, line 1, column ");
  }

  @Test
  void aPatternThatCompilesToAHugeProgramIsRefusedBeforeAnythingCompilesIt() {
    // RE2J compiles this to about 10^9 instructions: the policy would exhaust the heap at its first evaluation.
    assertThatThrownBy(() -> compile("pod.metadata.name.matches('((a{1000}){1000}){1000}')"))
        .hasMessageStartingWith("match: rule r, line 1, column 27: the pattern of matches may compile to ")
        .hasMessageContaining("more than 1000");
    assertThat(compile("pod.metadata.name.matches('^web-[a-z0-9]{5}$')").cost()).isPositive();
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }
}
