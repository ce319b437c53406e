package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.NOW;
import static io.podsweeper.cluster.PodFixtures.pod;
import static io.podsweeper.cluster.PodFixtures.terminatedAt;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.removal.Backoff;
import io.podsweeper.removal.Rules;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.PolicyEvaluator;
import io.podsweeper.testing.FakePodSource;
import io.podsweeper.testing.TestClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The finished-pod budget's scheduling in the live service, time in the test's hands: what it hands on to the removals
 * due, how many at once, what it does when a removal did not go, and when it looks again.
 */
class BudgetRemovalsTest {
  private static final String HEAD = "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n";
  private static final String BUDGET = "finishedPodBudget: {maxPods: 40, minRetention: 10m, phases: [Succeeded, Failed]}\n";

  private long nanos;
  private final TestClock clock = new TestClock(NOW);
  private final FakePodSource cache = new FakePodSource();
  private final WorkQueue queue = new WorkQueue(() -> nanos, new Backoff(clock, () -> nanos));
  /** What was handed on to the removals due, in order, and under which generation. */
  private final List<Decision> handed = new ArrayList<>();
  private final List<Long> generations = new ArrayList<>();
  private boolean active = true;
  private final BudgetRemovals budget = new BudgetRemovals(cache, clock, () -> nanos, queue, (d, g) -> {
    handed.add(d);
    generations.add(g);
  }, () -> active);

  private void advance(Duration by) {
    nanos += by.toNanos();
    clock.advance(by);
  }

  private static Rules rules(String policy, long generation) {
    Policy p = PolicyLoader.parse(HEAD + policy, "test");
    return new Rules(p, new PolicyEvaluator(p), generation);
  }

  /** A Succeeded pod that finished {@code ago} before the clock's now. */
  private PodRecord finished(String ns, String name, Duration ago) {
    Instant at = clock.instant().minus(ago);
    return pod(name).ns(ns).phase("Succeeded").created(at.minusSeconds(60))
        .containers(terminatedAt("main", "Completed", 0, at)).build();
  }

  /** {@code count} pods finished in {@code ns}, {@code oldest} ago and then one a second, announced as informer events. */
  private List<PodRecord> finish(String ns, int count, Duration oldest) {
    List<PodRecord> pods = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      PodRecord p = finished(ns, ns + "-" + i, oldest.minusSeconds(i));
      cache.put(p);
      budget.podChanged(p);
      pods.add(p);
    }
    return pods;
  }

  /** What the work queue has for its worker now: the budget's one key, or null. */
  private String lookDue() {
    String key = queue.poll();
    if (key != null) {
      queue.done(key);
    }
    return key;
  }

  private List<String> handedKeys() {
    return handed.stream().map(Decision::podKey).toList();
  }

  /**
   * A burst of 100 in ci beside quiet namespaces of 3 each, budget 40: only ci's oldest go, at most IN_FLIGHT on their
   * way at once, the next handed on as each is settled, until the cluster is within the budget.
   */
  @Test
  void aBurstIsWorkedOffFromTheBurstingNamespaceOnlyAtMostInFlightAtOnce() {
    budget.rebuild(rules(BUDGET, 1));
    for (int q = 0; q < 5; q++) {
      finish("quiet-" + q, 3, Duration.ofHours(5));
    }
    List<PodRecord> ci = finish("ci", 100, Duration.ofHours(1));
    assertThat(lookDue()).isEqualTo(BudgetRemovals.LOOK);
    budget.look();

    assertThat(handedKeys()).hasSize(BudgetRemovals.IN_FLIGHT).allMatch(k -> k.startsWith("ci/"));
    assertThat(handedKeys()).startsWith("ci/ci-0", "ci/ci-1", "ci/ci-2");
    assertThat(generations).containsOnly(1L);
    budget.look();
    assertThat(handed).as("nothing more while IN_FLIGHT are on their way").hasSize(BudgetRemovals.IN_FLIGHT);

    // Each carried out: the pod leaves the cache, and the next is handed on.
    while (handed.size() < 75) {
      Decision d = handed.get(handed.size() - BudgetRemovals.IN_FLIGHT);
      budget.settled(d, 1, true);
      cache.pods.remove(d.podKey());
      budget.podDeleted(ci.get(Integer.parseInt(d.name().substring(3))));
      budget.look();
    }
    handed.subList(handed.size() - BudgetRemovals.IN_FLIGHT, handed.size()).forEach(d -> budget.settled(d, 1, true));
    budget.look();
    // 115 finished, 40 allowed: ci's fair share is 40 - 15 = 25, so its 75 oldest go and nothing else.
    assertThat(handedKeys()).hasSize(75).doesNotHaveDuplicates().allMatch(k -> k.startsWith("ci/"))
        .doesNotContain("ci/ci-75", "ci/ci-99");
    assertThat(budget.usage().orElseThrow().clusterPods()).isEqualTo(40);
  }

  /**
   * A removal that did not go (held by a limit, say) counts again, and its namespace is passed over for a second, not
   * tried again at once (it would be held the same way); another namespace over its share goes on meanwhile.
   */
  @Test
  void aRemovalThatDidNotGoHoldsItsNamespaceForASecondAndNotTheOthers() {
    budget.rebuild(rules("finishedPodBudget: {maxPods: 100, maxPodsPerNamespace: 2, minRetention: 10m, phases: [Succeeded]}\n", 1));
    finish("ci", 3, Duration.ofHours(1));
    finish("data", 4, Duration.ofHours(1));
    budget.look();
    assertThat(handedKeys()).containsExactly("data/data-0", "ci/ci-0", "data/data-1");

    budget.settled(handed.get(1), 1, false);
    PodRecord late = finished("data", "data-late", Duration.ofHours(2));
    cache.put(late);
    budget.podChanged(late);
    budget.look();
    assertThat(handedKeys()).as("ci passed over, data goes on").containsExactly("data/data-0", "ci/ci-0", "data/data-1", "data/data-late");
    assertThat(lookDue()).isEqualTo(BudgetRemovals.LOOK);
    assertThat(lookDue()).isNull();

    advance(BudgetRemovals.HELD_RETRY);
    assertThat(lookDue()).as("ci's turn again, a second later").isEqualTo(BudgetRemovals.LOOK);
    budget.look();
    assertThat(handedKeys()).containsExactly("data/data-0", "ci/ci-0", "data/data-1", "data/data-late", "ci/ci-0");
  }

  /** Over the budget but every pod too young: one delayed look, when the oldest turns minRetention; no polling. */
  @Test
  void whenWhatIsOverIsTooYoungItLooksAgainWhenTheOldestTurnsMinRetention() {
    budget.rebuild(rules("finishedPodBudget: {maxPods: 2, minRetention: 10m, phases: [Succeeded]}\n", 1));
    finish("ci", 4, Duration.ofMinutes(4));
    assertThat(lookDue()).isEqualTo(BudgetRemovals.LOOK);
    budget.look();
    assertThat(handed).isEmpty();
    assertThat(queue.delayed()).isEqualTo(1);

    advance(Duration.ofMinutes(6).minusMillis(1));
    assertThat(lookDue()).isNull();
    advance(Duration.ofMillis(1));
    assertThat(lookDue()).isEqualTo(BudgetRemovals.LOOK);
    budget.look();
    assertThat(handedKeys()).containsExactly("ci/ci-0");
  }

  /** A reload builds the ledger anew: what was handed on under the old policy is settled into nothing. */
  @Test
  void aReloadBuildsTheLedgerAnew() {
    budget.rebuild(rules(BUDGET, 1));
    finish("ci", 42, Duration.ofHours(1));
    budget.look();
    assertThat(handedKeys()).containsExactly("ci/ci-0", "ci/ci-1");

    budget.rebuild(rules("finishedPodBudget: {maxPods: 39, minRetention: 10m, phases: [Succeeded]}\n", 2));
    budget.settled(handed.get(0), 1, false);
    budget.look();
    assertThat(handedKeys()).containsExactly("ci/ci-0", "ci/ci-1", "ci/ci-0", "ci/ci-1", "ci/ci-2");
    assertThat(generations).containsExactly(1L, 1L, 2L, 2L, 2L);

    budget.rebuild(rules("rules: [{name: r, states: [Failed]}]\n", 3));
    assertThat(budget.refusal(handed.get(4), cache.pod("ci/ci-2").orElseThrow())).contains("the policy in force sets no finished-pod budget");
    assertThat(budget.usage()).isEmpty();
  }

  /** The final check asks the ledger: within the budget again (another pod went), the removal no longer holds. */
  @Test
  void theFinalCheckAsksTheLedger() {
    budget.rebuild(rules("finishedPodBudget: {maxPods: 2, minRetention: 10m, phases: [Succeeded]}\n", 1));
    List<PodRecord> ci = finish("ci", 3, Duration.ofHours(1));
    budget.look();
    Decision d = handed.get(0);
    assertThat(budget.refusal(d, ci.get(0))).isEmpty();
    budget.podDeleted(ci.get(2));
    assertThat(budget.refusal(d, ci.get(0))).contains("ci holds 2 Succeeded pods, within its fair share 2");
  }

  /** A follower hands nothing on; it looks once it leads. */
  @Test
  void aFollowerHandsNothingOn() {
    active = false;
    budget.rebuild(rules("finishedPodBudget: {maxPods: 2, minRetention: 10m, phases: [Succeeded]}\n", 1));
    finish("ci", 3, Duration.ofHours(1));
    budget.look();
    assertThat(handed).isEmpty();
    active = true;
    budget.wake();
    assertThat(lookDue()).isEqualTo(BudgetRemovals.LOOK);
    budget.look();
    assertThat(handedKeys()).containsExactly("ci/ci-0");
  }
}
