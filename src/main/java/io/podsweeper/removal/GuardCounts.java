package io.podsweeper.removal;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.Profile;
import io.podsweeper.safety.BlastRadiusGuard;
import io.podsweeper.safety.GuardWindow;
import io.podsweeper.safety.HourlyNamespaceCap;
import io.podsweeper.strategy.Decision;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The counts that outlive a limits window: the blast-radius guard's sliding window (numbered by epoch: a dry-run switch
 * starts a new guard, whose remembered window must be read before anything counts in it), the namespaces' hourly caps,
 * the pods being removed, and the requests that got no answer, which may have been carried out: they keep their guard
 * count and hourly-cap place until a later version of the pod, not terminating, shows they were not, and a retry of the
 * same pod version takes that count over instead of counting again (its preconditions let at most one of the two
 * happen). Part of the {@link Ledger}, which locks it.
 */
final class GuardCounts {
  static final Duration UNANSWERED_KEPT = Duration.ofDays(1);

  /** How a removal was counted; {@code tripped} if it was not, as one too many. */
  record Counted(Instant at, Optional<Instant> capAt, boolean retried, Optional<BlastRadiusGuard.Trip> tripped) {}

  private record Unanswered(Decision decision, Reservation reservation, Instant since) {}

  private final Clock clock;
  private final Removing removing;
  private BlastRadiusGuard guard;
  private long epoch = 1;
  /** Kept across reloads: namespaced policies come and go, their hourly cap must not start over each time. */
  private final HourlyNamespaceCap namespaceCap = new HourlyNamespaceCap();
  private Map<String, Integer> hourlyCaps;
  /** Counts every change of the hourly cap's counts, which the cluster remembers with the guard's window. */
  private long capVersion;
  private final Map<String, Unanswered> unanswered = new HashMap<>();

  GuardCounts(PodSource cache, Clock clock, Policy policy) {
    this.clock = clock;
    this.removing = new Removing(cache);
    this.guard = new BlastRadiusGuard(policy.guard());
    this.hourlyCaps = hourlyCaps(policy);
  }

  /** A reload: settings in place; a dry-run switch starts a new guard (true then). */
  boolean apply(Policy old, Policy now) {
    hourlyCaps = hourlyCaps(now);
    if (old.dryRun() != now.dryRun()) {
      guard = new BlastRadiusGuard(now.guard());
      epoch++;
      return true;
    }
    if (!old.guard().equals(now.guard())) {
      guard.reconfigure(now.guard());
    }
    return false;
  }

  private static Map<String, Integer> hourlyCaps(Policy policy) {
    return policy.profiles().stream().filter(p -> p.maxRemovalsPerHourPerNamespace().isPresent())
        .collect(Collectors.toUnmodifiableMap(Profile::name, p -> p.maxRemovalsPerHourPerNamespace().getAsInt()));
  }

  long epoch() {
    return epoch;
  }

  /** Why the hourly cap holds this removal; a retry after no answer needs no place of its own, its first request's counts. */
  Optional<String> overHourlyCap(Decision d, Instant now) {
    Integer cap = hourlyCaps.get(d.profile());
    return cap == null || capHeld(d, now).isPresent() ? Optional.empty() : namespaceCap.check(d.namespace(), cap, now);
  }

  /** Counts the removal of {@code pod} in the guard and the hourly cap, or says it is one too many (counting nothing). */
  Counted count(PodRecord pod, Decision d, Collection<InProgress> background, Instant now) {
    Optional<Unanswered> before = unansweredBefore(d);
    boolean retried = before.isPresent() && before.get().reservation().guardEpoch() == epoch
        && guard.stillCounts(d.removal(), before.get().reservation().countedAt(), now);
    Instant at = now;
    if (retried) {
      unanswered.remove(d.uid());
      at = before.get().reservation().countedAt();
    } else {
      Optional<BlastRadiusGuard.Trip> tripped = guard.check(d.removal(), removing.running(d.namespace(), background),
          removing.running(null, background), now);
      if (tripped.isPresent()) {
        return new Counted(now, Optional.empty(), false, tripped);
      }
      guard.count(d.removal(), now);
    }
    // Counted and taken off the running pods in one hold: a check in between would see it twice.
    removing.add(d.uid(), pod.key(), now);
    Optional<Instant> capAt = retried ? before.flatMap(u -> u.reservation().capAt()).filter(t -> namespaceCap.holds(d.namespace(), t, now))
        : Optional.empty();
    if (capAt.isEmpty() && hourlyCaps.containsKey(d.profile())) {
      namespaceCap.count(d.namespace(), now);
      capVersion++;
      capAt = Optional.of(now);
    }
    return new Counted(at, capAt, retried, Optional.empty());
  }

  private Optional<Instant> capHeld(Decision d, Instant now) {
    return unansweredBefore(d).flatMap(u -> u.reservation().capAt()).filter(at -> namespaceCap.holds(d.namespace(), at, now));
  }

  /** A request for {@code d} got no answer: it may have been carried out, its counts stay with it. */
  void unanswered(Decision d, Reservation r) {
    unanswered.put(d.uid(), new Unanswered(d, r, clock.instant()));
  }

  /** Takes a removal that did not happen out of the guard and the hourly cap; a retry's count stays with the request that got no answer. */
  void forget(Decision d, Reservation r) {
    if (r.retried()) {
      unanswered(d, r);
    } else {
      uncount(d, r, true);
    }
  }

  /** This removal's counts stand for an earlier request for the same pod version that got no answer, too. */
  void supersede(Decision d, Reservation r) {
    Optional<Unanswered> earlier = unansweredBefore(d).filter(u -> u.reservation() != r);
    if (earlier.isPresent()) {
      unanswered.remove(d.uid());
      uncount(earlier.get().decision(), earlier.get().reservation(), false);
    }
  }

  /** {@code notBeingRemoved} false keeps the pod among those being removed (its removal stands). */
  private void uncount(Decision d, Reservation r, boolean notBeingRemoved) {
    if (r.guardEpoch() == epoch) {
      guard.uncount(d.removal(), r.countedAt());
    }
    if (notBeingRemoved) {
      removing.remove(d.uid());
    }
    r.capAt().ifPresent(at -> {
      namespaceCap.uncount(d.namespace(), at);
      capVersion++;
    });
  }

  /**
   * A pod changed: one no longer running is not being removed; a later version not being deleted shows that a request
   * that got no answer was not carried out, and now cannot be (a terminating one may be its doing: it stays counted).
   */
  void podChanged(PodRecord pod) {
    if (!pod.runningOnNode()) {
      removing.remove(pod.uid());
    }
    Unanswered earlier = unanswered.get(pod.uid());
    if (!pod.terminating() && earlier != null && !pod.resourceVersion().equals(earlier.decision().resourceVersion())) {
      unanswered.remove(pod.uid());
      uncount(earlier.decision(), earlier.reservation(), true);
    }
  }

  /** A pod is gone: whatever it was counted for may have happened, and stays counted. */
  void podDeleted(PodRecord pod) {
    removing.remove(pod.uid());
    unanswered.remove(pod.uid());
  }

  void expire(Instant now) {
    removing.expire(now);
    unanswered.values().removeIf(u -> u.since().isBefore(now.minus(UNANSWERED_KEPT)));
  }

  boolean beingRemoved(String uid) {
    return removing.contains(uid);
  }

  boolean covers(Decision d) {
    return guard.counts(d.removal()) || hourlyCaps.containsKey(d.profile());
  }

  /** Whether the cluster must remember this removal before it goes: the guard counts it, or it holds an hourly-cap place. */
  boolean remembered(Reservation r) {
    return guard.counts(r.decision().removal()) || r.capAt().isPresent();
  }

  /** What the guard of {@code ofEpoch} and the hourly cap count now, as the cluster remembers them; empty once replaced. */
  Optional<Ledger.GuardState> state(long ofEpoch) {
    Instant now = clock.instant();
    return ofEpoch == epoch
        ? Optional.of(new Ledger.GuardState(guard.version() + capVersion, guard.window(now).withHourly(namespaceCap.window(now))))
        : Optional.empty();
  }

  void restore(long ofEpoch, GuardWindow remembered) {
    if (ofEpoch == epoch) {
      guard.restore(remembered);
      namespaceCap.restore(remembered.hourly());
    }
  }

  void absorb(long ofEpoch, GuardWindow added) {
    if (ofEpoch == epoch) {
      guard.absorb(added);
      namespaceCap.absorb(added.hourly());
    }
  }

  void reset(long ofEpoch) {
    if (ofEpoch == epoch) {
      guard.reset();
    }
  }

  private Optional<Unanswered> unansweredBefore(Decision d) {
    return Optional.ofNullable(unanswered.get(d.uid())).filter(u -> u.decision().resourceVersion().equals(d.resourceVersion()));
  }
}
