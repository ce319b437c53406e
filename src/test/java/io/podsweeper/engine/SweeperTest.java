package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.CleanupPolicies;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.policy.YamlDocuments;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.safety.GuardWindowStore;
import io.podsweeper.strategy.Decision;
import io.podsweeper.testing.FakePodSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The live loop without an API server: an in-memory pod source and a recorder of removal requests. */
class SweeperTest {
  private static final Instant OLD = Instant.now().minus(Duration.ofHours(5));
  private static final String HEAD = "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n";

  private final FakePodSource source = new FakePodSource();
  private final List<Decision> sent = new CopyOnWriteArrayList<>();
  private final RecentDecisions recent = new RecentDecisions(100);

  private Sweeper sweeper(String policyTail, Function<Decision, RequestResult.Outcome> answer) {
    return sweeper(PolicyLoader.parse(HEAD + policyTail, "test"), answer);
  }

  private Sweeper sweeper(Policy policy, Function<Decision, RequestResult.Outcome> answer) {
    return new Sweeper(policy, source, (d, dryRun) -> {
      if (!dryRun) {
        sent.add(d);
      }
      return new RequestResult(answer.apply(d), 200, "");
    }, new Metrics(), Clock.systemUTC(), recent);
  }

  private static com.fasterxml.jackson.databind.JsonNode yaml(String text) {
    return YamlDocuments.read(text, "test", 1 << 16).get(0);
  }

  private static PodRecord failed(String ns, String name, String node) {
    return pod(name).ns(ns).on(node).created(OLD).phase("Failed").container(PodFixtures.terminatedAt("c", "Error", 1, OLD.plusSeconds(1))).build();
  }

  /** Pods appearing in the cache, each announced as an informer event would. */
  private void arrive(Sweeper s, PodRecord... pods) {
    for (PodRecord p : pods) {
      source.put(p);
      s.podChanged(p);
    }
  }

  /** Failed pods a0, b0, a1, b1, ... in namespaces a and b, all on node n1. */
  private static PodRecord[] failedInAAndB(int each) {
    List<PodRecord> pods = new java.util.ArrayList<>();
    for (int i = 0; i < each; i++) {
      pods.add(failed("a", "a" + i, "n1"));
      pods.add(failed("b", "b" + i, "n1"));
    }
    return pods.toArray(PodRecord[]::new);
  }

  private List<String> results() {
    return recent.list().stream().map(e -> e.decision().podKey() + " " + e.result()).toList();
  }

  @Test
  void limitsPerNamespaceAndNodeHoldWithinAWindow() {
    try (Sweeper s = sweeper("limits: {maxPerNamespace: 2, maxPerNode: 3}\nrules: [{name: r, states: [Failed]}]\n",
        d -> RequestResult.Outcome.REMOVED)) {
      s.start();
      arrive(s, failedInAAndB(4));
      await().atMost(Duration.ofSeconds(5)).until(() -> recent.list().size() == 8);
      assertThat(sent).hasSize(3);
      assertThat(sent.stream().filter(d -> d.namespace().equals("a"))).hasSizeLessThanOrEqualTo(2);
      assertThat(results()).filteredOn(r -> r.endsWith("limited")).hasSize(5);
    }
  }

  @Test
  void aReloadDoesNotStartTheLimitsWindowOver() {
    try (Sweeper s = sweeper("limits: {maxPerNamespace: 1}\nrules: [{name: r, states: [Failed]}]\n", d -> RequestResult.Outcome.REMOVED)) {
      s.start();
      arrive(s, failed("a", "first", "n1"));
      await().atMost(Duration.ofSeconds(5)).until(() -> sent.size() == 1);
      s.reload(PolicyLoader.parse(HEAD + "limits: {maxPerNamespace: 1}\n"
          + "rules: [{name: r, states: [Failed]}, {name: other, states: [Succeeded]}]\n", "test"));
      arrive(s, failed("a", "second", "n1"));
      await().atMost(Duration.ofSeconds(5)).until(() -> results().contains("a/second limited"));
      assertThat(sent).hasSize(1);
    }
  }

  /** The answer of a server that removes the pod: it leaves the cache. */
  private RequestResult.Outcome removed(Decision d) {
    source.pods.remove(d.podKey());
    return RequestResult.Outcome.REMOVED;
  }

  /**
   * A replica that lost its lease and won it again (an API-server blip past the renew deadline) looks at every pod
   * at once, but within the limits window it was in. (Before, the new term's pass started a new window: each blip gave
   * another maxTotal.)
   */
  @Test
  void aNewTermDoesNotStartTheLimitsWindowOver() {
    try (Sweeper s = sweeper("fullPassInterval: 1h\nlimits: {maxTotal: 1}\nrules: [{name: r, states: [Failed]}]\n", this::removed)) {
      s.start();
      arrive(s, failed("a", "a0", "n1"), failed("b", "b0", "n1"), failed("c", "c0", "n1"));
      await().atMost(Duration.ofSeconds(5)).until(() -> recent.list().size() == 3);
      assertThat(sent).hasSize(1);

      s.setLeading(false);
      s.setLeading(true);

      await().pollDelay(Duration.ofMillis(1500)).until(() -> true); // the new term's pass: at once, on the timers' thread
      assertThat(sent).as("maxTotal 1 in the 1h window, across a new term").hasSize(1);
    }
  }

  /**
   * A reload that changes fullPassInterval reschedules the full passes, and so the limits windows. (Before, the
   * interval at start stayed in force until a restart.)
   */
  @Test
  void aReloadedFullPassIntervalTakesEffect() {
    String rules = "limits: {maxTotal: 1}\nrules: [{name: r, states: [Failed]}]\n";
    try (Sweeper s = sweeper("fullPassInterval: 1h\n" + rules, this::removed)) {
      s.start();
      arrive(s, failed("a", "a0", "n1"), failed("b", "b0", "n1"));
      await().atMost(Duration.ofSeconds(5)).until(() -> recent.list().size() == 2);
      assertThat(sent).hasSize(1);

      s.reload(PolicyLoader.parse(HEAD + "fullPassInterval: 1s\n" + rules, "test"));

      await().atMost(Duration.ofSeconds(5)).until(() -> sent.size() == 2);
    }
  }

  /** A ClusterPodCleanupPolicy's maxRemovalsPerHourPerNamespace holds for namespaced policies, not for the file's rules. */
  @Test
  void namespacedPoliciesStayWithinTheirHourlyCap() {
    var rails = CleanupPolicies.clusterRails(Optional.of(yaml("{allowTerminated: true, maxRemovalsPerHourPerNamespace: 2}")));
    var namespaced = CleanupPolicies.judge(new CleanupPolicies.Source("a", "cleanup",
        yaml("rules: [{name: failed, states: [Failed], maxAgeAfterFinish: 1h}]")), rails);
    var file = PolicyLoader.parse(HEAD
        + "rules: [{name: file, namespaces: {include: [b]}, states: [Failed]}]\n", "test");
    try (Sweeper s = sweeper(CleanupPolicies.compose(file, List.of(namespaced)), d -> RequestResult.Outcome.REMOVED)) {
      s.start();
      arrive(s, failedInAAndB(4));
      await().atMost(Duration.ofSeconds(5)).until(() -> recent.list().size() == 8);
      assertThat(sent.stream().filter(d -> d.namespace().equals("a"))).hasSize(2)
          .allSatisfy(d -> assertThat(d.profile()).isEqualTo("PodCleanupPolicy a/cleanup"));
      assertThat(sent.stream().filter(d -> d.namespace().equals("b"))).as("the file's rules are not capped").hasSize(4);
      assertThat(recent.list()).filteredOn(e -> e.result().equals("limited")).hasSize(2)
          .allSatisfy(e -> assertThat(e.message()).contains("maxRemovalsPerHourPerNamespace 2"));
    }
  }

  /**
   * A request that got no answer keeps its place under the hourly cap (it may have happened); its retry takes that
   * place over instead of waiting for a second one, which under a cap of 1 would hold it for an hour.
   */
  @Test
  void aRetryAfterNoAnswerIsNotHeldByItsOwnPlaceUnderTheHourlyCap() {
    assertThat(underAnHourlyCapAfterARetry(1, killSwitch -> {}, RequestResult.Outcome.REMOVED)).isEqualTo("limited");
  }

  /**
   * Also when the retry is counted anew by the guard (here after a resume): of the two requests for one pod version at
   * most one happens, so they hold one place under the cap, and a second pod fits under a cap of 2.
   */
  @Test
  void aRetryCountedAnewTakesItsFirstRequestsPlaceUnderTheHourlyCap() {
    assertThat(underAnHourlyCapAfterARetry(2, SweeperTest::resume, RequestResult.Outcome.REMOVED)).isEqualTo("success");
  }

  /**
   * But a retry counted anew that then fails (here: the pod changed, as the first request's eviction would change it)
   * leaves the first request its place: that one may have gone.
   */
  @Test
  void aRetryCountedAnewThatFailsLeavesItsFirstRequestsPlaceUnderTheHourlyCap() {
    assertThat(underAnHourlyCapAfterARetry(1, SweeperTest::resume, RequestResult.Outcome.CONFLICT)).isEqualTo("limited");
  }

  /** So too when the retry is accepted to be carried out in background (an evacuation). */
  @Test
  void aRetryCountedAnewAcceptedInBackgroundTakesItsFirstRequestsPlaceUnderTheHourlyCap() {
    assertThat(underAnHourlyCapAfterARetry(2, SweeperTest::resume, RequestResult.Outcome.REFUSED)).isEqualTo("success");
  }

  /**
   * A retry that only starts a migration job (made without the pod's preconditions) proves nothing: when the first
   * request's eviction turns out to have landed late and the job then fails, the first request keeps its place.
   */
  @Test
  void aRetryWhoseJobFailsLeavesItsFirstRequestsPlaceUnderTheHourlyCap() {
    assertThat(underAnHourlyCapAfterARetry(1, SweeperTest::resume, RequestResult.Outcome.STARTED)).isEqualTo("limited");
  }

  private static PodFixtures.PodBuilder running(String name) {
    return pod(name).ns("a").on("n1").uid("uid-" + name).created(OLD).phase("Running").container(PodFixtures.running("c"));
  }

  private static void resume(KillSwitch killSwitch) {
    killSwitch.pause("by hand");
    assertThat(killSwitch.resume()).isEmpty();
  }

  /**
   * Under a namespaced policy capped at {@code cap} removals an hour: running pod a0's first request gets no answer, then
   * {@code meanwhile}, then its retry (5 s later) gets {@code retried} (REFUSED: accepted as an evacuation; STARTED: a
   * migration job, which then fails); returns what becomes of pod a1.
   */
  private String underAnHourlyCapAfterARetry(int cap, Consumer<KillSwitch> meanwhile, RequestResult.Outcome retried) {
    var rails = CleanupPolicies.clusterRails(Optional.of(yaml("{maxRemovalsPerHourPerNamespace: " + cap + "}")));
    var namespaced = CleanupPolicies.judge(new CleanupPolicies.Source("a", "cleanup", yaml("rules: [{name: old, maxAge: 1h}]")), rails);
    var file = PolicyLoader.parse(HEAD + "guard: {maxNamespaceShare: 1.0, maxClusterShare: 1.0}\n"
        + "rules: [{name: file, namespaces: {include: [b]}, maxAge: 1h}]\n", "test");
    Metrics metrics = new Metrics();
    KillSwitch killSwitch = new KillSwitch(metrics, (paused, reason, over) -> true);
    java.util.concurrent.atomic.AtomicInteger requests = new java.util.concurrent.atomic.AtomicInteger();
    try (Sweeper s = new Sweeper(CleanupPolicies.compose(file, List.of(namespaced)), source, (d, dryRun) -> {
      if (requests.incrementAndGet() == 1) {
        return new RequestResult(RequestResult.Outcome.ERROR, RequestResult.NO_ANSWER, "no answer from the API server: timed out");
      }
      RequestResult.Outcome outcome = d.name().equals("a0") ? retried : RequestResult.Outcome.REMOVED;
      return switch (outcome) {
        case REMOVED -> {
          source.pods.remove(d.podKey()); // gone, as the informer will show: no later pass sends it again
          yield new RequestResult(outcome, 200, "");
        }
        case REFUSED -> new RequestResult(outcome, 429, "Eviction triggered evacuation");
        case STARTED -> new RequestResult(outcome, 201, "PodMigrationJob created");
        default -> new RequestResult(outcome, 409, "the object has been modified");
      };
    }, metrics, Clock.systemUTC(), recent, killSwitch, why -> {}, GuardWindowStore.NONE)) {
      s.start();
      arrive(s, running("a0").annotation(PodRecord.REQUEST_EVICT_ONLY_ANNOTATION, "").build());
      await().atMost(Duration.ofSeconds(3)).until(() -> requests.get() == 1);
      meanwhile.accept(killSwitch);
      await().atMost(Duration.ofSeconds(15)).until(() -> !recent.list(e -> e.decision().name().equals("a0")).get(0).result().equals("error"));
      if (retried == RequestResult.Outcome.CONFLICT || retried == RequestResult.Outcome.STARTED) {
        // What made the pod change: the first request, carried out after all.
        arrive(s, running("a0").rv("2").terminating().build());
      }
      if (retried == RequestResult.Outcome.STARTED) {
        s.jobs().ended("uid-a0"); // the job fails: its pod is being deleted
      }
      arrive(s, running("a1").build());
      await().atMost(Duration.ofSeconds(3)).until(() -> recent.list().stream().anyMatch(e -> e.decision().name().equals("a1")));
      return recent.list(e -> e.decision().name().equals("a1")).get(0).result();
    }
  }

  @Test
  void dryRunSendsNothingAndReportsOnce() {
    try (Sweeper s = sweeper("dryRun: true\nrules: [{name: r, states: [Failed]}]\n", d -> RequestResult.Outcome.REMOVED)) {
      s.start();
      PodRecord p = failed("a", "p", "n1");
      arrive(s, p);
      s.podChanged(p);
      await().atMost(Duration.ofSeconds(5)).until(() -> !recent.list().isEmpty());
      await().during(Duration.ofMillis(300)).until(() -> recent.list().size() == 1);
      assertThat(sent).isEmpty();
      assertThat(results()).containsExactly("a/p dry-run");
    }
  }

  @Test
  void nothingIsSentFromAStaleCache() {
    source.current = false;
    try (Sweeper s = sweeper("rules: [{name: r, states: [Failed]}]\n", d -> RequestResult.Outcome.REMOVED)) {
      s.start();
      PodRecord p = failed("a", "p", "n1");
      arrive(s, p);
      await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5)).until(sent::isEmpty);
      source.current = true;
      await().atMost(Duration.ofSeconds(5)).until(() -> sent.size() == 1);
    }
  }

  @Test
  void aRecreatedPodIsJudgedAfreshAndARefusalBacksOff() {
    try (Sweeper s = sweeper("rules: [{name: r, states: [Running], maxAge: 1h}]\n", d -> RequestResult.Outcome.REFUSED)) {
      s.start();
      PodRecord old = pod("web").ns("a").created(OLD).uid("old").build();
      source.put(old);
      // Replaced before the worker gets to it by a young pod of the same name: nothing is sent.
      source.put(pod("web").ns("a").created(Instant.now()).uid("new").build());
      s.podChanged(old);
      await().during(Duration.ofMillis(500)).until(sent::isEmpty);
      assertThat(s.pendingDeadlines()).isEqualTo(1);

      PodRecord guarded = pod("guarded").ns("a").created(OLD).build();
      arrive(s, guarded);
      await().atMost(Duration.ofSeconds(3)).until(() -> sent.size() == 1);
      // Events keep coming, but the refused pod waits out its backoff (5 s) instead of being hammered.
      for (int i = 0; i < 5; i++) {
        s.podChanged(guarded);
      }
      await().during(Duration.ofSeconds(2)).until(() -> sent.size() == 1);
      assertThat(results()).containsExactly("a/guarded pdb-refused");
    }
  }

  @Test
  void anEvictionInBackgroundIsTrackedNotRepeatedAndEndsWithThePod() {
    List<Decision> seen = new CopyOnWriteArrayList<>();
    var policy = PolicyLoader.parse(HEAD
        + "limits: {maxInFlightPerOwner: 1}\nrules: [{name: r, states: [Running]}]\n", "test");
    Metrics metrics = new Metrics();
    try (Sweeper s = new Sweeper(policy, source, (d, dryRun) -> {
      seen.add(d);
      return new RequestResult(RequestResult.Outcome.REFUSED, 429, "Eviction triggered evacuation of VMI");
    }, metrics, Clock.systemUTC(), recent)) {
      s.start();
      PodRecord vm = pod("virt-launcher-a").ns("vms").created(OLD).ownedBy("VirtualMachineInstance", "vm")
          .annotation("descheduler.alpha.kubernetes.io/request-evict-only", "").build();
      PodRecord sibling = pod("virt-launcher-b").ns("vms").created(OLD).uid("uid-b").ownedBy("VirtualMachineInstance", "vm")
          .annotation("descheduler.alpha.kubernetes.io/request-evict-only", "").build();
      source.put(vm);
      s.podChanged(vm);
      await().atMost(Duration.ofSeconds(3)).until(() -> seen.size() == 1);
      // In progress: further events neither re-request it nor let a second pod of the same owner go.
      s.podChanged(vm);
      source.put(sibling);
      s.podChanged(sibling);
      await().during(Duration.ofMillis(500)).until(() -> seen.size() == 1);
      assertThat(results()).contains("vms/virt-launcher-a background", "vms/virt-launcher-b limited");
      // The pod goes away: the eviction counts as a success.
      source.pods.remove(vm.key());
      s.podDeleted(vm);
      assertThat(results().get(0)).isEqualTo("vms/virt-launcher-a success");
      assertThat(metrics.removals.labels("background", "PodLifeTime", "vms", "evict", "r").get()).isEqualTo(1.0);
      assertThat(metrics.removals.labels("success", "PodLifeTime", "vms", "evict", "r").get()).isEqualTo(1.0);
    }
  }

  @Test
  void aDeadlineFiresWithoutAnyEvent() {
    try (Sweeper s = sweeper("rules: [{name: r, states: [Running], maxAge: 2s}]\n", d -> RequestResult.Outcome.REMOVED)) {
      s.start();
      Instant created = Instant.now().minusMillis(500);
      PodRecord p = pod("p").ns("a").created(created).build();
      arrive(s, p);
      await().atMost(Duration.ofSeconds(1)).until(() -> s.pendingDeadlines() == 1);
      await().atMost(Duration.ofSeconds(4)).until(() -> sent.size() == 1);
      assertThat(Duration.between(created.plusSeconds(2), recent.list().get(0).time())).isLessThan(Duration.ofMillis(500));
      assertThat(s.pendingDeadlines()).isZero();
    }
  }

  /** 20 Failed pods in ci beside 3 in each of two quiet namespaces, against a cluster budget of 10. */
  private void burstBesideQuietNamespaces(Sweeper s) {
    for (int i = 0; i < 3; i++) {
      arrive(s, failed("quiet-a", "qa" + i, "n1"), failed("quiet-b", "qb" + i, "n1"));
    }
    for (int i = 0; i < 20; i++) {
      arrive(s, failed("ci", "ci" + i, "n1"));
    }
  }

  private static final String BUDGET_OF_10 = "finishedPodBudget: {maxPods: 10, minRetention: 10m, phases: [Failed]}\n";

  /**
   * The budget's removals go as pods finish (no full pass within the test: the interval is an hour) through the one
   * removal path: the bursting namespace gives up what is over its fair share (10 - 6 = 4), the quiet ones nothing.
   */
  @Test
  void aBudgetIsHeldAsPodsFinishFromTheBurstingNamespaceOnly() {
    try (Sweeper s = sweeper("fullPassInterval: 1h\n" + BUDGET_OF_10, this::removed)) {
      s.start();
      burstBesideQuietNamespaces(s);
      await().atMost(Duration.ofSeconds(10)).until(() -> sent.size() >= 16);
      await().pollDelay(Duration.ofMillis(500)).until(() -> true);
      assertThat(sent).hasSize(16).allSatisfy(d -> {
        assertThat(d.namespace()).isEqualTo("ci");
        assertThat(d.strategy()).isEqualTo("FinishedPodBudget");
        assertThat(d.reason()).startsWith("budget: ci holds");
      });
      assertThat(sent.stream().map(Decision::podKey)).doesNotHaveDuplicates();
      assertThat(results()).filteredOn(r -> r.endsWith("success")).hasSize(16);
    }
  }

  /** In a dry run every removal is asked of the server as dryRun=All, each pod once, and nothing is removed. */
  @Test
  void aBudgetInADryRunSaysEachPodOnce() {
    try (Sweeper s = sweeper("dryRun: true\nfullPassInterval: 1h\n" + BUDGET_OF_10, d -> RequestResult.Outcome.REMOVED)) {
      s.start();
      burstBesideQuietNamespaces(s);
      await().atMost(Duration.ofSeconds(10)).until(() -> recent.list().size() >= 16);
      await().pollDelay(Duration.ofMillis(500)).until(() -> true);
      assertThat(sent).isEmpty();
      assertThat(results()).hasSize(16).doesNotHaveDuplicates().allMatch(r -> r.startsWith("ci/") && r.endsWith(" dry-run"));
    }
  }

  /** The kill switch holds the budget's removals as any other; a resume lets them go at once. */
  @Test
  void theKillSwitchHoldsTheBudgetsRemovals() {
    KillSwitch killSwitch = new KillSwitch(new Metrics(), (paused, reason, over) -> true);
    killSwitch.pause("by hand");
    try (Sweeper s = new Sweeper(PolicyLoader.parse(HEAD + "fullPassInterval: 1h\n" + BUDGET_OF_10, "test"), source, (d, dryRun) -> {
      sent.add(d);
      return new RequestResult(removed(d), 200, "");
    }, new Metrics(), Clock.systemUTC(), recent, killSwitch, reason -> {}, GuardWindowStore.NONE)) {
      s.start();
      burstBesideQuietNamespaces(s);
      await().atMost(Duration.ofSeconds(5)).until(() -> results().contains("ci/ci0 paused"));
      assertThat(sent).isEmpty();
      killSwitch.resume();
      await().atMost(Duration.ofSeconds(10)).until(() -> sent.size() >= 16);
      assertThat(sent).allSatisfy(d -> assertThat(d.namespace()).isEqualTo("ci"));
    }
  }
}
