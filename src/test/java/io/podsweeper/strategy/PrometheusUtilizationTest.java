package io.podsweeper.strategy;

import static io.podsweeper.strategy.Passes.NOW;
import static io.podsweeper.strategy.Passes.evicted;
import static io.podsweeper.strategy.Passes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.QueriedUsage;
import io.podsweeper.policy.NativePolicyWriter;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.safety.RemovalBudget;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * LowNodeUtilization's {@code metricsUtilization.source: Prometheus} (upstream v0.33+) on snapshots with a recorded
 * answer: "hot" at 90%, "cold" at 10%, "warm" at 60%; thresholds 30% / target 80% of the one resource MetricResource.
 */
class PrometheusUtilizationTest {
  private static final String QUERY = "instance:node_cpu:rate:sum";
  private static final String PROVIDER = "metricsProviders: [{source: Prometheus, prometheus: {url: \"https://prometheus.monitoring:9090\"}}]\n";
  private static final List<NodeRecord> NODES = List.of(node("cold"), node("hot"), node("warm"));
  private static final QueriedUsage ANSWER = new QueriedUsage(Map.of("cold", 10.0, "hot", 90.0, "warm", 60.0));

  private static String args(String more) {
    return "{thresholds: {MetricResource: 30}, targetThresholds: {MetricResource: 80},"
        + " metricsUtilization: {source: Prometheus, prometheus: {query: \"" + QUERY + "\"}}" + more + "}";
  }

  private static PolicyEvaluator policy(String more) {
    return Passes.policy(PROVIDER, "{}", "balance", "LowNodeUtilization", args(more));
  }

  private static PassResult run(PolicyEvaluator e, QueriedUsage answer) {
    ClusterSnapshot snapshot = ClusterSnapshot.of(List.of(LowNodeLoadTest.hotPods()), List.of(), NODES).withQueriedUsage(QUERY, answer);
    return e.pass(snapshot, NOW, new RemovalBudget(e.policy().limits()), true);
  }

  @Test
  void oneBusyNodeGivesUpOnePodPerPassAsUpstreamSinceWhatAPodFreesIsUnknown() {
    PassResult r = run(policy(""), ANSWER);
    assertThat(evicted(r)).containsExactly("small");
    assertThat(r.decisions().get(0).reason()).isEqualTo("node hot is overutilized (MetricResource 90% > 80%;"
        + " measured by Prometheus: " + QUERY + "); moving to underutilized cold");
    // evictionLimits.node lifts the one-pod rule up to its value.
    assertThat(evicted(run(policy(", evictionLimits: {node: 2}"), ANSWER))).containsExactly("small", "big");
  }

  @Test
  void aNodeWithoutASampleOrNoAnswerDecidesNothingAndSaysSo() {
    PassResult missing = run(policy(""), new QueriedUsage(Map.of("cold", 10.0, "hot", 90.0)));
    assertThat(missing.decisions()).isEmpty();
    assertThat(missing.notes()).contains("p/LowNodeUtilization: nothing decided: node warm has no sample in Prometheus' answer to " + QUERY);
    PassResult none = policy("").pass(ClusterSnapshot.of(List.of(LowNodeLoadTest.hotPods()), List.of(), NODES), NOW, new RemovalBudget(policy("").policy().limits()), true);
    assertThat(none.decisions()).isEmpty();
    assertThat(none.notes()).anySatisfy(n -> assertThat(n).contains("nothing decided: no usable answer from Prometheus to " + QUERY));
  }

  @Test
  void theProviderAndTheQueryAreValidatedAsUpstream() {
    String[][] bad = {
      {"", args(""), "source Prometheus needs the policy's metricsProviders entry with source: Prometheus"},
      {PROVIDER, "{thresholds: {cpu: 30}, targetThresholds: {cpu: 80}, metricsUtilization: {source: Prometheus, prometheus: {query: q}}}",
        "thresholds are expected to specify a single instance of \"MetricResource\" resource"},
      {"metricsProviders: [{source: Prometheus}]\n", args(""), "prometheus configuration is required when prometheus source is enabled"},
      {"metricsProviders: [{source: Prometheus, prometheus: {}}]\n", args(""), "prometheus URL is required when prometheus is enabled"},
      {"metricsProviders: [{source: Prometheus, prometheus: {url: \"not a url\"}}]\n", args(""), "metricsProviders[0].prometheus.url"},
      {"metricsProviders: [{source: Prometheus, prometheus: {url: \"http://p:9090\", authToken: {}}}]\n", args(""),
        "prometheus authToken secret is expected to be set when authToken field is"},
      {"metricsProviders: [{source: Prometheus, prometheus: {url: \"http://p:9090\", authToken: {secretReference: {name: t}}}}]\n", args(""),
        "prometheus authToken secret reference does not set both namespace and name"},
      {"metricsProviders: [{source: KubernetesMetrics}, {source: KubernetesMetrics}]\n", args(""),
        "metric provider \"KubernetesMetrics\" is already configured, each source can be configured only once"},
      {"metricsCollector: {enabled: true}\nmetricsProviders: [{source: KubernetesMetrics}]\n", args(""),
        "it is not allowed to combine metrics provider when metrics collector is enabled"}};
    for (String[] b : bad) {
      assertThatThrownBy(() -> Passes.policy(b[0], "{}", "balance", "LowNodeUtilization", b[1])).as(b[2])
          .isInstanceOf(PolicyException.class).hasMessageContaining(b[2]);
    }
  }

  @Test
  void convertKeepsTheProviderWithItsTokenAndTheQuery() {
    Policy upstream = PolicyLoader.parse("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n"
        + "metricsProviders: [{source: Prometheus, prometheus: {url: \"https://prometheus.monitoring:9090\","
        + " authToken: {secretReference: {namespace: podsweeper, name: prom-token}}}}]\n"
        + "profiles:\n- name: p\n  pluginConfig:\n  - name: LowNodeUtilization\n    args: " + args("") + "\n"
        + "  plugins:\n    balance:\n      enabled: [LowNodeUtilization]\n", "upstream");
    Policy converted = PolicyLoader.parse(NativePolicyWriter.write(upstream), "converted");
    assertThat(converted.profiles()).isEqualTo(upstream.profiles());
  }
}
