package io.podsweeper.strategy;

import static io.podsweeper.cluster.PodFixtures.NOW;
import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.cluster.PodFixtures.terminatedAt;
import static io.podsweeper.strategy.FinishedPodBudgetTest.cluster;
import static io.podsweeper.strategy.FinishedPodBudgetTest.finished;
import static io.podsweeper.strategy.FinishedPodBudgetTest.policy;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PvcRecord;
import io.podsweeper.cluster.QueriedUsage;
import io.podsweeper.policy.PrometheusQuery;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The budget as the live service holds it: a ledger kept up to date pod by pod, asked for the next removal, for the
 * last word before one is sent, and for when to look again; and the max-min fairness of what it removes.
 */
class BudgetLedgerTest {
  private static final PolicyEvaluator TEN = policy("finishedPodBudget: {maxPods: 10, minRetention: 30m, phases: [Succeeded, Failed]}\n");

  private static List<String> drain(BudgetLedger ledger, Instant now) {
    List<String> keys = new ArrayList<>();
    for (Optional<Decision> next = ledger.next(now); next.isPresent(); next = ledger.next(now)) {
      keys.add(next.get().podKey());
      ledger.reserve(next.get().podKey());
    }
    return keys;
  }

  @Test
  void aReservedPodIsNotOfferedAgainUntilReleasedAndCountsNoMore() {
    List<PodRecord> ci = finished("ci", 12, Duration.ofHours(2));
    BudgetLedger ledger = TEN.budgetLedger(cluster(ci)).orElseThrow();
    assertThat(ledger.next(NOW).orElseThrow().name()).isEqualTo("ci-0");
    ledger.reserve("ci/ci-0");
    Decision second = ledger.next(NOW).orElseThrow();
    assertThat(second.name()).isEqualTo("ci-1");
    assertThat(second.reason()).startsWith("budget: ci holds 11 finished pods");
    ledger.reserve("ci/ci-1");
    assertThat(ledger.next(NOW)).isEmpty();
    // A removal that did not happen: the pod counts again, and is the next one again.
    ledger.release("ci/ci-0");
    assertThat(ledger.next(NOW).orElseThrow().name()).isEqualTo("ci-0");
    // The one removed is gone for good.
    ledger.podDeleted("ci/ci-1");
    ledger.release("ci/ci-1");
    ledger.reserve("ci/ci-0");
    assertThat(ledger.next(NOW)).isEmpty();
    assertThat(ledger.usage(NOW).clusterPods()).isEqualTo(10);
  }

  @Test
  void theFinalCheckHoldsOnlyWhileTheNamespaceIsStillOverAndThePodStillRemovable() {
    List<PodRecord> ci = finished("ci", 12, Duration.ofHours(2));
    BudgetLedger ledger = TEN.budgetLedger(cluster(ci)).orElseThrow();
    Decision decision = ledger.next(NOW).orElseThrow();
    ledger.reserve(decision.podKey());
    PodRecord pod = ci.get(0);
    assertThat(ledger.refusal(decision, pod, NOW)).isEmpty();

    // Two other pods went meanwhile (their owner deleted them): ci holds 10 with this one, within its share.
    ledger.podDeleted("ci/ci-5");
    ledger.podDeleted("ci/ci-6");
    assertThat(ledger.refusal(decision, pod, NOW)).contains("ci holds 10 finished pods, within its fair share 10");
    ledger.podChanged(finished("ci", "new", "Failed", Duration.ofHours(1)));
    assertThat(ledger.refusal(decision, pod, NOW)).isEmpty();

    // Protected, or on its way out, since the decision.
    PodRecord annotated = pod("ci-0").ns("ci").phase("Succeeded").age(Duration.ofHours(3)).annotation("podsweeper.io/protect", "true")
        .containers(terminatedAt("main", "Completed", 0, NOW.minus(Duration.ofHours(2)))).build();
    ledger.podChanged(annotated);
    assertThat(ledger.refusal(decision, annotated, NOW)).contains("protected: annotated podsweeper.io/protect");
    PodRecord terminating = pod("ci-0").ns("ci").phase("Succeeded").age(Duration.ofHours(3)).terminating()
        .containers(terminatedAt("main", "Completed", 0, NOW.minus(Duration.ofHours(2)))).build();
    ledger.podChanged(terminating);
    assertThat(ledger.refusal(decision, terminating, NOW)).contains("not a finished pod the budget counts (terminating)");

    // A policy without that budget any more.
    BudgetLedger other = policy("finishedPodBudget: {maxPods: 10, phases: [Failed]}\n").budgetLedger(cluster(ci)).orElseThrow();
    Decision foreign = new Decision("ci", "ci-1", "uid-ci-ci-1", "1", "node-a", FinishedPodBudgets.STRATEGY, "PodCleanupPolicy ci/cleanup",
        "cleanup/finishedPodBudget", Action.DELETE, "", NOW, "");
    assertThat(other.refusal(foreign, ci.get(1), NOW))
        .contains("the policy has no finished-pod budget PodCleanupPolicy ci/cleanup for namespace ci any more");
    assertThat(other.refusal(decision, ci.get(1), NOW)).contains("phase Succeeded is not one finishedPodBudget names");
  }

  /**
   * The live service hands on several removals at once: each is still the namespace's oldest among the pods not
   * reserved, until an older one whose removal did not happen counts again; that one goes first.
   */
  @Test
  void theFinalCheckRefusesWhileAnOlderPodCouldGoFirst() {
    List<PodRecord> ci = finished("ci", 14, Duration.ofHours(2));
    BudgetLedger ledger = TEN.budgetLedger(cluster(ci)).orElseThrow();
    Decision first = ledger.next(NOW).orElseThrow();
    ledger.reserve(first.podKey());
    Decision second = ledger.next(NOW).orElseThrow();
    ledger.reserve(second.podKey());
    assertThat(ledger.refusal(second, ci.get(1), NOW)).isEmpty();

    ledger.release(first.podKey());
    assertThat(ledger.refusal(second, ci.get(1), NOW)).contains("ci/ci-0 finished earlier and goes first");
    assertThat(ledger.refusal(first, ci.get(0), NOW)).isEmpty();
  }

  @Test
  void whenAllThatIsOverIsTooYoungItSaysWhenToLookAgain() {
    // 14 pods finished 20m to 7m ago, 10 allowed, 30m retention: nothing now, the oldest in 10m.
    List<PodRecord> ci = finished("ci", 14, Duration.ofMinutes(20));
    BudgetLedger ledger = TEN.budgetLedger(cluster(ci)).orElseThrow();
    assertThat(ledger.next(NOW)).isEmpty();
    assertThat(ledger.wakeAt(NOW)).contains(NOW.plus(Duration.ofMinutes(10)));
    BudgetUsage usage = ledger.usage(NOW);
    assertThat(usage.held()).isFalse();
    assertThat(usage.uses()).singleElement().satisfies(u -> {
      assertThat(u.pods()).isEqualTo(14);
      assertThat(u.limit()).isEqualTo(10);
      assertThat(u.tooYoung()).isEqualTo(14);
      assertThat(u.unremovableBy()).containsExactly(Map.entry("too-young", 4), Map.entry("kept", 0), Map.entry("protected", 0));
    });
    Instant later = NOW.plus(Duration.ofMinutes(10));
    assertThat(drain(ledger, later)).containsExactly("ci/ci-0");
    assertThat(ledger.wakeAt(later)).contains(later.plus(Duration.ofMinutes(1)));
    assertThat(drain(ledger, NOW.plus(Duration.ofHours(1)))).containsExactly("ci/ci-1", "ci/ci-2", "ci/ci-3");
    assertThat(ledger.wakeAt(NOW.plus(Duration.ofHours(1)))).isEmpty();
    assertThat(ledger.usage(NOW.plus(Duration.ofHours(1))).held()).isTrue();
  }

  @Test
  void aNamespacesAnnotationIsReadAgainWhenItChanges() {
    List<PodRecord> ci = finished("ci", 12, Duration.ofHours(2));
    Map<String, NamespaceRecord> namespaces = new HashMap<>(Map.of("ci", new NamespaceRecord("ci", Map.of(), true)));
    ClusterSnapshot protectedNamespace = ClusterSnapshot.of(ci, namespaces.values(), List.of());
    BudgetLedger ledger = TEN.budgetLedger(protectedNamespace).orElseThrow();
    assertThat(ledger.next(NOW)).isEmpty();
    assertThat(ledger.usage(NOW).notHeld())
        .containsExactly("finishedPodBudget cannot be held in ci: 2 over its fair share 10 once its removable pods are gone (2 protected)");
    // A ledger reads the namespace from its view; one over a view where the annotation is gone sees it on the event.
    MutableView view = new MutableView(ci, new NamespaceRecord("ci", Map.of(), true));
    BudgetLedger live = TEN.budgetLedger(view).orElseThrow();
    assertThat(live.next(NOW)).isEmpty();
    view.namespace = new NamespaceRecord("ci", Map.of(), false);
    live.namespaceChanged("ci");
    assertThat(drain(live, NOW)).containsExactly("ci/ci-0", "ci/ci-1");
  }

  /** A view whose one namespace record can be replaced, as the informers' cache replaces it. */
  private static final class MutableView implements ClusterView {
    private final ClusterSnapshot pods;
    NamespaceRecord namespace;

    MutableView(List<PodRecord> pods, NamespaceRecord namespace) {
      this.pods = ClusterSnapshot.of(pods, List.of(), List.of());
      this.namespace = namespace;
    }

    @Override
    public NamespaceRecord namespace(String name) {
      return name.equals(namespace.name()) ? namespace : NamespaceRecord.unknown(name);
    }

    @Override
    public Optional<NodeRecord> node(String name) {
      return Optional.empty();
    }

    @Override
    public Collection<NodeRecord> nodes() {
      return List.of();
    }

    @Override
    public Collection<PodRecord> pods() {
      return pods.pods();
    }

    @Override
    public Collection<PodRecord> podsInNamespace(String ns) {
      return pods.podsInNamespace(ns);
    }

    @Override
    public Collection<PodRecord> podsOnNode(String node) {
      return pods.podsOnNode(node);
    }

    @Override
    public Collection<PodRecord> podsWithAntiAffinity() {
      return List.of();
    }

    @Override
    public List<PdbRecord> pdbs(String ns) {
      return List.of();
    }

    @Override
    public Optional<PvcRecord> pvc(String ns, String name) {
      return Optional.empty();
    }

    @Override
    public OptionalInt priorityClassValue(String name) {
      return OptionalInt.empty();
    }

    @Override
    public Optional<NodeUsage> nodeUsage(String node) {
      return Optional.empty();
    }

    @Override
    public Optional<QueriedUsage> queriedUsage(PrometheusQuery query) {
      return Optional.empty();
    }
  }

  /**
   * Pods in random namespaces, phases, ages (some too young), owners (a keepLast rule keeps some), some protected: a
   * ledger fed event by event (pods first seen running, changed, some added and deleted again, in any order, asked for
   * its next removal in between) decides exactly as one built from the final cluster at once.
   */
  @Test
  void aLedgerKeptUpEventByEventDecidesAsOneBuiltAtOnce() {
    PolicyEvaluator e = policy("""
        finishedPodBudget: {maxPods: 60, maxPodsPerNamespace: 25, minRetention: 30m, phases: [Succeeded, Failed]}
        rules: [{name: keep, states: [Failed], keepLast: 2, maxAgeAfterFinish: 30d}]
        """);
    for (int seed = 0; seed < 20; seed++) {
      Random random = new Random(seed);
      List<PodRecord> pods = new ArrayList<>();
      for (int i = 0; i < 150; i++) {
        pods.add(randomPod(random, i));
      }
      List<NamespaceRecord> namespaces = List.of(new NamespaceRecord("ns-0", Map.of(), false), new NamespaceRecord("ns-5", Map.of(), true));
      BudgetLedger atOnce = e.budgetLedger(ClusterSnapshot.of(pods, namespaces, List.of())).orElseThrow();
      BudgetLedger byEvents = e.budgetLedger(ClusterSnapshot.of(List.of(), namespaces, List.of())).orElseThrow();
      List<PodRecord> order = new ArrayList<>(pods);
      Collections.shuffle(order, random);
      for (PodRecord pod : order) {
        if (random.nextInt(3) == 0) {
          byEvents.podChanged(pod("" + pod.name()).ns(pod.namespace()).uid(pod.uid()).build());
        }
        if (random.nextInt(5) == 0) {
          PodRecord passing = randomPod(random, 1000 + random.nextInt(1000));
          byEvents.podChanged(passing);
          byEvents.podDeleted(passing.key());
        }
        byEvents.podChanged(pod);
        // Asked meanwhile, as the worker asks between events: what it works out must not go stale.
        if (random.nextInt(4) == 0) {
          byEvents.next(NOW);
        }
      }
      assertThat(byEvents.usage(NOW)).as("seed " + seed).isEqualTo(atOnce.usage(NOW));
      assertThat(drain(byEvents, NOW)).as("seed " + seed).isEqualTo(drain(atOnce, NOW)).isNotEmpty();
    }
  }

  private static PodRecord randomPod(Random random, int i) {
    String ns = "ns-" + random.nextInt(6);
    String phase = random.nextInt(4) == 0 ? "Failed" : "Succeeded";
    Duration ago = Duration.ofMinutes(random.nextInt(10) == 0 ? random.nextInt(30) : 30 + random.nextInt(3000));
    var b = pod("p-" + i).ns(ns).phase(phase).ownedBy("Job", "job-" + random.nextInt(8)).age(ago.plusMinutes(5))
        .containers(terminatedAt("main", phase.equals("Failed") ? "Error" : "Completed", 0, NOW.minus(ago)));
    if (random.nextInt(15) == 0) {
      b.annotation("podsweeper.io/protect", "true");
    }
    return b.build();
  }

  /**
   * Max-min fairness, property by property, for seeded random namespaces, budgets and caps. Every pod removable: the
   * cluster ends at min(budget, Σ min(count, cap)); nobody holds more than one pod above a namespace the budget cut; no
   * namespace over its cap; in each namespace the oldest went. With protected and too-young pods: each namespace loses
   * what it lost without them, as far as its removable pods reach, and never one of those.
   */
  @Test
  void whatTheBudgetRemovesIsMaxMinFair() {
    for (int seed = 0; seed < 150; seed++) {
      Random random = new Random(seed);
      int namespaces = 1 + random.nextInt(12);
      List<PodRecord> pods = new ArrayList<>();
      List<PodRecord> withFloors = new ArrayList<>();
      Map<String, Integer> counts = new HashMap<>();
      int total = 0;
      for (int n = 0; n < namespaces; n++) {
        String ns = "ns-" + n;
        int count = random.nextInt(60);
        counts.put(ns, count);
        total += count;
        for (int i = 0; i < count; i++) {
          Duration ago = Duration.ofMinutes(60 + random.nextInt(6000));
          pods.add(finished(ns, ns + "-" + i, "Succeeded", ago));
          int floor = random.nextInt(6);
          var b = pod(ns + "-" + i).ns(ns).phase("Succeeded").age(Duration.ofDays(10))
              .containers(terminatedAt("main", "Completed", 0, NOW.minus(floor == 0 ? Duration.ofMinutes(5) : ago)));
          withFloors.add((floor == 1 ? b.annotation("podsweeper.io/protect", "true") : b).build());
        }
      }
      int budget = random.nextInt(total + 1);
      int cap = random.nextBoolean() && budget > 1 ? 1 + random.nextInt(budget - 1) : Integer.MAX_VALUE;
      PolicyEvaluator e = policy("finishedPodBudget: {maxPods: " + budget + (cap < Integer.MAX_VALUE ? ", maxPodsPerNamespace: " + cap : "")
          + ", phases: [Succeeded]}\n");
      String what = "seed " + seed + ", budget " + budget + ", cap " + cap + ", counts " + counts;

      List<Decision> plan = e.plan(cluster(pods), NOW);
      Map<String, Integer> left = new HashMap<>(counts);
      plan.forEach(d -> left.merge(d.namespace(), -1, Integer::sum));
      int demand = counts.values().stream().mapToInt(c -> Math.min(c, cap)).sum();
      assertThat(left.values().stream().mapToInt(Integer::intValue).sum()).as(what).isEqualTo(Math.min(budget, demand));
      for (String ns : counts.keySet()) {
        int capped = Math.min(counts.get(ns), cap);
        assertThat(left.get(ns)).as(what + ": " + ns + " over its cap").isLessThanOrEqualTo(capped);
        if (left.get(ns) < capped) {
          for (String other : counts.keySet()) {
            assertThat(left.get(other)).as(what + ": " + other + " holds more than one above " + ns + ", which the budget cut")
                .isLessThanOrEqualTo(left.get(ns) + 1);
          }
        }
      }
      assertOldestWent(what, pods, plan);

      List<Decision> floored = e.plan(cluster(withFloors), NOW);
      Map<String, Long> removable = new HashMap<>();
      for (PodRecord p : withFloors) {
        boolean removableNow = !p.annotations().containsKey("podsweeper.io/protect") && p.finishedAt().isBefore(NOW.minus(Duration.ofMinutes(10)));
        removable.merge(p.namespace(), removableNow ? 1L : 0L, Long::sum);
      }
      for (String ns : counts.keySet()) {
        long without = counts.get(ns) - left.get(ns);
        long with = floored.stream().filter(d -> d.namespace().equals(ns)).count();
        assertThat(with).as(what + ": " + ns + " with protected and young pods").isEqualTo(Math.min(without, removable.getOrDefault(ns, 0L)));
      }
      Map<String, PodRecord> byKey = withFloors.stream().collect(Collectors.toMap(PodRecord::key, p -> p));
      floored.forEach(d -> assertThat(byKey.get(d.podKey()).annotations()).as(what).doesNotContainKey("podsweeper.io/protect"));
      assertOldestWent(what, withFloors.stream().filter(p -> !p.annotations().containsKey("podsweeper.io/protect")).toList(), floored);
    }
  }

  /** In each namespace, no pod that stayed (of those given) finished before one that went. */
  private static void assertOldestWent(String what, List<PodRecord> candidates, List<Decision> removed) {
    Map<String, Instant> newestRemoved = new HashMap<>();
    Set<String> keys = removed.stream().map(Decision::podKey).collect(Collectors.toSet());
    for (PodRecord p : candidates) {
      if (keys.contains(p.key())) {
        newestRemoved.merge(p.namespace(), p.finishedAt(), (a, b) -> a.isAfter(b) ? a : b);
      }
    }
    for (PodRecord p : candidates) {
      Instant newest = newestRemoved.get(p.namespace());
      if (!keys.contains(p.key()) && newest != null && p.finishedAt().isBefore(NOW.minus(Duration.ofMinutes(10)))) {
        assertThat(p.finishedAt()).as(what + ": " + p.key() + " stayed though older than one removed").isAfterOrEqualTo(newest);
      }
    }
  }
}
