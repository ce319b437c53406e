package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {
  private String out = "";
  private String err = "";

  private int run(String... args) {
    CliRun r = CliRun.of(args);
    out = r.out();
    err = r.err();
    return r.exitCode();
  }

  /** {@code plan} prints MakeRoom's plans, a line each, and as JSON with every move. */
  @Test
  void planPrintsRoomPlans() throws Exception {
    String[] args = {"plan", "--policy", "config/examples/anti-affinity-fragmentation-makeroom.yaml", "--snapshot",
        "config/examples/anti-affinity-fragmentation-snapshot.yaml", "--now", "2026-01-01T12:00:00Z"};
    CliRun table = CliRun.of(args);
    assertThat(table.exitCode()).isZero();
    assertThat(table.out()).contains("plan: shop/cache-7d9f-c3 (Pending: insufficient cpu) fits node-2 after moving worker-5b8c-p7"
        + " node-2→node-3 (1400m cpu free there)").contains("0 decision(s), 1 plan(s) for 10 pod(s)");
    String[] json = java.util.Arrays.copyOf(args, args.length + 2);
    json[args.length] = "--output";
    json[args.length + 1] = "json";
    JsonNode plan = new ObjectMapper().readTree(CliRun.of(json).out()).path("plans").get(0);
    assertThat(plan.path("target").asText()).isEqualTo("node-2");
    assertThat(plan.path("moves").get(0).path("uid").asText()).isEqualTo("uid-worker-5b8c-p7");
  }

  @Test
  void validateSaysOk() {
    assertThat(run("validate", "--policy", "config/policy.yaml")).isZero();
    // Rules, not "1 strategy" (issue 41): config/policy.yaml has five, in the one profile of Podsweeper's rules.
    assertThat(out).isEqualTo("OK: config/policy.yaml, 5 rules in 1 profile(s)\n");
  }

  /**
   * A rule that would select every running pod of its namespaces (issue 41: the guard stopped it live) is a warning
   * before: from validate and from plan, which also flags the evictions a PodDisruptionBudget refuses now.
   */
  @Test
  void validateAndPlanWarnAboutARuleForEveryRunningPodAndPlanAboutAnEvictionAPdbRefuses(@TempDir Path dir) throws Exception {
    Path policy = Files.writeString(dir.resolve("policy.yaml"), """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules:
          - {name: restart-all, namespaces: {include: [shop]}, states: [Running], maxAge: 1h}
          - {name: restart-web-daily, namespaces: {include: [shop]}, podSelector: {matchLabels: {app: web}}, states: [Running], maxAge: 1h}
          - {name: weekly, states: [Running], maxAge: 7d}
        """);
    Path snapshot = Files.writeString(dir.resolve("snapshot.yaml"), """
        apiVersion: v1
        kind: List
        items:
        - apiVersion: v1
          kind: Node
          metadata: {name: n1}
          status: {conditions: [{type: Ready, status: "True"}], allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
        - apiVersion: v1
          kind: Pod
          metadata:
            name: web-1
            namespace: shop
            uid: u-web-1
            creationTimestamp: "2026-01-01T00:00:00Z"
            labels: {app: web}
            ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-5c, uid: rs-1, controller: true}]
          spec: {nodeName: n1, containers: [{name: c, image: i}]}
          status:
            phase: Running
            startTime: "2026-01-01T00:00:00Z"
            conditions: [{type: Ready, status: "True", lastTransitionTime: "2026-01-01T00:00:10Z"}]
            containerStatuses: [{name: c, ready: true, restartCount: 0, state: {running: {startedAt: "2026-01-01T00:00:05Z"}}}]
        - apiVersion: policy/v1
          kind: PodDisruptionBudget
          metadata: {name: web, namespace: shop}
          spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
          status: {disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1}
        """);

    assertThat(run("validate", "--policy", policy.toString())).isZero();
    assertThat(out.lines().filter(l -> l.startsWith("warning: "))).singleElement().asString()
        .startsWith("warning: rule restart-all selects every running pod of namespace(s) shop once it is older than 1h:");

    assertThat(run("plan", "--policy", policy.toString(), "--snapshot", snapshot.toString(), "--now", "2026-01-01T12:00:00Z")).isZero();
    assertThat(out.lines().filter(l -> l.startsWith("warning: "))).containsExactly(
        out.lines().filter(l -> l.startsWith("warning: rule restart-all ")).findFirst().orElseThrow(),
        "warning: eviction of shop/web-1 would be refused now: PodDisruptionBudget shop/web allows no disruption"
            + " (status.disruptionsAllowed 0); the service retries it with backoff until the budget allows one");
  }

  /** What the limits hold back in the pass is not in the table, so {@code plan} says how many, and by which cap. */
  @Test
  void planSaysWhatTheLimitsHoldBack(@TempDir Path dir) throws Exception {
    Path policy = Files.writeString(dir.resolve("p.yaml"), """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        limits: {maxTotal: 1}
        rules: [{name: finished, states: [Succeeded, Failed], maxAgeAfterFinish: 1m}]
        """);
    assertThat(run("plan", "--policy", policy.toString(), "--snapshot", "config/examples/snapshot.yaml", "--now", "2030-01-01T00:00:00Z"))
        .isZero();
    assertThat(out).contains("1 decision(s) for ").containsPattern("held back: [1-9][0-9]* due removal\\(s\\) not in the table, over the"
        + " policy's limits for one pass \\(maximum number of evicted pods per a descheduling cycle reached: [1-9][0-9]*\\); the service takes"
        + " them in later passes, `explain` says it per pod");
    assertThat(run("plan", "--policy", policy.toString(), "--snapshot", "config/examples/snapshot.yaml", "--now", "2030-01-01T00:00:00Z",
        "--output", "json")).isZero();
    assertThat(new ObjectMapper().readTree(out).path("heldBack").path("maximum number of evicted pods per a descheduling cycle reached")
        .asInt()).isPositive();
  }

  @Test
  void aBadPolicyIsExitTwoWithThePlaceAndNoStackTrace(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules: [{name: a, states: [Crashloop]}]\n");
    assertThat(run("plan", "--policy", bad.toString(), "--snapshot", "config/examples/snapshot.yaml")).isEqualTo(2);
    assertThat(err).startsWith("error: rules[0].states[0]: unknown state \"Crashloop\"").doesNotContain("\tat ");
    assertThat(out).isEmpty();
  }

  @Test
  void badFlagsAreExitTwo() {
    assertThat(run("plan", "--policy", "config/policy.yaml", "--snapshot", "config/examples/snapshot.yaml", "--now", "yesterday"))
        .isEqualTo(2);
    assertThat(err).contains("--now: not an RFC 3339 instant");
    assertThat(run("plan", "--bogus")).isEqualTo(2);
    assertThat(run("validate", "--policy", "no/such/file.yaml")).isEqualTo(2);
    // The probes' listener is theirs alone: never the HTTP port's.
    assertThat(run("run", "--policy", "config/policy.yaml", "--http-port", "9000", "--probe-port", "9000")).isEqualTo(2);
    assertThat(err).startsWith("error: --probe-port: must differ from --http-port (9000)");
    assertThat(run("run", "--policy", "config/policy.yaml", "--probe-port", "70000")).isEqualTo(2);
    assertThat(err).startsWith("error: --probe-port: must be between 0 and 65535, got 70000");
  }

  @Test
  void runRefusesToRemoveWhenTheKillSwitchHasNoNamespace(@TempDir Path dir) throws Exception {
    assumeTrue(System.getenv("POD_NAMESPACE") == null, "POD_NAMESPACE is set in this environment");
    Path policy = Files.writeString(dir.resolve("policy.yaml"),
        "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules: [{name: r, states: [Failed]}]\n");
    // A kubeconfig whose context names no namespace, for a server that is not there: refused before any connection.
    Path kubeconfig = nowhere(dir);
    assertThat(run("run", "--policy", policy.toString(), "--kubeconfig", kubeconfig.toString())).isEqualTo(2);
    assertThat(err).startsWith("error: --namespace: no namespace for the kill switch (configmap podsweeper-control)")
        .contains("--dry-run").contains("--control-configmap ''").doesNotContain("\tat ");
    assertThat(err.strip()).doesNotContain("\n");
    assertThat(out).isEmpty();
  }

  @Test
  void everyCommandHasHelpThatAsksForNothing() {
    for (String command : new String[] {"plan", "explain", "validate", "convert", "run"}) {
      assertThat(run(command, "--help")).as(command + " --help: " + err).isZero();
      assertThat(out).as(command).startsWith("Usage: podsweeper " + command);
      assertThat(run("help", command)).as("help " + command + ": " + err).isZero();
      assertThat(out).as(command).startsWith("Usage: podsweeper " + command);
    }
  }

  /** README's synopsis of each command names every option its --help lists. */
  @Test
  void readmeSynopsisNamesEveryOption() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    for (String command : new String[] {"plan", "explain", "validate", "convert", "run"}) {
      String synopsis = readme.lines().filter(l -> l.startsWith("| `podsweeper " + command + " ")).findFirst().orElseThrow();
      synopsis = synopsis.substring(0, synopsis.indexOf("` |"));
      assertThat(run(command, "--help")).isZero();
      String usage = out.lines().takeWhile(l -> !l.isEmpty() && (l.startsWith("Usage:") || l.startsWith(" ")))
          .reduce("", (a, b) -> a + b + "\n");
      java.util.regex.Matcher option = java.util.regex.Pattern.compile("--[a-z][a-z-]*").matcher(usage);
      while (option.find()) {
        if (!option.group().equals("--help") && !option.group().equals("--version")) {
          assertThat(synopsis).as(command + " " + option.group()).containsPattern(option.group() + "\\b(?!-)");
        }
      }
    }
  }

  @Test
  void anUnreachableServerIsOneLineNamingIt(@TempDir Path dir) throws Exception {
    Path policy = Files.writeString(dir.resolve("policy.yaml"),
        "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\nrules: [{name: r, states: [Failed]}]\n");
    Path kubeconfig = nowhere(dir);
    assertThat(run("run", "--policy", policy.toString(), "--kubeconfig", kubeconfig.toString(), "--dry-run", "--http-port", "0",
        "--http-host", "127.0.0.1", "--control-configmap", "")).isEqualTo(1);
    assertThat(err).startsWith("error: cannot reach the API server at https://127.0.0.1:1/: connection refused")
        .contains("--kubeconfig").doesNotContain("\tat ").doesNotContain("Exception");
    assertThat(err.strip()).doesNotContain("\n");
    assertThat(run("explain", "a/b", "--policy", policy.toString(), "--kubeconfig", kubeconfig.toString())).isEqualTo(1);
    assertThat(err).startsWith("error: cannot reach the API server at https://127.0.0.1:1/").doesNotContain("\tat ");
  }

  @Test
  void planPrintsJsonDecisions() throws Exception {
    assertThat(run("plan", "--policy", "config/policy.yaml", "--snapshot", "config/examples/snapshot.yaml",
        "--now", "2026-01-01T12:00:00Z", "--output", "json")).isZero();
    JsonNode root = new ObjectMapper().readTree(out);
    assertThat(root.get("decisions")).hasSize(5);
    for (String field : new String[] {"namespace", "name", "uid", "strategy", "profile", "rule", "action", "reason"}) {
      assertThat(root.get("decisions").get(0).hasNonNull(field)).as(field).isTrue();
    }
    assertThat(root.get("decisions").get(0).get("action").asText()).isIn("delete", "evict");
  }

  @Test
  void planWithinAlsoPrintsTheForecast() throws Exception {
    List<String> plan = List.of("plan", "--policy", "config/policy.yaml", "--snapshot", "config/examples/snapshot.yaml",
        "--now", "2026-01-01T12:00:00Z", "--within", "6h");
    assertThat(run(plan.toArray(String[]::new))).isZero();
    assertThat(out).contains("5 decision(s) for 17 pod(s) at 2026-01-01T12:00:00Z")
        .contains("forecast: 8 removal(s) due by 2026-01-01T18:00:00Z (within 6h)")
        .containsPattern("\\n2026-01-01T13:00:00Z +web +api-5d4c8b9f7-m2k9d +evict +PodLifeTime +stuck-containers ")
        .contains("note: pod-by-pod rules only");
    assertThat(run(Stream.concat(plan.stream(), Stream.of("--output", "json")).toArray(String[]::new))).isZero();
    JsonNode forecast = new ObjectMapper().readTree(out).get("forecast");
    assertThat(forecast.get("until").asText()).isEqualTo("2026-01-01T18:00:00Z");
    assertThat(forecast.get("removals")).hasSize(8);

    assertThat(run("plan", "--policy", "config/policy.yaml", "--snapshot", "config/examples/snapshot.yaml", "--within", "40d")).isEqualTo(2);
    assertThat(err.strip()).isEqualTo("error: --within: 40d is longer than 30d");
    assertThat(run("plan", "--policy", "config/policy.yaml", "--snapshot", "config/examples/snapshot.yaml", "--kubeconfig", "k")).isEqualTo(2);
    assertThat(err.strip()).isEqualTo("error: --snapshot: give --snapshot or --kubeconfig, not both");
  }

  /** config/examples/finished-pod-budget.yaml: a burst in ci over its fair share, shown by plan, the forecast and explain. */
  @Test
  void planForecastAndExplainShowTheFinishedPodBudget() throws Exception {
    String[] common = {"--policy", "config/examples/finished-pod-budget.yaml", "--snapshot", "config/examples/finished-pods-snapshot.yaml",
        "--now", "2026-01-01T12:00:00Z"};
    assertThat(run(Stream.concat(Stream.of("plan", "--within", "1h"), Stream.of(common)).toArray(String[]::new))).isZero();
    assertThat(out).containsPattern("\nci +build-1002-x7k2p +delete +FinishedPodBudget +finishedPodBudget +budget: ci holds 12 finished pods,"
            + " fair share 6 of 12; finished 50m ago\n")
        .contains("note: finishedPodBudget: 18 finished pods counted after the rules' removals, budget 12 (at most 8 per namespace,"
            + " minRetention 30m)\n", "note: finishedPodBudget cannot be held in ci: 1 over its fair share 6 once its removable pods are"
            + " gone (1 too young)\n", "5 decision(s) for 18 pod(s)", "forecast: 7 removal(s) due by 2026-01-01T13:00:00Z (within 1h)")
        .containsPattern("\n2026-01-01T12:05:00Z +ci +build-1007-x7k2p +delete +FinishedPodBudget ")
        .doesNotContain("build-1001-x7k2p", "data ", "report-");
    assertThat(run(Stream.concat(Stream.of("plan", "--output", "json"), Stream.of(common)).toArray(String[]::new))).isZero();
    assertThat(new ObjectMapper().readTree(out).get("decisions").get(0).get("strategy").asText()).isEqualTo("FinishedPodBudget");
    assertThat(run(concat("explain", "ci/build-1001-x7k2p", common))).isZero();
    assertThat(out).contains("  this pod: protected: annotated podsweeper.io/protect", "verdict: never, as the pod is now");
    assertThat(run(concat("explain", "ci/build-1007-x7k2p", common))).isZero();
    assertThat(out).contains("finished-pod budget finishedPodBudget (Failed, Succeeded, minRetention 30m): budget: ci holds 12 finished"
        + " pods, fair share 6 of 12, 6 over", "verdict: delete at 2026-01-01T12:05:00Z by FinishedPodBudget (rule finishedPodBudget)");
  }

  @Test
  void convertPrintsTheNativeFormat() {
    assertThat(run("convert", "--policy", "config/examples/descheduler-v1alpha1.yaml")).isZero();
    assertThat(out).startsWith("apiVersion: podsweeper.io/v1alpha1").contains("name: strategy-PodLifeTime-profile");
  }

  @Test
  void explainSaysWhenAndWhyOrWhyNever() {
    String[] common = {"--policy", "config/policy.yaml", "--snapshot", "config/examples/snapshot.yaml", "--now", "2026-01-01T12:00:00Z"};
    assertThat(run(concat("explain", "web/api-5d4c8b9f7-zt6rn", common))).isZero();
    assertThat(out).contains("verdict: evict now, by PodLifeTime (rule stuck-containers)");
    assertThat(run(concat("explain", "web/api-5d4c8b9f7-m2k9d", common))).isZero();
    assertThat(out).contains("verdict: evict at 2026-01-01T13:00:00Z by PodLifeTime (rule stuck-containers)");
    assertThat(run(concat("explain", "default/debug-shell", common))).isZero();
    assertThat(out).contains("verdict: never, as the pod is now");
    assertThat(run(concat("explain", "web/no-such-pod", common))).isEqualTo(2);
    assertThat(err).contains("no such pod");
    assertThat(run(concat("explain", "nonamespace", common))).isEqualTo(2);
    assertThat(run("explain", "a/b", "--policy", "config/policy.yaml", "--kubeconfig", "/no/such/kubeconfig")).isEqualTo(2);
    assertThat(err).contains("--kubeconfig: cannot read /no/such/kubeconfig");
  }

  /** A kubeconfig for port 1 on loopback, where nothing listens, whose context names no namespace. */
  private static Path nowhere(Path dir) throws Exception {
    return Files.writeString(dir.resolve("kubeconfig"), """
        apiVersion: v1
        kind: Config
        clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
        users: [{name: u, user: {token: t}}]
        contexts: [{name: c, context: {cluster: c, user: u}}]
        current-context: c
        """);
  }

  private static String[] concat(String command, String pod, String[] rest) {
    String[] all = new String[rest.length + 2];
    all[0] = command;
    all[1] = pod;
    System.arraycopy(rest, 0, all, 2, rest.length);
    return all;
  }
}
