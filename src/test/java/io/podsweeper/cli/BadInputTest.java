package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed and hostile policies and snapshots, through the real command line: each is refused with exit code 2 and
 * a message that names the problem, never a stack trace, and nothing is printed as a decision.
 */
class BadInputTest {
  private static final String NATIVE = "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n";
  private static final String GOOD_POLICY = NATIVE + "rules: [{name: r, states: [Failed]}]\n";
  private static final String GOOD_SNAPSHOT = "apiVersion: v1\nkind: List\nitems: []\n";

  static Stream<Arguments> policies() {
    String upstream = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n";
    return Stream.of(
        Arguments.of("wrong type", NATIVE + "rules: {name: r}\n", "rules: must be a list"),
        Arguments.of("huge number", NATIVE + "limits: {maxTotal: 1e400}\nrules: [{name: r, states: [Failed]}]\n", "limits.maxTotal"),
        Arguments.of("negative duration", NATIVE + "rules: [{name: r, maxAge: -1h}]\n", "invalid duration \"-1h\""),
        Arguments.of("absurd duration", NATIVE + "rules: [{name: r, maxAge: 999999999d}]\n", "invalid duration"),
        Arguments.of("empty selector operator", NATIVE + "rules: [{name: r, states: [Failed], podSelector: {matchExpressions: [{key: a, operator: \"\"}]}}]\n", "operator: must not be empty"),
        Arguments.of("unknown version", "apiVersion: podsweeper.io/v2\nkind: PodSweeperPolicy\n", "unsupported policy apiVersion"),
        Arguments.of("no kind", "apiVersion: podsweeper.io/v1alpha1\n", "unsupported policy apiVersion \"podsweeper.io/v1alpha1\" kind \"\""),
        Arguments.of("empty file", "", "exactly one document, found 0"),
        Arguments.of("scalar", "42\n", "a policy must be a YAML mapping"),
        Arguments.of("tabs and garbage", "\t\t: : :\n", "not valid YAML or JSON"),
        Arguments.of("alias bomb", "a: &a [x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b]\n"
            + "d: &d [*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d]\n", "YAML aliases are not supported"),
        Arguments.of("deep nesting", NATIVE + "rules: " + "[".repeat(500) + "]".repeat(500) + "\n", "not valid YAML or JSON"),
        Arguments.of("duplicate keys", GOOD_POLICY + "rules: []\n", "not valid YAML or JSON"),
        Arguments.of("json with wrong type", "{\"apiVersion\": \"podsweeper.io/v1alpha1\", \"kind\": \"PodSweeperPolicy\", \"dryRun\": 1,"
            + " \"rules\": [{\"name\": \"r\", \"states\": [\"Failed\"]}]}", "dryRun: must be true or false, got 1"),
        Arguments.of("null rule", NATIVE + "rules: [null]\n", "rules[0]: must be an object"),
        Arguments.of("CEL type error", NATIVE + "rules: [{name: r, maxAge: 1h, match: \"pod.status.phase > 2\"}]\n",
            "rules[0].match: rule r, line 1, column 18: found no matching overload for '_>_' applied to '(string, int)'"),
        Arguments.of("CEL syntax error", NATIVE + "rules: [{name: r, maxAge: 1h, match: \"pod.status.phase = 'x'\"}]\n",
            "rules[0].match: rule r, line 1, column 18"),
        Arguments.of("state as number", NATIVE + "rules: [{name: r, states: [1]}]\n", "rules[0].states[0]: must be a string, got 1"),
        Arguments.of("very long name", NATIVE + "rules: [{name: " + "a".repeat(300) + ", states: [Failed]}]\n", "invalid rule name"),
        Arguments.of("perSecond infinite", NATIVE + "limits: {perSecond: .inf}\nrules: [{name: r, states: [Failed]}]\n", "Malformed numeric value '.inf'"),
        Arguments.of("guard share above 1", NATIVE + "guard: {maxNamespaceShare: 5}\nrules: [{name: r, states: [Failed]}]\n", "guard.maxNamespaceShare"),
        Arguments.of("upstream unknown plugin", upstream + "profiles: [{name: p, plugins: {deschedule: {enabled: [Nuke]}}}]\n", "unknown plugin \"Nuke\""),
        Arguments.of("upstream unknown arg", upstream + "profiles: [{name: p, pluginConfig: [{name: PodLifeTime, args: {maxPodLifetimeSeconds: 1}}],"
            + " plugins: {deschedule: {enabled: [PodLifeTime]}}}]\n", "maxPodLifetimeSeconds: unknown field"),
        Arguments.of("upstream negative", upstream + "maxNoOfPodsToEvictPerNode: -3\nprofiles: [{name: p}]\n", "maxNoOfPodsToEvictPerNode: must be between 0"),
        Arguments.of("upstream empty profiles", upstream + "profiles: []\n", "at least one profile is required"),
        Arguments.of("v1alpha1 nothing enabled", "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies: {PodLifeTime: {enabled: false}}\n",
            "no strategy is enabled"),
        Arguments.of("koordinator null resource weight", "apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\nprofiles: [{name: k,"
            + " plugins: {balance: {enabled: [{name: LowNodeLoad}]}}, pluginConfig: [{name: LowNodeLoad, args: {lowThresholds: {cpu: 45},"
            + " highThresholds: {cpu: 75}, resourceWeights: {cpu: null}}}]}]\n",
            "profiles[0].pluginConfig[0].args.resourceWeights.cpu: must be a whole number, got nothing"),
        Arguments.of("v1alpha1 phases as a string", "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies: {PodLifeTime:"
            + " {enabled: true, params: {podLifeTime: {maxPodLifeTimeSeconds: 86400, podStatusPhases: Pending}}}}\n",
            "strategies.PodLifeTime.params.podLifeTime.podStatusPhases: must be a list, got \"Pending\""),
        Arguments.of("koordinator wrong evictQPS", "apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\nprofiles: [{name: k,"
            + " pluginConfig: [{name: MigrationController, args: {evictQPS: fast}}]}]\n", "evictQPS: must be a number"),
        Arguments.of("koordinator LowNodeLoad nodePools", "apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\nprofiles: [{name: k,"
            + " plugins: {balance: {enabled: [{name: LowNodeLoad}]}}, pluginConfig: [{name: LowNodeLoad, args: {lowThresholds: {cpu: 20},"
            + " highThresholds: {cpu: 70}, nodePools: [{name: gpu}]}}]}]\n", "profiles[0].pluginConfig[0].args.nodePools: not supported"),
        Arguments.of("upstream duplicate protection", upstream + "profiles: [{name: p, pluginConfig: [{name: DefaultEvictor, args:"
            + " {podProtections: {extraEnabled: [PodsWithPVC, PodsWithPVC]}}}]}]\n",
            "profiles[0].pluginConfig[0].args.podProtections.extraEnabled[1]: duplicate protection \"PodsWithPVC\" in extraEnabled"),
        Arguments.of("upstream Prometheus utilization without its provider", upstream + "profiles: [{name: p, pluginConfig: [{name: LowNodeUtilization, args:"
            + " {thresholds: {MetricResource: 30}, targetThresholds: {MetricResource: 70}, metricsUtilization: {source: Prometheus,"
            + " prometheus: {query: instance:node_cpu:rate:sum}}}}], plugins: {balance: {enabled: [LowNodeUtilization]}}}]\n",
            "metricsUtilization.source: source Prometheus needs the policy's metricsProviders entry with source: Prometheus"),
        Arguments.of("upstream LowNodeLoad", upstream + "profiles: [{name: p, pluginConfig: [{name: LowNodeLoad, args: {}}],"
            + " plugins: {balance: {enabled: [LowNodeLoad]}}}]\n", "LowNodeLoad is Koordinator's plugin, not the descheduler's"));
  }

  static Stream<Arguments> snapshots() {
    return Stream.of(
        Arguments.of("empty", "", "the snapshot is empty"),
        Arguments.of("not an object", "- a\n- b\n", "not a Kubernetes object or List"),
        Arguments.of("items not a list", "apiVersion: v1\nkind: List\nitems: 5\n", "items: must be a list"),
        Arguments.of("item without kind", "apiVersion: v1\nkind: List\nitems: [{metadata: {name: x}}]\n", "an item without kind"),
        Arguments.of("pod without namespace", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "a Pod without metadata.namespace"),
        Arguments.of("pod without name", "apiVersion: v1\nkind: Pod\nmetadata: {namespace: n}\n", "an object without metadata.name"),
        Arguments.of("metadata wrong type", "apiVersion: v1\nkind: Pod\nmetadata: 5\n", "not a valid Pod"),
        Arguments.of("usage of another API", "apiVersion: example.com/v1\nkind: NodeMetric\nmetadata: {name: n}\n",
            "a NodeMetric must be apiVersion slo.koordinator.sh/v1alpha1"),
        Arguments.of("usage not a quantity", "apiVersion: metrics.k8s.io/v1beta1\nkind: NodeMetrics\nmetadata: {name: n}\n"
            + "timestamp: \"2026-01-01T00:00:00Z\"\nusage: {cpu: lots}\n", "not a valid NodeMetrics"),
        Arguments.of("garbage", "{{{", "not valid YAML or JSON"),
        Arguments.of("a policy", GOOD_POLICY, "snapshot.yaml: holds no pods or nodes, only PodSweeperPolicy: a snapshot is what `kubectl get"),
        Arguments.of("a deployment", "apiVersion: v1\nkind: List\nitems: [{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}},"
            + " {apiVersion: v1, kind: Service, metadata: {name: s}}]\n", "holds no pods or nodes, only Deployment, Service"),
        Arguments.of("an empty list", GOOD_SNAPSHOT, "snapshot.yaml: holds no objects"),
        Arguments.of("year 999999999", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n, creationTimestamp: \"2026-01-01T00:00:00Z\"}\n"
            + "status: {phase: Failed, containerStatuses: [{name: c, state: {terminated: {exitCode: 1, finishedAt: \"+999999999-12-31T23:00:00Z\"}}}]}\n",
            "status.containerStatuses[0].state.terminated.finishedAt: not an RFC 3339 time (its year must have four digits): \"+999999999"),
        Arguments.of("creation in year 999999999", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n,"
            + " creationTimestamp: \"+999999999-12-31T23:00:00Z\"}\n", "metadata.creationTimestamp: not an RFC 3339 time"));
  }

  @ParameterizedTest(name = "policy: {0}")
  @MethodSource("policies")
  void aBadPolicyIsRefused(String what, String policy, String message, @TempDir Path dir) throws Exception {
    Path p = Files.writeString(dir.resolve("policy.yaml"), policy);
    Path s = Files.writeString(dir.resolve("snapshot.yaml"), GOOD_SNAPSHOT);
    assertRefused(CliRun.of("plan", "--policy", p.toString(), "--snapshot", s.toString()), message);
    assertRefused(CliRun.of("validate", "--policy", p.toString()), message);
  }

  @ParameterizedTest(name = "snapshot: {0}")
  @MethodSource("snapshots")
  void aBadSnapshotIsRefused(String what, String snapshot, String message, @TempDir Path dir) throws Exception {
    Path p = Files.writeString(dir.resolve("policy.yaml"), GOOD_POLICY);
    Path s = Files.writeString(dir.resolve("snapshot.yaml"), snapshot);
    assertRefused(CliRun.of("plan", "--policy", p.toString(), "--snapshot", s.toString()), message);
  }

  @Test
  void aSnapshotLargerThan256MiBIsRefusedBeforeItIsRead(@TempDir Path dir) throws Exception {
    Path p = Files.writeString(dir.resolve("policy.yaml"), GOOD_POLICY);
    Path s = dir.resolve("huge.yaml");
    try (RandomAccessFile file = new RandomAccessFile(s.toFile(), "rw")) {
      file.setLength(700L << 20); // sparse: no disk, and no heap unless it is read
    }
    assertRefused(CliRun.of("plan", "--policy", p.toString(), "--snapshot", s.toString()),
        s + ": larger than 256 MiB, the most a snapshot may be (700 MiB)");
  }

  private static void assertRefused(CliRun run, String message) {
    assertThat(run.exitCode()).as(run.err()).isEqualTo(2);
    assertThat(run.err()).startsWith("error: ").contains(message).doesNotContain("\tat ").doesNotContain("Exception");
    assertThat(run.out()).isEmpty();
  }
}
