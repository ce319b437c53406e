package io.podsweeper.removal;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.policy.Policy;
import io.podsweeper.safety.BlastRadiusGuard;
import io.podsweeper.safety.GuardWindow;
import io.podsweeper.strategy.Decision;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Every count a removal holds, under one lock: its place in the limits window ({@link LimitsWindow}), its count in the
 * blast-radius guard's window and its place under its namespace's hourly cap ({@link GuardCounts}), the evictions in
 * background, and the requests on their way. A removal takes what it needs in one step ({@link #reserve}) and ends it
 * in one: it happened ({@link #commit}), it did not ({@link #rollBack}), nobody knows ({@link #keepCounted}: the request
 * got no answer), or it goes on in background ({@link #toBackground}) until it {@link #ended ends} or is
 * {@link #undone}. Nothing else changes what a removal holds.
 */
public final class Ledger {
  static final Duration BACKGROUND_TIMEOUT = Duration.ofMinutes(10);

  /** What {@link #reserve} answers. */
  sealed interface Reserve permits Reserved, Limited, Tripped, Stale {}

  record Reserved(Reservation reservation) implements Reserve {}

  /** Over a limit or the hourly cap: nothing taken. */
  record Limited(String why) implements Reserve {}

  /** One removal too many for the blast-radius guard: nothing taken. */
  record Tripped(BlastRadiusGuard.Trip trip) implements Reserve {}

  /** The guard was replaced since its window was read for this removal: nothing taken, look again at once. */
  record Stale() implements Reserve {}

  /** What the guard counts now, as its journal writes it. */
  record GuardState(long version, GuardWindow window) {}

  private final Clock clock;
  private final LimitsWindow window;
  private final GuardCounts counts;
  /** By pod UID. */
  private final Map<String, InProgress> background = new HashMap<>();
  /** By pod key: requests on their way, with the owner's UID, until the sender is done. */
  private final Map<String, String> sending = new HashMap<>();
  /** Pods with a PodMigrationJob in progress, by UID: no second job or removal for them until it ends. */
  private final Set<String> jobs = new HashSet<>();

  public Ledger(PodSource cache, Clock clock, Policy policy) {
    this.clock = clock;
    this.window = new LimitsWindow(policy.limits());
    this.counts = new GuardCounts(cache, clock, policy);
  }

  /**
   * A reload: the limits' and the guard's settings change in place, their counts carry over (an edit is no way past
   * them). A dry-run switch starts both afresh (a dry-run counted what would have been removed) with a new guard
   * epoch, whose remembered window must be read before anything counts in it: true then.
   */
  synchronized boolean apply(Policy old, Policy now) {
    if (old.dryRun() != now.dryRun()) {
      window.next(Optional.of(now.limits()), background.values());
    } else {
      window.setLimits(now.limits());
    }
    return counts.apply(old, now);
  }

  /** A full pass: a new limits window, in which every eviction in background takes its place. */
  synchronized void newWindow() {
    window.next(Optional.empty(), background.values());
  }

  /** Takes what the removal of {@code pod} needs, counted by the guard of {@code epoch}, or says why not (taking nothing). */
  synchronized Reserve reserve(PodRecord pod, Decision d, long epoch) {
    if (epoch != counts.epoch()) {
      return new Stale();
    }
    Instant now = clock.instant();
    Optional<String> limit = counts.overHourlyCap(d, now).or(() -> window.take(d));
    if (limit.isPresent()) {
      return new Limited(limit.get());
    }
    GuardCounts.Counted counted = counts.count(pod, d, background.values(), now);
    if (counted.tripped().isPresent()) {
      window.giveBack(d, window.number());
      return new Tripped(counted.tripped().get());
    }
    return new Reserved(new Reservation(d, window.number(), epoch, counted.at(), counted.capAt(), counted.retried()));
  }

  /** It happened. Of it and an earlier request for the same pod version that got no answer, at most one can have. */
  synchronized void commit(Reservation r) {
    counts.supersede(r.decision(), r);
  }

  /** It did not happen (refused, failed, gone, or no longer wanted): everything goes back. */
  synchronized void rollBack(Reservation r) {
    window.giveBack(r.decision(), r.window());
    counts.forget(r.decision(), r);
  }

  /** The request got no answer: the limits give their place back (upstream counts only evictions that succeeded), the guard and the hourly cap keep counting it. */
  synchronized void keepCounted(Reservation r) {
    window.giveBack(r.decision(), r.window());
    counts.supersede(r.decision(), r);
    counts.unanswered(r.decision(), r);
  }

  /** It goes on in background: held until it ends; one it replaces (an earlier term's) gives its place up. */
  synchronized void toBackground(Reservation r, String owner, boolean balance, InProgress.Kind kind) {
    InProgress entry = new InProgress(r.decision(), owner, balance, r, kind);
    Optional.ofNullable(background.put(r.decision().uid(), entry)).ifPresent(window::release);
    entry.since = clock.instant();
    window.hold(entry);
    if (kind == InProgress.Kind.EVACUATION) {
      counts.supersede(r.decision(), r);
    }
  }

  /** An EvictionRequest taken over: in progress, counted in this window; empty if the pod has one in progress. */
  synchronized Optional<InProgress> adopt(Decision d, String owner, boolean balance) {
    if (background.containsKey(d.uid())) {
      return Optional.empty();
    }
    InProgress entry = new InProgress(d, owner, balance, Reservation.adopted(d), InProgress.Kind.REQUEST);
    restore(entry);
    return Optional.of(entry);
  }

  /** In progress (again), counted in this window: one taken over, or one whose withdrawal failed. */
  synchronized void restore(InProgress entry) {
    background.put(entry.decision.uid(), entry);
    entry.since = clock.instant();
    window.hold(entry);
  }

  synchronized Optional<InProgress> inProgress(String uid) {
    return Optional.ofNullable(background.get(uid));
  }

  /** Takes it out of the evictions in background; false if another thread did first (only one may tell its end). */
  synchronized boolean settle(InProgress entry) {
    return background.remove(entry.decision.uid(), entry);
  }

  /** Settled, it happened: counted in its own window; a later one it was only carried into gets its place back. */
  synchronized void ended(InProgress entry) {
    window.uncarry(entry);
    counts.supersede(entry.decision, entry.reservation);
  }

  /** Settled, it did not happen: its place goes back; a job's eviction without an answer stays counted. */
  synchronized void undone(InProgress entry) {
    window.release(entry);
    if (entry.unanswered != null) {
      counts.unanswered(entry.unanswered, entry.reservation);
    } else {
      counts.forget(entry.decision, entry.reservation);
    }
  }

  /** A job's eviction was carried out: true if this call settled the job's entry (the pod's deletion may have first). */
  synchronized boolean evicted(InProgress entry, Decision sentAs) {
    counts.supersede(sentAs, entry.reservation);
    if (!settle(entry)) {
      return false;
    }
    window.uncarry(entry);
    return true;
  }

  /** Past its timeout, with no word of how it ended: its counts stay (it may have happened), a later window's place goes back. */
  synchronized void timedOut(InProgress entry) {
    window.uncarry(entry);
  }

  /** The pod has a PodMigrationJob in progress (until {@link #releaseJob}). */
  synchronized void holdForJob(String uid) {
    jobs.add(uid);
  }

  synchronized boolean jobHolds(String uid) {
    return jobs.contains(uid);
  }

  /** The pod's job ended; false if it had none. */
  synchronized boolean releaseJob(String uid) {
    return jobs.remove(uid);
  }

  /** A job's eviction got no answer: if the job then ends without another, the guard keeps counting it. */
  synchronized void unanswered(InProgress entry, Decision sentAs) {
    entry.unanswered = sentAs;
  }

  /** The EvictionRequests in progress. */
  synchronized List<InProgress> requested() {
    return background.values().stream().filter(InProgress::requested).toList();
  }

  /** Leadership lost: the EvictionRequests in progress are the new leader's to follow. */
  synchronized void dropRequests() {
    background.values().removeIf(InProgress::requested);
  }

  /** Housekeeping: forgets what aged out, and takes out (and returns) evictions in background past their timeout. */
  synchronized List<InProgress> expire() {
    Instant now = clock.instant();
    counts.expire(now);
    List<InProgress> expired = new ArrayList<>();
    background.values().removeIf(e -> e.since.isBefore(now.minus(BACKGROUND_TIMEOUT)) && expired.add(e));
    return expired;
  }

  /** A pod changed: see {@link GuardCounts#podChanged}; a job's eviction without an answer is shown not carried out, too. */
  synchronized void podChanged(PodRecord pod) {
    counts.podChanged(pod);
    InProgress entry = background.get(pod.uid());
    if (entry != null && !pod.terminating() && entry.unanswered != null
        && !entry.unanswered.resourceVersion().equals(pod.resourceVersion())) {
      entry.unanswered = null;
    }
  }

  /** A pod is gone: whatever it was counted for may have happened, and stays counted. */
  synchronized void podDeleted(PodRecord pod) {
    counts.podDeleted(pod);
  }

  /** A request for the pod {@code key} of {@code owner} is on its way, until {@link #sent}. */
  synchronized void sending(String key, String owner) {
    sending.put(key, owner);
  }

  synchronized void sent(String key) {
    sending.remove(key);
  }

  synchronized boolean sendingTo(String key) {
    return sending.containsKey(key);
  }

  /** Evictions of {@code owner}'s pods in progress or on their way, other than of the pod {@code uid} under {@code key}. */
  synchronized long inProgressOf(String owner, String uid, String key) {
    return background.values().stream().filter(e -> e.owner.equals(owner) && !e.decision.uid().equals(uid)).count()
        + sending.entrySet().stream().filter(e -> e.getValue().equals(owner) && !e.getKey().equals(key)).count();
  }

  /** Whether this service is removing the pod: reserved lately, or an eviction in background. */
  synchronized boolean beingRemoved(String uid) {
    return counts.beingRemoved(uid) || background.containsKey(uid);
  }

  synchronized long guardEpoch() {
    return counts.epoch();
  }

  /** The guard of {@code epoch}, as its journal reads and writes it: once replaced, it holds and takes nothing. */
  JournaledGuard guard(long epoch) {
    return new EpochGuard(this, epoch);
  }

  private record EpochGuard(Ledger ledger, long epoch) implements JournaledGuard {
    @Override
    public Optional<GuardState> state() {
      synchronized (ledger) {
        return ledger.counts.state(epoch);
      }
    }

    @Override
    public void restore(GuardWindow remembered) {
      synchronized (ledger) {
        ledger.counts.restore(epoch, remembered);
      }
    }

    @Override
    public void absorb(GuardWindow added) {
      synchronized (ledger) {
        ledger.counts.absorb(epoch, added);
      }
    }

    @Override
    public void reset() {
      synchronized (ledger) {
        ledger.counts.reset(epoch);
      }
    }
  }

  /** Whether the guard or an hourly cap would count a removal like this at all. */
  synchronized boolean covers(Decision d) {
    return counts.covers(d);
  }

  /** Whether the cluster must remember this removal (the guard's window, the hourly cap) before it is sent. */
  synchronized boolean remembered(Reservation r) {
    return counts.remembered(r);
  }

  /** An operator resumed, on a follower: the guard's window starts over (the leader writes that to the cluster). */
  synchronized void resetGuard() {
    counts.reset(counts.epoch());
  }
}
