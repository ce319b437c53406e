package io.podsweeper.removal;

import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.policy.Limits;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.FinishedPodBudgets;
import java.time.Clock;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Why a removal may not go, read from what is current at the instant it is asked: cheap and local (no request, no
 * wait), so that nothing can change between the final check and the send but what no check can see.
 */
final class Checks {
  private final PodSource cache;
  private final Pause pause;
  private final Ledger ledger;
  private final Supplier<Rules> rules;
  private final BooleanSupplier mayLead;
  private final Clock clock;
  private volatile boolean closing;
  private volatile PoliciesCurrent policiesCurrent = PoliciesCurrent.ALWAYS;
  private volatile BudgetCheck budgets = BudgetCheck.NONE;
  /** Whether the maker of a node-aware decision still wants it (a room plan's step, while its plan is in flight). */
  private volatile Predicate<Decision> madeWanted = d -> true;

  /** @param mayLead whether this replica may send now: elected, its lease valid by the local clock, not stopping */
  Checks(PodSource cache, Pause pause, Ledger ledger, Supplier<Rules> rules, BooleanSupplier mayLead, Clock clock) {
    this.cache = cache;
    this.pause = pause;
    this.ledger = ledger;
    this.rules = rules;
    this.mayLead = mayLead;
    this.clock = clock;
  }

  void close() {
    closing = true;
  }

  boolean closing() {
    return closing;
  }

  /**
   * Whether the policy in force is composed from what the cluster says now (the namespaced policies' informers watch,
   * and their last change that could touch a namespace was applied): while it may not be, nothing is sent there.
   * Always by default.
   */
  void policiesCurrentWhile(PoliciesCurrent current) {
    policiesCurrent = current;
  }

  /** Where the final check of a finished-pod budget's removal asks whether it still holds. */
  void budgetsCheckedBy(BudgetCheck check) {
    budgets = check;
  }

  void balanceWantedWhile(Predicate<Decision> wanted) {
    madeWanted = wanted;
  }

  boolean mayLead() {
    return !closing && mayLead.getAsBoolean();
  }

  /** The cache is current, and the policies are watched: the service is ready. */
  boolean current() {
    return cache.isCurrent() && policiesCurrent.watched();
  }

  /** The cache is current, and so is the policy in force for {@code namespace}: decisions there may be made and sent. */
  boolean currentIn(String namespace) {
    return cache.isCurrent() && policiesCurrent.in(namespace);
  }

  /**
   * Why nothing of this kind may be sent now to a pod of {@code namespace}: shutting down, no valid lease, paused, or a
   * pause or a team's change that could go unseen (the cache, the PodCleanupPolicies that apply there, or the kill
   * switch's ConfigMap, not current).
   */
  Optional<String> heldNow(Action action, String namespace) {
    if (closing) {
      return Optional.of("shutting down");
    }
    if (!mayLead.getAsBoolean()) {
      return Optional.of("this replica does not hold a valid lease");
    }
    if (pause.holds(action)) {
      return Optional.of(pause.why());
    }
    if (!cache.isCurrent()) {
      return Optional.of("the cache is not current");
    }
    if (!policiesCurrent.in(namespace)) {
      return Optional.of("the PodCleanupPolicies are not current: a team's change could go unapplied");
    }
    if (!pause.watched()) {
      return Optional.of("the kill switch's ConfigMap is not watched: a pause could go unseen");
    }
    return Optional.empty();
  }

  /** The cheap part of the final check, for the waits: leadership, the kill switch, the policy generation. */
  boolean mayStillGo(Candidate candidate) {
    return mayLead() && !pause.holds(candidate.decision().action()) && rules.get().generation() == candidate.generation();
  }

  /**
   * Why the removal must not be sent now: everything read again, the pod's version and the policy's verdict included,
   * then the lease, the kill switch and the currencies once more, as judging the pod takes a while on a large cluster.
   */
  Optional<String> finalCheck(Candidate candidate) {
    Decision decision = candidate.decision();
    Optional<String> held = heldNow(decision.action(), decision.namespace());
    if (held.isPresent()) {
      return held;
    }
    Optional<PodRecord> current = cache.pod(decision.podKey());
    if (current.isEmpty() || !current.get().uid().equals(decision.uid())
        || !current.get().resourceVersion().equals(decision.resourceVersion())) {
      return Optional.of("the pod changed since the decision");
    }
    Rules now = rules.get();
    if (now.generation() != candidate.generation()) {
      return Optional.of("the policy changed since the decision");
    }
    // Checked at admission too, but siblings may have become unavailable while this one waited for its turn.
    return ownerThrottle(current.get(), now.policy().limits()).or(() -> unwanted(current.get(), decision, candidate.balance(), now))
        .or(() -> heldNow(decision.action(), decision.namespace()));
  }

  /**
   * Why the policy in force no longer wants the pod removed, empty if it does: a finished-pod budget's by the budget's
   * ledger, a node-aware decision by its profile's protections (the profile must still be there), a deadline by being
   * due under some rule now.
   */
  Optional<String> unwanted(PodRecord current, Decision decision, boolean balance, Rules now) {
    if (decision.strategy().equals(FinishedPodBudgets.STRATEGY)) {
      return budgets.refusal(decision, current);
    }
    if (balance) {
      return madeWanted.test(decision) ? now.evaluator().refusal(decision.profile(), current, cache)
          : Optional.of("its maker no longer wants it (a room plan that ended)");
    }
    boolean due = now.evaluator().evaluate(current, cache).filter(v -> v.isDue(clock.instant())).isPresent();
    return due ? Optional.empty() : Optional.of("no rule wants the pod now");
  }

  /**
   * Koordinator-style per-workload throttles: evictions of the owner's pods in progress, and its pods unavailable (a
   * sibling this service is removing counts as unavailable before the cache shows it terminating). An owner's pods
   * share its namespace, so only the namespace's pods are read.
   */
  Optional<String> ownerThrottle(PodRecord pod, Limits limits) {
    Optional<OwnerRef> owner = pod.controller();
    if (owner.isEmpty() || pod.terminated()) {
      return Optional.empty();
    }
    String uid = owner.get().uid();
    String name = owner.get().kind() + " " + owner.get().name();
    if (limits.maxInFlightPerOwner().isPresent()) {
      long inFlight = ledger.inProgressOf(uid, pod.uid(), pod.key());
      if (inFlight >= limits.maxInFlightPerOwner().getAsInt()) {
        return Optional.of(inFlight + " evictions of " + name + " already in progress (maxInFlightPerOwner)");
      }
    }
    if (limits.maxUnavailablePerOwner().isPresent()) {
      long unavailable = cache.podsInNamespace(pod.namespace()).stream()
          .filter(p -> !p.uid().equals(pod.uid()) && !p.terminated() && p.controller().map(o -> o.uid().equals(uid)).orElse(false))
          .filter(p -> !p.available() || ledger.beingRemoved(p.uid()))
          .count() + (pod.available() ? 1 : 0);
      if (unavailable > limits.maxUnavailablePerOwner().getAsInt()) {
        return Optional.of("would leave " + unavailable + " pods of " + name + " unavailable (maxUnavailablePerOwner "
            + limits.maxUnavailablePerOwner().getAsInt() + ")");
      }
    }
    return Optional.empty();
  }
}
