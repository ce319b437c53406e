package io.podsweeper.removal;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Policy;
import io.podsweeper.strategy.Decision;
import io.podsweeper.testing.FakePodSource;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** The algebra of what a removal holds: taken once, and given back, kept or carried exactly as it ends. */
class LedgerTest {
  private static final Instant NOW = Instant.parse("2026-06-01T12:00:00Z");
  private final FakePodSource source = new FakePodSource();

  private Ledger ledger(String policy) {
    return new Ledger(source, Clock.fixed(NOW, ZoneOffset.UTC), parse(policy));
  }

  /** A policy with these settings and a rule (every policy has one). */
  private static Policy parse(String settings) {
    return PathFixture.parse(settings + "rules: [{name: r, states: [Running]}]\n");
  }

  private PodRecord pod(String name) {
    PodRecord p = PodFixtures.pod(name).ns("a").on("n1").phase("Running").container(PodFixtures.running("c")).build();
    source.put(p);
    return p;
  }

  private static Decision evict(PodRecord p) {
    return Decision.of(p, "PodLifeTime", "p", "r", "test", NOW);
  }

  private static Reservation reserved(Ledger ledger, PodRecord p) {
    Ledger.Reserve reserve = ledger.reserve(p, evict(p), ledger.guardEpoch());
    assertThat(reserve).isInstanceOf(Ledger.Reserved.class);
    return ((Ledger.Reserved) reserve).reservation();
  }

  private static boolean limited(Ledger ledger, PodRecord p) {
    return ledger.reserve(p, evict(p), ledger.guardEpoch()) instanceof Ledger.Limited;
  }

  @Test
  void aPlaceGoesBackOnlyToTheWindowItWasTakenIn() {
    Ledger ledger = ledger("limits: {maxTotal: 1}\nguard: {maxNamespaceShare: 1.0, maxClusterShare: 1.0}\n");
    Reservation first = reserved(ledger, pod("first"));
    ledger.newWindow();
    reserved(ledger, pod("second"));

    ledger.rollBack(first); // its request failed, after a full pass started the next window

    assertThat(limited(ledger, pod("third"))).as("the new window's one place is the second's").isTrue();
  }

  @Test
  void anEvictionInBackgroundHoldsAPlaceInEveryWindowItLastsInto() {
    Ledger ledger = ledger("limits: {maxTotal: 1}\nguard: {maxNamespaceShare: 1.0, maxClusterShare: 1.0}\n");
    PodRecord migrating = pod("migrating");
    ledger.toBackground(reserved(ledger, migrating), "", false, InProgress.Kind.EVACUATION);
    ledger.newWindow();
    assertThat(limited(ledger, pod("next"))).as("carried into the new window").isTrue();

    InProgress entry = ledger.inProgress(migrating.uid()).orElseThrow();
    assertThat(ledger.settle(entry)).isTrue();
    ledger.ended(entry);

    assertThat(limited(ledger, pod("next"))).as("ended: the window it was only carried into gets its place back").isFalse();
  }

  @Test
  void noAnswerGivesTheLimitsTheirPlaceBackButTheGuardKeepsCountingUntilThePodShowsItDidNotHappen() {
    Ledger ledger = ledger("guard: {maxRemovals: 1}\nlimits: {maxTotal: 1}\n");
    PodRecord p = pod("p");
    ledger.keepCounted(reserved(ledger, p));

    assertThat(ledger.reserve(pod("q"), evict(pod("q")), ledger.guardEpoch())).as("the guard counts it still")
        .isInstanceOf(Ledger.Tripped.class);
    assertThat(ledger.reserve(p, evict(p), ledger.guardEpoch())).as("the same pod version again: its count taken over, and a"
        + " place in the limits, which it had given back").isInstanceOf(Ledger.Reserved.class);
  }

  @Test
  void aLaterVersionOfThePodNotBeingDeletedShowsAnUnansweredRequestDidNotHappen() {
    Ledger ledger = ledger("guard: {maxRemovals: 1}\n");
    PodRecord p = pod("p");
    ledger.keepCounted(reserved(ledger, p));

    ledger.podChanged(PodFixtures.pod("p").ns("a").on("n1").rv("2").phase("Running").container(PodFixtures.running("c")).build());

    assertThat(ledger.reserve(pod("q"), evict(pod("q")), ledger.guardEpoch())).isInstanceOf(Ledger.Reserved.class);
  }

  @Test
  void aTerminatingVersionMayBeTheUnansweredRequestsDoingAndStaysCounted() {
    Ledger ledger = ledger("guard: {maxRemovals: 1}\n");
    PodRecord p = pod("p");
    ledger.keepCounted(reserved(ledger, p));

    ledger.podChanged(PodFixtures.pod("p").ns("a").on("n1").rv("2").terminating().phase("Running").container(PodFixtures.running("c")).build());

    assertThat(ledger.reserve(pod("q"), evict(pod("q")), ledger.guardEpoch())).isInstanceOf(Ledger.Tripped.class);
  }

  @Test
  void aDryRunSwitchStartsTheLimitsAndTheGuardAfreshAndAGuardReplacedMeanwhileTakesNothing() {
    Ledger ledger = ledger("dryRun: true\nlimits: {maxTotal: 1}\n");
    long dryRunGuard = ledger.guardEpoch();
    reserved(ledger, pod("would"));
    Policy live = parse("dryRun: false\nlimits: {maxTotal: 1}\n");

    assertThat(ledger.apply(parse("dryRun: true\nlimits: {maxTotal: 1}\n"), live)).isTrue();

    assertThat(ledger.reserve(pod("late"), evict(pod("late")), dryRunGuard)).isInstanceOf(Ledger.Stale.class);
    assertThat(ledger.reserve(pod("live"), evict(pod("live")), ledger.guardEpoch())).isInstanceOf(Ledger.Reserved.class);
  }

  @Test
  void aReloadKeepsTheWindowsCounts() {
    Policy before = parse("limits: {maxTotal: 2}\n");
    Ledger ledger = new Ledger(source, Clock.fixed(NOW, ZoneOffset.UTC), before);
    reserved(ledger, pod("a"));

    assertThat(ledger.apply(before, parse("limits: {maxTotal: 1}\n"))).isFalse();

    assertThat(limited(ledger, pod("b"))).as("an edit is no way past the limits").isTrue();
  }

  @Test
  void podsBeingRemovedAreNotCountedAsRunningByTheGuard() {
    Ledger ledger = ledger("guard: {maxNamespaceShare: 0.5, minEvictions: 0}\n");
    PodRecord a = pod("a");
    pod("b");
    pod("c");
    pod("d");
    reserved(ledger, a); // 1 of 4
    reserved(ledger, pod("b")); // 2 of 4: half

    assertThat(ledger.reserve(pod("c"), evict(pod("c")), ledger.guardEpoch())).as("3 of 4 is over half")
        .isInstanceOf(Ledger.Tripped.class);
  }
}
