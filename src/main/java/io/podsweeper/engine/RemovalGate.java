package io.podsweeper.engine;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Scheduler;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.kube.EvictionRequester;
import io.podsweeper.kube.PodRemover;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.EvictionRequestMode;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.Profile;
import io.podsweeper.safety.BlastRadiusGuard;
import io.podsweeper.safety.HourlyNamespaceCap;
import io.podsweeper.safety.RemovalBudget;
import io.podsweeper.safety.TokenBucket;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.PolicyEvaluator;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place a removal is admitted: hold-backs (leadership, dry-run, kill switch, throttles) → reserve (budget,
 * guard, hourly cap) → wait (rate, requests in flight) → final check → send → commit, or roll the reservation back.
 *
 * <p>The waits are where the world moves: while a removal waits for its turn the kill switch may be thrown, the
 * lease lost, the policy reloaded or the pod protected. So the waits give up as soon as their candidate can no
 * longer go, and on the sender's thread, immediately before the HTTP request with nothing waiting in between, the
 * final check reads everything again from what is current: the lease by the local clock, the kill switch, a cache
 * that has caught up, the pod's version, and the current policy's verdict (a balance decision made under an older
 * policy is dropped; a deadline is re-judged, protections and all).
 */
final class RemovalGate implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Sweeper.class);
  /** After a refusal or an error: 5 s doubling to 5 min, as {@code explain} tells operators (one pair of constants). */
  private static final Duration FIRST_BACKOFF = PolicyEvaluator.REFUSAL_FIRST_BACKOFF;
  private static final Duration MAX_BACKOFF = PolicyEvaluator.REFUSAL_MAX_BACKOFF;
  static final Duration STALE_CACHE_RETRY = Duration.ofSeconds(1);
  static final Duration BACKGROUND_TIMEOUT = Duration.ofMinutes(10);
  static final String EVACUATION_MESSAGE = "Eviction triggered evacuation";
  /**
   * Requests in flight at once, each still paced by the token bucket and checked just before it is sent: enough to
   * reach 100 removals a second against an API server taking 100 ms to answer (docs/benchmarks.md, removal rate).
   */
  static final int MAX_IN_FLIGHT = 16;
  /**
   * When an EvictionRequest taken over was counted by the guard, as far as this process knows: never (the guard
   * counted it when it was made, at an instant this one does not know), so that its withdrawal uncounts nothing.
   */
  private static final Instant ADOPTED = Instant.EPOCH;
  /** The window of an eviction in background that took no place in one of its own (one taken over). */
  private static final long NOT_COUNTED = -1;
  /** How often a waiting removal looks again whether it may still go (the lease also expires without an event). */
  private static final long WAIT_SLICE_MILLIS = 50;
  /** How often {@link #running} reads again while the cluster churns; then it settles for the stricter count. */
  private static final int RUNNING_READS = 3;

  /** The policy in force, numbered: what a decision was made under, and what the final check judges by. */
  record Rules(Policy policy, PolicyEvaluator evaluator, long generation) {}

  /**
   * A pod the worker wants removed.
   *
   * @param balance made by a node-aware strategy over a whole pass (it holds only under the policy it was made by)
   * @param dryRun the policy it was made under is a dry-run: the whole path runs, the request is a server-side dry-run
   * @param dueSince when it became due, for the decision-to-request latency; null if unknown
   */
  record Candidate(Decision decision, boolean balance, long generation, boolean dryRun, Instant dueSince) {}

  /**
   * What a removal took from the limits, so that everything can be given back together if it does not happen: a place
   * in the budget's window, a count in the guard's window at {@code at}, and a place under the hourly cap at
   * {@code capAt}, if its profile has one.
   *
   * @param window the limits window it was taken in
   * @param retried the guard's count is that of an earlier request for the same pod version that got no answer
   *     ({@link Unanswered}): it stays until the pod shows whether that one was carried out
   */
  private record Reservation(RemovalBudget budget, BlastRadiusGuard guard, Optional<Instant> capAt, Instant at, long window,
      boolean retried) {}

  /**
   * A request that got no answer: the server may have carried it out, so the guard and the hourly cap keep its count.
   * A retry of the same pod version takes that count over instead of counting again (its preconditions let at most
   * one of the two happen); a later version of the pod that is not terminating shows it did not happen.
   */
  private record Unanswered(Decision decision, Reservation reservation) {}

  private record Backoff(int attempts, Instant retryAt) {}

  /**
   * An eviction in background in progress: accepted by the eviction endpoint (an evacuation), or asked for by an
   * EvictionRequest ({@code requested}), which this service withdraws when the pod no longer qualifies. It keeps its
   * reservation, given back if it is withdrawn.
   *
   * @param owner the pod's controller's UID, for maxInFlightPerOwner
   * @param balance made by a node-aware strategy (re-judged by its profile's protections, not a deadline)
   * @param countedIn the limits window it holds a place in: its reservation's, or the one it was last carried into
   *     (read and written under the budget's lock, with the window)
   * @param unanswered a job's eviction that got no answer, as sent (it may have been carried out), until the pod shows
   *     it was not; null if none
   */
  private record InFlight(Decision decision, String owner, boolean balance, Reservation reservation, boolean requested,
      AtomicLong countedIn, AtomicReference<Decision> unanswered) {
    /** Counted in the window its reservation was taken in. */
    InFlight(Decision decision, String owner, boolean balance, Reservation reservation, boolean requested) {
      this(decision, owner, balance, reservation, requested, new AtomicLong(reservation.window()), new AtomicReference<>());
    }

    String what() {
      return requested ? "EvictionRequest " + decision.uid() : "eviction in background";
    }
  }

  private final PodSource cache;
  private final RemovalRequests requests;
  private final KillSwitch killSwitch;
  private final Outcomes outcomes;
  private final Metrics metrics;
  private final Clock clock;
  private final Supplier<Rules> rules;
  private final BooleanSupplier mayLead;
  private final BiConsumer<String, Duration> retryLater;
  private final Consumer<String> guardTrippedNotice;
  private final GuardJournal journal;

  private volatile RemovalBudget budget;
  private volatile TokenBucket bucket;
  private volatile BlastRadiusGuard guard;
  /** Kept across reloads: namespaced policies come and go, their hourly cap must not start over each time. */
  private final HourlyNamespaceCap namespaceCap = new HourlyNamespaceCap();
  /** maxRemovalsPerHourPerNamespace by profile name, for the profiles that have one (namespaced policies). */
  private volatile Map<String, Integer> hourlyCaps = Map.of();

  private final Object wakeup = new Object();
  private final Semaphore inFlightPermits = new Semaphore(MAX_IN_FLIGHT);
  private volatile BooleanSupplier policiesCurrent = () -> true;
  private final ExecutorService senders = Executors.newFixedThreadPool(MAX_IN_FLIGHT, r -> Sweeper.daemon(r, "sweeper-requests"));
  /**
   * Pods whose request is on its way, with their owner's UID: a new event for one of them must not send a second
   * request, and its owner's other pods count it as in progress (maxInFlightPerOwner).
   */
  private final Map<String, String> sending = new ConcurrentHashMap<>();
  /**
   * What was last reported for a pod held back (dry-run, paused, limited), by UID: a held pod is counted, logged and
   * audited once per state (its version, the rule, why it is held), not again every pass and every reload.
   */
  private final Cache<String, String> reported = Caffeine.newBuilder().expireAfterAccess(Duration.ofHours(1)).maximumSize(500_000).build();
  private final Cache<String, Backoff> backoff = Caffeine.newBuilder().expireAfterWrite(MAX_BACKOFF.multipliedBy(2)).build();
  /**
   * Pods this service is removing or removed lately, by UID: until the informer reports them gone they would count
   * as running twice in the guard's shares (once still cached, once as evicted).
   */
  private final Cache<String, String> removedLately = Caffeine.newBuilder().expireAfterWrite(Duration.ofMinutes(5)).build();
  /** By pod UID; a day at most, as a backstop for pods this replica stops hearing about. */
  private final Cache<String, Unanswered> unanswered = Caffeine.newBuilder().expireAfterWrite(Duration.ofDays(1)).build();
  /** Evictions in background, by pod UID: never requested twice while in progress; a timeout ends one as failed. */
  private final Cache<String, InFlight> inBackground;
  /** What the active interceptor of an EvictionRequest in progress last reported, by pod UID (logged once per change). */
  private final Map<String, String> progress = new ConcurrentHashMap<>();
  /** Where evictions go as EvictionRequests (KEP-4563) when the cluster serves the API; empty: the eviction endpoint. */
  private volatile Optional<EvictionRequester> evictionRequests = Optional.empty();
  private volatile boolean closing;
  /** The limits window, counted: an eviction in progress from an earlier one is carried into each new one. */
  private volatile long window;

  /**
   * @param rules the policy in force now
   * @param mayLead whether this replica may send now: elected, its lease valid by the local clock, not stopping
   * @param retryLater asks the scheduler to look at a pod again after a delay
   * @param guardTrippedNotice told (besides the log line) when the blast-radius guard stops removals
   */
  RemovalGate(PodSource cache, RemovalRequests requests, KillSwitch killSwitch, Outcomes outcomes, Metrics metrics, Clock clock,
      Supplier<Rules> rules, BooleanSupplier mayLead, BiConsumer<String, Duration> retryLater, Consumer<String> guardTrippedNotice,
      GuardJournal journal) {
    this.cache = cache;
    this.requests = requests;
    this.killSwitch = killSwitch;
    this.outcomes = outcomes;
    this.metrics = metrics;
    this.clock = clock;
    this.rules = rules;
    this.mayLead = mayLead;
    this.retryLater = retryLater;
    this.guardTrippedNotice = guardTrippedNotice;
    this.journal = journal;
    this.inBackground = Caffeine.newBuilder()
        .expireAfterWrite(BACKGROUND_TIMEOUT)
        .scheduler(Scheduler.systemScheduler())
        .removalListener((String uid, InFlight f, RemovalCause cause) -> {
          if (cause == RemovalCause.EXPIRED && f != null) {
            String why = f.what() + " did not finish within " + BACKGROUND_TIMEOUT.toMinutes() + "m";
            if (f.requested()) {
              withdraw(f, Result.ERROR, why);
            } else {
              uncarry(f);
              outcomes.record(f.decision(), Result.ERROR, why, false);
            }
          }
        })
        .build();
  }

  /**
   * Takes a new policy's limits. A reload (a file edit, any PodCleanupPolicy change) never opens the limits, the
   * guard's window or the rate again: their counts and spent tokens carry over, under the new settings, changed in
   * place so that what another thread counts meanwhile stays counted. Waiting removals look again at once.
   *
   * @param publish puts the new policy in force (the rules this gate reads), run once its limits, guard and caps are
   */
  void apply(Policy old, Policy now, Runnable publish) {
    if (old == null) {
      budget = new RemovalBudget(now.limits());
      bucket = new TokenBucket(now.limits().perSecond(), now.limits().burst());
      guard = new BlastRadiusGuard(now.guard());
    } else if (old.dryRun() != now.dryRun()) {
      // A dry-run counted what would have been removed; the live run starts from what really was (the window the
      // cluster remembers), and a dry-run from a clean slate. The rate paced both: it goes on.
      RemovalBudget fresh = new RemovalBudget(now.limits());
      underBudget(replaced -> {
        synchronized (fresh) { // the evictions in progress go into the new budget's window before anyone can take it
          budget = fresh;
          startWindow(fresh);
        }
      });
      bucket.setRate(now.limits().perSecond(), now.limits().burst());
      guard = new BlastRadiusGuard(now.guard());
      journal.forget();
    } else {
      if (!old.limits().equals(now.limits())) {
        budget.setLimits(now.limits());
        bucket.setRate(now.limits().perSecond(), now.limits().burst());
      }
      if (!old.guard().equals(now.guard())) {
        guard.reconfigure(now.guard());
      }
    }
    hourlyCaps = now.profiles().stream().filter(p -> p.maxRemovalsPerHourPerNamespace().isPresent())
        .collect(Collectors.toUnmodifiableMap(Profile::name, p -> p.maxRemovalsPerHourPerNamespace().getAsInt()));
    // Only now may anyone decide under the new policy: a removal it admits must find its limits, guard and caps in
    // force, not be counted in a budget that was about to be thrown away (a dry-run's, on going live).
    publish.run();
    wake();
    reconsiderRequests();
  }

  /** Evictions go as EvictionRequests from now on, for the pods the policy says (the cluster serves the API). */
  void requestEvictionsThrough(EvictionRequester requester) {
    evictionRequests = Optional.of(requester);
  }

  /** A full pass starts a new limits window; evictions still in progress keep their places in it. */
  void newWindow() {
    underBudget(now -> {
      now.reset();
      startWindow(now);
    });
  }

  /**
   * Runs {@code change} on the budget in force, under its lock, which also guards {@link #window} and the places of the
   * evictions in background: read again once locked, as a dry-run switch may have put a new budget in meanwhile.
   */
  private void underBudget(Consumer<RemovalBudget> change) {
    fromBudget(now -> {
      change.accept(now);
      return null;
    });
  }

  /** As {@link #underBudget}, for a change that answers something. */
  private <T> T fromBudget(Function<RemovalBudget, T> change) {
    while (true) {
      RemovalBudget now = budget;
      synchronized (now) {
        if (now == budget) {
          return change.apply(now);
        }
      }
    }
  }

  /** A place taken from the budget in force, in the limits window then in force, or why not. */
  private record Taken(RemovalBudget budget, long window, Optional<String> refusal) {}

  /** Under {@code now}'s lock: the evictions still in progress take their places in the window it starts. */
  private void startWindow(RemovalBudget now) {
    window++;
    inBackground.asMap().values().forEach(f -> {
      now.carry(f.decision());
      f.countedIn().set(window);
    });
  }

  /**
   * An operator resumed: the guard's window starts over, and the leader writes that to the cluster. Only the leader:
   * a follower that sees the resume late would otherwise clear what the leader counted since.
   */
  void resumed() {
    BlastRadiusGuard now = guard;
    if (mayLead.getAsBoolean()) {
      journal.startOver(now);
    } else {
      now.reset();
    }
    metrics.guardTripped.set(0);
  }

  /** Something a waiting removal depends on changed (leadership, policy): let it look again now. */
  void wake() {
    synchronized (wakeup) {
      wakeup.notifyAll();
    }
  }

  /**
   * Leadership lost: a new term takes over the window the other leader wrote meanwhile. EvictionRequests in progress
   * are the new leader's to follow ({@link #adoptRequests}): forgotten here.
   */
  void steppedDown() {
    journal.forget();
    inBackground.asMap().values().removeIf(InFlight::requested);
  }

  /**
   * A new term, or the requests listed for the first time since this process started: every EvictionRequest that lists
   * this service and has not ended is taken over as if this term had made it. It counts against the limits (the
   * budget, maxInFlightPerOwner) until it ends; one whose pod is gone or finished, or no longer qualifies under the
   * rules that made it (written on the request: {@link EvictionRequester.Origin}; see {@link #judgedBy}), or while
   * evictions are paused, is withdrawn at once. The guard is
   * not counted again: its window, remembered across restarts and failovers, counted the request when it was made.
   */
  void adoptRequests() {
    Optional<EvictionRequester> requester = evictionRequests;
    if (requester.isEmpty() || !mayLead.getAsBoolean()) {
      return;
    }
    for (EvictionRequester.Observed observed : requester.get().listed()) {
      String key = observed.namespace() + "/" + observed.pod();
      if (!observed.requesters().contains(EvictionRequester.REQUESTER) || observed.evicted().isPresent()
          || observed.canceled().isPresent() || sending.containsKey(key) || inBackground.getIfPresent(observed.uid()) != null) {
        continue;
      }
      Optional<PodRecord> pod = cache.pod(key).filter(p -> p.uid().equals(observed.uid()));
      EvictionRequester.Origin origin = observed.origin();
      String reason = "EvictionRequest " + observed.uid() + " taken over from an earlier leader or process";
      Decision decision = pod.map(p -> Decision.of(p, origin.strategy(), origin.profile(), origin.rule(), reason, clock.instant()))
          .orElse(new Decision(observed.namespace(), observed.pod(), observed.uid(), "", "", origin.strategy(), origin.profile(),
              origin.rule(), Action.EVICT, reason, clock.instant(), ""));
      InFlight adopted = new InFlight(decision, pod.map(RemovalGate::owner).orElse(""), origin.balance(),
          new Reservation(budget, guard, Optional.empty(), ADOPTED, NOT_COUNTED, false), true, new AtomicLong(NOT_COUNTED),
          new AtomicReference<>());
      if (!inProgressUnlessThere(adopted)) {
        continue;
      }
      LOG.info("{} for {} taken over (requester {}): in progress", adopted.what(), key, EvictionRequester.REQUESTER);
      if (pod.isEmpty() || pod.get().terminated()) {
        if (inBackground.asMap().remove(observed.uid(), adopted)) {
          withdraw(adopted, Result.CANCELED, pod.isEmpty() ? "the pod is gone" : "the pod has finished");
        }
      } else if (!pod.get().terminating() && (killSwitch.holds(Action.EVICT) || judgedBy(rules.get().policy(), origin))) {
        reconsider(adopted, pod.get());
      }
    }
  }

  /**
   * Whether the policy in force can judge a request taken over: it has the profile that made it. One it does not have
   * may not be read yet (a team's PodCleanupPolicy comes a moment after the requests; a policy file rejected at start
   * runs no profile until it is fixed): that request stays in progress, judged at the next policy change, or withdrawn
   * when it has not ended within {@link #BACKGROUND_TIMEOUT}.
   */
  private static boolean judgedBy(Policy policy, EvictionRequester.Origin origin) {
    return origin.profile().isEmpty() ? !policy.profiles().isEmpty()
        : policy.profiles().stream().anyMatch(p -> p.name().equals(origin.profile()));
  }

  boolean busyWith(String key) {
    return sending.containsKey(key);
  }

  /**
   * A pod changed: an eviction in background ends when its pod finishes; one no longer running counts as gone. An
   * EvictionRequest for a pod still running is judged again: withdrawn if the pod no longer qualifies.
   */
  void podChanged(PodRecord pod) {
    if (!pod.runningOnNode()) {
      removedLately.invalidate(pod.uid());
    }
    // A later version, not being deleted, shows that a request that got no answer was not carried out, and now cannot
    // be (its preconditions). A terminating one may be its doing: it stays counted.
    InFlight inFlight = inBackground.getIfPresent(pod.uid());
    if (!pod.terminating()) {
      if (inFlight != null) {
        inFlight.unanswered().getAndUpdate(d -> d == null || d.resourceVersion().equals(pod.resourceVersion()) ? d : null);
      }
      Unanswered earlier = unanswered.getIfPresent(pod.uid());
      if (earlier != null && !pod.resourceVersion().equals(earlier.decision().resourceVersion())
          && unanswered.asMap().remove(pod.uid(), earlier)) {
        uncount(earlier.decision(), earlier.reservation());
      }
    }
    if (inFlight != null && pod.terminated()) {
      end(inFlight, "Succeeded".equals(pod.phase()) ? Result.SUCCESS : Result.ERROR, "pod " + pod.phase());
    } else if (inFlight != null && inFlight.requested() && !pod.terminating()) {
      reconsider(inFlight, pod);
    }
  }

  void podDeleted(PodRecord pod) {
    InFlight inFlight = inBackground.getIfPresent(pod.uid());
    if (inFlight != null) {
      end(inFlight, Result.SUCCESS, "pod gone");
    }
    backoff.invalidate(pod.uid());
    reported.invalidate(pod.uid());
    removedLately.invalidate(pod.uid());
    unanswered.invalidate(pod.uid());
  }

  /**
   * Admits a candidate, on the worker's thread: returns once its request is handed to a sender, or once it is held
   * back, refused by the limits or no longer wanted (with the reservation given back).
   */
  void admit(PodRecord pod, Candidate candidate) throws InterruptedException {
    Decision decision = candidate.decision();
    Instant now = clock.instant();
    Backoff waiting = backoff.getIfPresent(pod.uid());
    if (waiting != null && waiting.retryAt().isAfter(now)) {
      retryLater.accept(decision.podKey(), Duration.between(now, waiting.retryAt()));
      return;
    }
    if (heldBack(pod, candidate, now)) {
      return;
    }
    BlastRadiusGuard inGuard = guard; // one guard for both: a count only goes into a guard that has read the window
    if (!journal.takeOver(inGuard)) {
      retryLater.accept(decision.podKey(), STALE_CACHE_RETRY);
      return;
    }
    Optional<Reservation> reservation = reserve(pod, candidate, inGuard, now);
    if (reservation.isEmpty()) {
      return;
    }
    boolean token = waitForToken(candidate);
    long tokenTaken = System.nanoTime(); // before the slot: a wait for the slot ages the token too
    if (!token || !waitForSlot(candidate)) {
      release(decision, reservation.get());
      retryLater.accept(decision.podKey(), Duration.ZERO);
      return;
    }
    sending.put(decision.podKey(), owner(pod));
    senders.execute(() -> {
      try {
        sendIfStillWanted(pod, candidate, reservation.get(), tokenTaken);
      } catch (InterruptedException e) {
        release(decision, reservation.get()); // shutting down: nothing was sent
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        release(decision, reservation.get());
        LOG.error("removal of {} failed unexpectedly; it is retried at the next pass", decision.podKey(), e);
      } finally {
        sending.remove(decision.podKey());
        inFlightPermits.release();
      }
    });
  }

  /**
   * Reasons to decide but not act: a follower, the kill switch, an eviction in progress, a throttle; in a dry-run,
   * a pod state whose dry-run request was already accepted (it would be removed: no need to ask again).
   */
  private boolean heldBack(PodRecord pod, Candidate candidate, Instant now) {
    Decision decision = candidate.decision();
    boolean dryRun = candidate.dryRun();
    if (!mayLead.getAsBoolean()) {
      // A follower decides (its state stays warm) but never removes; the leader's full pass picks this up.
      return true;
    }
    if (dryRun && stateReported(decision, Result.DRY_RUN)) {
      return true;
    }
    Policy active = rules.get().policy();
    if (killSwitch.holds(decision.action())) {
      reportOnce(decision, Result.PAUSED, "removals are paused: " + killSwitch.reason(), dryRun);
      return true;
    }
    if (inBackground.getIfPresent(pod.uid()) != null || jobs.contains(pod.uid())) {
      return true;
    }
    Integer hourlyCap = hourlyCaps.get(decision.profile());
    // A retry after no answer needs no place of its own under the hourly cap: its first request's still counts.
    boolean capTaken = capPlaceLeft(unansweredBefore(decision), pod.namespace(), now).isPresent();
    Optional<String> throttled = ownerThrottle(pod, active)
        .or(() -> hourlyCap == null || capTaken ? Optional.empty() : namespaceCap.check(pod.namespace(), hourlyCap, now));
    if (throttled.isPresent()) {
      reportOnce(decision, dryRun ? Result.WOULD_BE_LIMITED : Result.LIMITED, throttled.get() + "; retried in the next pass", dryRun);
      return true;
    }
    return false;
  }

  /** Takes the removal from the budget, the guard's window and the hourly cap, or says no (and takes nothing). */
  private Optional<Reservation> reserve(PodRecord pod, Candidate candidate, BlastRadiusGuard inGuard, Instant now) {
    Decision decision = candidate.decision();
    Taken taken = fromBudget(in -> new Taken(in, window, in.take(decision)));
    Optional<String> limit = taken.refusal();
    if (limit.isPresent()) {
      reportOnce(decision, candidate.dryRun() ? Result.WOULD_BE_LIMITED : Result.LIMITED, limit.get() + "; retried in the next pass",
          candidate.dryRun());
      return Optional.empty();
    }
    Optional<Unanswered> before = unansweredBefore(decision);
    Optional<BlastRadiusGuard.Trip> tripped = Optional.empty();
    Instant countedAt = now;
    boolean retried = false;
    synchronized (inGuard) {
      if (before.isPresent() && before.get().reservation().guard() == inGuard
          && inGuard.stillCounts(before.get().decision(), before.get().reservation().at(), now)
          && unanswered.asMap().remove(pod.uid(), before.get())) {
        // The same pod version again after no answer: the guard counted it then, and still does (see Unanswered).
        countedAt = before.get().reservation().at();
        retried = true;
      } else {
        // A first request; or a retry whose count a resume, or the window moving on, took away: counted anew.
        tripped = inGuard.check(decision, running(pod.namespace()), running(null), now);
        if (tripped.isEmpty()) {
          inGuard.count(decision, now);
        }
      }
      if (tripped.isEmpty()) {
        // In the same hold as the count: until the pod is in removedLately, running() still counts it, and a check in
        // between would see it twice (running, and in the window) and admit one eviction more than the share allows.
        removedLately.put(pod.uid(), pod.key());
      }
    }
    if (tripped.isPresent() && candidate.dryRun()) {
      giveBack(decision, taken.budget(), taken.window());
      reportOnce(decision, Result.WOULD_TRIP_GUARD, "blast-radius guard: " + tripped.get().reason()
          + "; the live run would pause " + (tripped.get().evictionsOnly() ? "evictions" : "removals") + " here", true);
      return Optional.empty();
    }
    if (tripped.isPresent()) {
      giveBack(decision, taken.budget(), taken.window());
      boolean evictionsOnly = tripped.get().evictionsOnly();
      String why = "blast-radius guard: " + tripped.get().reason() + "; " + (evictionsOnly ? "evictions" : "removals")
          + " are paused until an operator resumes (data.paused: \"false\" in the control ConfigMap, or POST /api/v1/resume),"
          + " which starts the window over" + (evictionsOnly ? "; finished pods are still deleted" : "");
      metrics.guardTripped.set(1);
      if (evictionsOnly) {
        killSwitch.pauseEvictions(why);
      } else {
        killSwitch.pause(why);
      }
      guardTrippedNotice.accept(why);
      LOG.error("{}", why);
      reportOnce(decision, Result.PAUSED, why, false);
      return Optional.empty();
    }
    // A retry keeps its first request's place under the hourly cap while the cap holds it; one counted anew takes a
    // place of its own, and the first request keeps its own until this one's answer shows which of them went
    // (supersede).
    Optional<Instant> capAt = retried ? capPlaceLeft(before, pod.namespace(), now) : Optional.empty();
    if (capAt.isEmpty() && hourlyCaps.containsKey(decision.profile())) {
      namespaceCap.count(pod.namespace(), now);
      capAt = Optional.of(now);
    }
    return Optional.of(new Reservation(taken.budget(), inGuard, capAt, countedAt, taken.window(), retried));
  }

  /** What a request for this very pod version left when it got no answer, if one did. */
  private Optional<Unanswered> unansweredBefore(Decision decision) {
    return Optional.ofNullable(unanswered.getIfPresent(decision.uid()))
        .filter(u -> u.decision().resourceVersion().equals(decision.resourceVersion()));
  }

  /** Its place under the hourly cap, if the cap holds it still (an hour has not passed). */
  private Optional<Instant> capPlaceLeft(Optional<Unanswered> before, String namespace, Instant now) {
    return before.flatMap(u -> u.reservation().capAt()).filter(at -> namespaceCap.holds(namespace, at, now));
  }

  /**
   * Gives back everything a removal reserved that did not happen (refused, failed, gone, or no longer wanted). Its
   * place in the limits only to the window it was taken in: a window a full pass started since never counted it.
   */
  private void release(Decision decision, Reservation r) {
    giveBack(decision, r);
    forget(decision, r);
  }

  /** Gives a removal's place in the limits back, to the window it was taken in only. */
  private void giveBack(Decision decision, Reservation r) {
    giveBack(decision, r.budget(), r.window());
  }

  private void giveBack(Decision decision, RemovalBudget from, long takenIn) {
    synchronized (from) { // as in newWindow, which starts the next window
      if (takenIn == window) {
        from.giveBack(decision);
      }
    }
  }

  /**
   * An eviction in progress that did not happen after all (withdrawn, canceled): it holds a place in the window in
   * force, its own or one it was carried into.
   */
  private void release(InFlight inFlight) {
    underBudget(now -> {
      if (inFlight.countedIn().get() == window) {
        now.giveBack(inFlight.decision());
      }
    });
    Decision sentWithoutAnswer = inFlight.unanswered().getAndSet(null);
    if (sentWithoutAnswer != null) {
      // A job's eviction that got no answer may have been carried out: counted until the pod shows it was not.
      unanswered.put(sentWithoutAnswer.uid(), new Unanswered(sentWithoutAnswer, inFlight.reservation()));
    } else {
      forget(inFlight.decision(), inFlight.reservation());
    }
  }

  /**
   * Takes a removal that did not happen out of the guard's window and the hourly cap; but a retry's count stays with
   * the request that got no answer, which may yet show as carried out.
   */
  private void forget(Decision decision, Reservation r) {
    if (r.retried()) {
      unanswered.put(decision.uid(), new Unanswered(decision, r));
    } else {
      uncount(decision, r);
    }
  }

  private void uncount(Decision decision, Reservation r) {
    uncount(decision, r, true);
  }

  /** As above; {@code notBeingRemoved} false keeps the pod among those being removed (its removal stands). */
  private void uncount(Decision decision, Reservation r, boolean notBeingRemoved) {
    synchronized (r.guard()) { // as in reserve: the window and removedLately change together
      r.guard().uncount(decision, r.at());
      if (notBeingRemoved) {
        removedLately.invalidate(decision.uid());
      }
    }
    r.capAt().ifPresent(at -> namespaceCap.uncount(decision.namespace(), at));
  }

  /**
   * This request was carried out (or accepted by the eviction endpoint, to be carried out in background, or its pod is
   * seen gone), or got no answer either: of it and an earlier request for the same pod version that
   * got no answer, at most one can have happened (the preconditions), so this one's counts stand for both.
   */
  private void supersede(Decision decision, Reservation r) {
    Optional<Unanswered> earlier = unansweredBefore(decision).filter(u -> u.reservation() != r);
    if (earlier.isPresent() && unanswered.asMap().remove(decision.uid(), earlier.get())) {
      uncount(earlier.get().decision(), earlier.get().reservation(), false);
    }
  }

  /** Waits for a request slot; gives up, false, as soon as the candidate can no longer go. */
  private boolean waitForSlot(Candidate candidate) throws InterruptedException {
    // A few requests in flight at once, still paced by the token bucket: against a busy API server one at a time
    // cannot keep up with the configured rate (docs/benchmarks.md).
    while (!inFlightPermits.tryAcquire(WAIT_SLICE_MILLIS, TimeUnit.MILLISECONDS)) {
      if (!mayStillGo(candidate)) {
        return false;
      }
    }
    if (!mayStillGo(candidate)) {
      inFlightPermits.release();
      return false;
    }
    return true;
  }

  /**
   * Waits for a token of the rate in force now (a reload that raises it applies at once); gives up, false, as soon as
   * the candidate can no longer go.
   */
  private boolean waitForToken(Candidate candidate) throws InterruptedException {
    for (Duration wait = bucket.tryTake(); !wait.isZero(); wait = bucket.tryTake()) {
      if (!mayStillGo(candidate)) {
        return false;
      }
      synchronized (wakeup) {
        wakeup.wait(Math.max(1, Math.min(wait.toMillis(), WAIT_SLICE_MILLIS)));
      }
    }
    return true;
  }

  /** The cheap part of the final check, for the waits: leadership, the kill switch, the policy generation. */
  private boolean mayStillGo(Candidate candidate) {
    return !closing && mayLead.getAsBoolean() && !killSwitch.holds(candidate.decision().action())
        && rules.get().generation() == candidate.generation();
  }

  /**
   * On the sender's thread: the guard's write-ahead, the final check, then at once the request, then commit or roll
   * back. A token that aged past the rate's interval during the write-ahead (a slow API server) is not spent on this
   * request: it waits for a fresh one first, or requests held up together by a slow write would go out back to back.
   */
  private void sendIfStillWanted(PodRecord pod, Candidate candidate, Reservation reservation, long tokenTaken) throws InterruptedException {
    Decision decision = candidate.decision();
    if (!candidate.dryRun() && reservation.guard().counts(decision) && !journal.persist(reservation.guard())) {
      release(decision, reservation);
      retryLater.accept(decision.podKey(), STALE_CACHE_RETRY);
      return;
    }
    if (System.nanoTime() - tokenTaken > bucket.interval().toNanos() && !waitForToken(candidate)) {
      release(decision, reservation);
      retryLater.accept(decision.podKey(), Duration.ZERO);
      return;
    }
    Optional<String> stop = finalCheck(candidate);
    if (stop.isPresent()) {
      release(decision, reservation);
      LOG.debug("not sending the removal of {}: {}", decision.podKey(), stop.get());
      if (killSwitch.holds(decision.action())) {
        reportOnce(decision, Result.PAUSED, "removals are paused: " + killSwitch.reason(), false);
      } else if (!closing) {
        retryLater.accept(decision.podKey(), current() && killSwitch.watched() ? Duration.ZERO : STALE_CACHE_RETRY);
      }
      return;
    }
    if (candidate.dueSince() != null) {
      metrics.decisionToRequest.observe(Math.max(0, Duration.between(candidate.dueSince(), clock.instant()).toNanos() / 1e9));
    }
    long started = System.nanoTime();
    Optional<EvictionRequester> requester = evictionRequests.filter(r -> viaEvictionRequest(pod, decision));
    PodRemover.Result result = requester.isPresent() ? requester.get().request(decision, candidate.balance(), candidate.dryRun())
        : requests.send(decision, candidate.dryRun());
    metrics.requestDuration.labels(decision.action().wireName()).observe((System.nanoTime() - started) / 1e9);
    if (candidate.dryRun()) {
      settleDryRun(decision, reservation, result);
    } else if (requester.isPresent() && result.outcome() == PodRemover.Outcome.REMOVED) {
      // Requested: the pod leaves in its own time (interceptors, then the eviction-request controller); it keeps its
      // place in the limits until then, or until this service withdraws.
      backoff.invalidate(decision.uid());
      // Replaces one taken over from an earlier term while this request (which joined it) was on its way: counted once.
      inProgress(new InFlight(decision, owner(pod), candidate.balance(), reservation, true));
      outcomes.record(decision, Result.BACKGROUND, "EvictionRequest " + decision.uid() + " made, requester " + EvictionRequester.REQUESTER
          + ": the pod leaves in its own time", false);
    } else if (result.outcome() == PodRemover.Outcome.STARTED) {
      jobStarted(pod, candidate, reservation, result.message());
    } else {
      settle(pod, decision, reservation, result);
    }
  }

  /** An eviction goes as an EvictionRequest for a pod that asks to be evicted in background, or for all by policy. */
  private boolean viaEvictionRequest(PodRecord pod, Decision decision) {
    return decision.action() == Action.EVICT && (rules.get().policy().evictionRequests() == EvictionRequestMode.All
        || pod.annotations().containsKey(PodRecord.REQUEST_EVICT_ONLY_ANNOTATION));
  }

  private static String owner(PodRecord pod) {
    return pod.controller().map(OwnerRef::uid).orElse("");
  }

  /** An EvictionRequest changed: it ends when Evicted or Canceled, or when this service is no longer among its requesters. */
  void evictionRequestObserved(EvictionRequester.Observed observed) {
    InFlight inFlight = inBackground.getIfPresent(observed.uid());
    if (inFlight == null || !inFlight.requested()) {
      return;
    }
    if (observed.evicted().isPresent()) {
      end(inFlight, Result.SUCCESS, "Evicted: " + observed.evicted().get());
    } else if (observed.canceled().isPresent() || !observed.requesters().contains(EvictionRequester.REQUESTER)) {
      if (settles(inFlight)) {
        didNotHappen(inFlight, Result.CANCELED, "canceled by others: " + observed.canceled().orElse("this service was taken out of spec.requesters"));
      }
    } else if (!observed.progress().isEmpty() && !observed.progress().equals(progress.put(observed.uid(), observed.progress()))) {
      LOG.info("{} for {}: {}", inFlight.what(), inFlight.decision().podKey(), observed.progress());
    }
  }

  /**
   * An eviction in background ended with its pod: it stays counted in the window it was made in (it happened, or
   * failed as a removal would); a later window it was only carried into gets its place back.
   */
  private void end(InFlight inFlight, Result result, String how) {
    String uid = inFlight.decision().uid();
    if (!settles(inFlight)) {
      return;
    }
    uncarry(inFlight);
    // Made without the pod's preconditions (a job, an EvictionRequest), it stood for nothing until now: the pod has
    // gone or finished, one removal, which its counts stand for.
    supersede(inFlight.decision(), inFlight.reservation());
    String last = progress.remove(uid);
    outcomes.record(inFlight.decision(), result, inFlight.what() + " ended: " + how + (last == null ? "" : " (last progress: " + last + ")"), false);
    freed(inFlight);
  }

  /**
   * Takes {@code inFlight} out of the evictions in background; false if another thread did first. Its end is seen on
   * several threads (the pod's informer, a job's controller, an EvictionRequest's watch): only one may record it.
   */
  private boolean settles(InFlight inFlight) {
    return inBackground.asMap().remove(inFlight.decision().uid(), inFlight);
  }

  /** An EvictionRequest, no longer in progress, that will not evict the pod: its reservation is given back. */
  private void didNotHappen(InFlight inFlight, Result result, String how) {
    release(inFlight);
    progress.remove(inFlight.decision().uid());
    outcomes.record(inFlight.decision(), result, inFlight.what() + " " + how, false);
    freed(inFlight);
  }

  /**
   * An eviction in background that ended in a later window than its own gives that window its place back (if it was
   * carried into it: see {@link #inProgress}).
   */
  private void uncarry(InFlight inFlight) {
    underBudget(now -> {
      if (inFlight.countedIn().get() == window && inFlight.reservation().window() != window) {
        now.giveBack(inFlight.decision());
      }
    });
  }

  /**
   * Puts an eviction among those in background, holding a place in the limits window in force: a full pass that
   * started a new window while its request was on the way (or its withdrawal failing) did not carry it. One it
   * replaces gives its place up. Under the budget's lock, as {@link #newWindow}: each window counts it once.
   */
  private void inProgress(InFlight inFlight) {
    underBudget(now -> {
      InFlight replaced = inBackground.asMap().put(inFlight.decision().uid(), inFlight);
      if (replaced != null && replaced.countedIn().get() == window) {
        now.giveBack(replaced.decision());
      }
      countInWindow(now, inFlight);
    });
  }

  /** As {@link #inProgress}, unless the pod has one in progress already: false then. */
  private boolean inProgressUnlessThere(InFlight inFlight) {
    return fromBudget(now -> {
      if (inBackground.asMap().putIfAbsent(inFlight.decision().uid(), inFlight) != null) {
        return false;
      }
      countInWindow(now, inFlight);
      return true;
    });
  }

  private void countInWindow(RemovalBudget now, InFlight inFlight) {
    if (inFlight.countedIn().get() != window) {
      now.carry(inFlight.decision());
      inFlight.countedIn().set(window);
    }
  }

  /** Its owner has one eviction less in progress: its pods held by maxInFlightPerOwner need not wait for the next pass. */
  private void freed(InFlight inFlight) {
    if (inFlight.owner().isEmpty()) {
      return;
    }
    cache.podsInNamespace(inFlight.decision().namespace()).stream()
        .filter(p -> !p.uid().equals(inFlight.decision().uid()) && p.controller().map(o -> o.uid().equals(inFlight.owner())).orElse(false))
        .forEach(p -> retryLater.accept(p.key(), Duration.ZERO));
  }

  /** The kill switch was thrown, or the policy changed: every EvictionRequest in progress is judged again. */
  void reconsiderRequests() {
    for (InFlight inFlight : inBackground.asMap().values()) {
      if (inFlight.requested()) {
        cache.pod(inFlight.decision().podKey()).filter(p -> p.uid().equals(inFlight.decision().uid()) && !p.terminating() && !p.terminated())
            .ifPresent(pod -> reconsider(inFlight, pod));
      }
    }
  }

  /** Withdraws an EvictionRequest in progress when its pod no longer qualifies: paused, protected, no rule wants it. */
  private void reconsider(InFlight inFlight, PodRecord pod) {
    Optional<String> why = killSwitch.holds(Action.EVICT) ? Optional.of("removals are paused: " + killSwitch.reason())
        : unwanted(pod, inFlight.decision(), inFlight.balance(), rules.get());
    if (why.isPresent() && settles(inFlight)) {
      withdraw(inFlight, Result.CANCELED, why.get());
    }
  }

  /**
   * Takes this service out of the pod's EvictionRequest, already taken out of the ones in progress, off the caller's
   * thread; the reservation is given back. If the API server cannot be reached it is in progress again, and the next
   * change of the pod or policy tries again. Only the leader writes: every replica is the same requester.
   */
  private void withdraw(InFlight inFlight, Result result, String why) {
    Decision decision = inFlight.decision();
    if (closing || !mayLead.getAsBoolean()) {
      return;
    }
    Optional<EvictionRequester> requester = evictionRequests;
    senders.execute(() -> {
      PodRemover.Result answer = requester.get().withdraw(decision);
      if (answer.outcome() == PodRemover.Outcome.REMOVED || answer.outcome() == PodRemover.Outcome.GONE) {
        didNotHappen(inFlight, result, "withdrawn: " + why);
      } else {
        inProgress(inFlight);
        metrics.apiErrors.labels(decision.action().wireName(), String.valueOf(answer.code())).inc();
        LOG.warn("cannot withdraw {} for {} ({}): {} {}; tried again at the next change", inFlight.what(), decision.podKey(), why,
            answer.code(), answer.message());
      }
    });
  }

  /**
   * Whether the policy in force is composed from what the cluster says now (the namespaced policies' informers watch,
   * and their last change was applied): while it may not be, nothing is sent. Always by default.
   */
  void policiesCurrentWhile(BooleanSupplier current) {
    policiesCurrent = current;
  }

  /** The cache is current, and so is the policy in force: decisions may be made and sent on them. */
  boolean current() {
    return cache.isCurrent() && policiesCurrent.getAsBoolean();
  }

  /**
   * Why nothing of this kind may be sent now, whichever pod: shutting down, no valid lease, paused, or a pause or a
   * team's change that could go unseen (the cache, the PodCleanupPolicies, or the kill switch's ConfigMap, not
   * current). The part of every final check that does not depend on the pod.
   */
  private Optional<String> heldNow(Action action) {
    if (closing) {
      return Optional.of("shutting down");
    }
    if (!mayLead.getAsBoolean()) {
      return Optional.of("this replica does not hold a valid lease");
    }
    if (killSwitch.holds(action)) {
      return Optional.of("removals are paused: " + killSwitch.reason());
    }
    if (!cache.isCurrent()) {
      return Optional.of("the cache is not current");
    }
    if (!policiesCurrent.getAsBoolean()) {
      return Optional.of("the PodCleanupPolicies are not current: a team's change could go unapplied");
    }
    if (!killSwitch.watched()) {
      return Optional.of("the kill switch's ConfigMap is not watched: a pause could go unseen");
    }
    return Optional.empty();
  }

  /**
   * Why the removal must not be sent now, read from what is current at this instant; empty if it may go. Cheap and
   * local (no request, no wait), so that nothing can change between it and the send but what no check can see.
   */
  private Optional<String> finalCheck(Candidate candidate) {
    Decision decision = candidate.decision();
    Optional<String> held = heldNow(decision.action());
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
    // Checked at admission too, but siblings may have become unavailable while this one waited for its turn. Then,
    // last, the lease, the kill switch and the currencies again: judging the pod takes a while on a large cluster.
    return ownerThrottle(current.get(), now.policy()).or(() -> unwanted(current.get(), decision, candidate.balance(), now))
        .or(() -> heldNow(decision.action()));
  }

  /**
   * Why the current policy no longer wants the pod removed, empty if it does: a balance decision by its profile's
   * protections (the profile must still be there), a deadline by being due under some rule now.
   */
  private Optional<String> unwanted(PodRecord current, Decision decision, boolean balance, Rules now) {
    if (balance) {
      return now.evaluator().refusal(decision.profile(), current, cache);
    }
    boolean stillDue = now.evaluator().evaluate(current, cache).filter(v -> v.isDue(clock.instant())).isPresent();
    return stillDue ? Optional.empty() : Optional.of("no rule wants the pod now");
  }

  /** Commits or rolls back the reservation by the request's outcome, and reports it. */
  private void settle(PodRecord pod, Decision decision, Reservation reservation, PodRemover.Result result) {
    String uid = decision.uid();
    switch (result.outcome()) {
      case REMOVED -> {
        backoff.invalidate(uid);
        supersede(decision, reservation);
        outcomes.record(decision, Result.SUCCESS, result.message(), false);
      }
      case REFUSED -> {
        if (acceptedInBackground(pod, result)) {
          // Accepted: the pod leaves in its own time (e.g. a live migration). It keeps its place in the limits.
          inProgress(new InFlight(decision, owner(pod), false, reservation, false));
          supersede(decision, reservation);
          outcomes.record(decision, Result.BACKGROUND, result.message(), false);
          return;
        }
        release(decision, reservation);
        metrics.pdbRefusals.labels(decision.namespace()).inc();
        Duration delay = backOff(uid);
        outcomes.record(decision, Result.PDB_REFUSED, result.message() + "; retry in " + delay.toSeconds() + "s", false);
        retryLater.accept(decision.podKey(), delay);
      }
      case CONFLICT -> {
        release(decision, reservation);
        outcomes.record(decision, Result.CONFLICT, "the pod changed or was recreated since the decision: " + result.message(), false);
      }
      case GONE -> {
        release(decision, reservation);
        outcomes.record(decision, Result.GONE, result.message(), false);
      }
      case ERROR -> {
        if (result.code() == PodRemover.NO_ANSWER) {
          // The server may have carried it out: the limits give its place back (upstream counts only evictions that
          // succeeded), but the guard and the hourly cap keep counting it, erring strict, as does removedLately.
          giveBack(decision, reservation);
          supersede(decision, reservation);
          unanswered.put(uid, new Unanswered(decision, reservation));
        } else {
          release(decision, reservation);
        }
        metrics.apiErrors.labels(decision.action().wireName(), String.valueOf(result.code())).inc();
        Duration delay = backOff(uid);
        outcomes.record(decision, Result.ERROR, result.code() + " " + result.message() + "; retry in " + delay.toSeconds() + "s", false);
        retryLater.accept(decision.podKey(), delay);
      }
    }
  }

  /**
   * A server-side dry-run's answer: accepted keeps its reservation (later pods meet the limits and the guard as they
   * would live); a refusal is what the live run would meet; neither is retried until the pod changes.
   */
  private void settleDryRun(Decision decision, Reservation reservation, PodRemover.Result result) {
    switch (result.outcome()) {
      case REMOVED -> reportOnce(decision, Result.DRY_RUN, "dry-run: the API server would accept it (dryRun=All)", true);
      case REFUSED -> {
        release(decision, reservation);
        reportOnce(decision, Result.PDB_WOULD_REFUSE, result.message(), true);
      }
      default -> {
        release(decision, reservation);
        reportOnce(decision, result.outcome() == PodRemover.Outcome.ERROR ? Result.ERROR
            : result.outcome() == PodRemover.Outcome.CONFLICT ? Result.CONFLICT : Result.GONE, result.code() + " " + result.message(), true);
      }
    }
  }

  /** An eviction in background: a 429 that says the eviction started an evacuation, for a pod that asked for it. */
  private static boolean acceptedInBackground(PodRecord pod, PodRemover.Result result) {
    return pod.annotations().containsKey(PodRecord.REQUEST_EVICT_ONLY_ANNOTATION) && result.message().contains(EVACUATION_MESSAGE);
  }

  /**
   * Reports a held removal unless this very state was reported already: the pod's version, the rule, the result,
   * and for a pause its reason (a limit's message changes with counts that are not the pod's state).
   */
  private void reportOnce(Decision decision, Result result, String message, boolean dryRun) {
    String state = state(decision, result) + (result == Result.PAUSED ? "\n" + message : "");
    if (!state.equals(reported.asMap().put(decision.uid(), state))) {
      outcomes.record(decision, result, message, dryRun);
    }
  }

  /** True if this very pod state was last reported with {@code result}. */
  private boolean stateReported(Decision decision, Result result) {
    return state(decision, result).equals(reported.getIfPresent(decision.uid()));
  }

  private static String state(Decision decision, Result result) {
    return decision.resourceVersion() + "\n" + decision.profile() + "\n" + decision.rule() + "\n" + result;
  }

  /** Koordinator-style per-workload throttles: evictions in progress and unavailable pods per owner. */
  private Optional<String> ownerThrottle(PodRecord pod, Policy active) {
    Optional<OwnerRef> owner = pod.controller();
    if (owner.isEmpty() || pod.terminated()) {
      return Optional.empty();
    }
    String uid = owner.get().uid();
    String name = owner.get().kind() + " " + owner.get().name();
    if (active.limits().maxInFlightPerOwner().isPresent()) {
      long inFlight = inBackground.asMap().values().stream()
          .filter(f -> f.owner().equals(uid) && !f.decision().uid().equals(pod.uid())).count()
          + sending.entrySet().stream().filter(e -> e.getValue().equals(uid) && !e.getKey().equals(pod.key())).count();
      if (inFlight >= active.limits().maxInFlightPerOwner().getAsInt()) {
        return Optional.of(inFlight + " evictions of " + name + " already in progress (maxInFlightPerOwner)");
      }
    }
    if (active.limits().maxUnavailablePerOwner().isPresent()) {
      // A sibling this service is removing counts as unavailable already: until the cache shows it terminating, it
      // still looks available, and two siblings due together would both go.
      long unavailable = cache.pods().stream()
          .filter(p -> !p.uid().equals(pod.uid()) && !p.terminated() && p.controller().map(o -> o.uid().equals(uid)).orElse(false))
          .filter(p -> !p.available() || beingRemoved(p.uid()))
          .count() + (pod.available() ? 1 : 0);
      if (unavailable > active.limits().maxUnavailablePerOwner().getAsInt()) {
        return Optional.of("would leave " + unavailable + " pods of " + name + " unavailable (maxUnavailablePerOwner "
            + active.limits().maxUnavailablePerOwner().getAsInt() + ")");
      }
    }
    return Optional.empty();
  }

  /**
   * Running pods (bound to a node, not finished, not terminating) in a namespace, or in the cluster when it is null:
   * a never-scheduled Pending pod is nothing an eviction could take away. The cache keeps the counts as pods change;
   * pods this service is removing, which the cache still shows running, are taken off.
   *
   * <p>Two reads, not one snapshot. The cache changes a count before it shows the change in its records (RecordStore),
   * and the count is read after the records: a pod deleted meanwhile is then off both, or taken off twice (a stricter
   * guard), never counted without being taken off (a laxer one). Taken off twice can trip the guard falsely, so the
   * count is read on both sides of the look-up, and the look-up made again if it moved.
   */
  private int running(String namespace) {
    IntSupplier counted = namespace == null ? cache::runningInCluster : () -> cache.runningInNamespace(namespace);
    int attempt = 0;
    while (true) {
      int before = counted.getAsInt();
      int removing = removing(namespace);
      int after = counted.getAsInt();
      if (before == after || ++attempt == RUNNING_READS) {
        return after - removing;
      }
    }
  }

  /**
   * Pods this service is removing that the cache still shows running, in a namespace or (null) the cluster: those
   * reserved lately, and evictions in background. The latter on their own too: one taken over from an earlier leader
   * was never reserved here, and one can outlast removedLately.
   */
  private int removing(String namespace) {
    String prefix = namespace == null ? "" : namespace + "/";
    int removing = 0;
    for (Map.Entry<String, String> removed : removedLately.asMap().entrySet()) {
      removing += runningUnder(prefix, removed.getKey(), removed.getValue()) ? 1 : 0;
    }
    for (Map.Entry<String, InFlight> inFlight : inBackground.asMap().entrySet()) {
      String uid = inFlight.getKey();
      removing += removedLately.getIfPresent(uid) == null && runningUnder(prefix, uid, inFlight.getValue().decision().podKey()) ? 1 : 0;
    }
    return removing;
  }

  /** Whether the cache shows the pod {@code uid} running under {@code key}, a key that starts with {@code prefix}. */
  private boolean runningUnder(String prefix, String uid, String key) {
    return key.startsWith(prefix) && cache.pod(key).filter(p -> p.uid().equals(uid) && p.runningOnNode()).isPresent();
  }

  /** Whether this service is removing the pod: reserved lately, or an eviction in background. */
  private boolean beingRemoved(String uid) {
    return removedLately.getIfPresent(uid) != null || inBackground.getIfPresent(uid) != null;
  }

  private Duration backOff(String uid) {
    Backoff previous = backoff.getIfPresent(uid);
    int attempts = previous == null ? 1 : previous.attempts() + 1;
    Duration delay = FIRST_BACKOFF.multipliedBy(1L << Math.min(attempts - 1, 10));
    if (delay.compareTo(MAX_BACKOFF) > 0) {
      delay = MAX_BACKOFF;
    }
    backoff.put(uid, new Backoff(attempts, clock.instant().plus(delay)));
    return delay;
  }

  // PodMigrationJobs (Koordinator): a job this service carries out holds its place in the limits as an eviction in
  // background (inBackground, carried into each new window), from its admission until it ends or sends its eviction;
  // its eviction passes the same final check.

  /** How a job's eviction went: sent (the pod goes), held (look again later), refused (the job fails), or the pod is gone. */
  enum JobSend { SENT, HELD, REFUSED, GONE }

  record JobSendResult(JobSend outcome, String message) {}

  /** Why a job waits while the policy in force is a dry-run: a job's eviction has no dry-run of its own. */
  static final String JOBS_IN_DRY_RUN = "dry-run: PodMigrationJobs are neither started nor evicted";

  /**
   * Pods whose job this gate admitted from the cluster rather than made (by UID): whatever profile the job names, it
   * also meets the protections of a hand-made job, since anyone who may create a job can write its annotations.
   */
  private final Set<String> adopted = ConcurrentHashMap.newKeySet();

  /** Pods with a job in progress, by UID: never a second job or removal for them until it ends. */
  private final Set<String> jobs = ConcurrentHashMap.newKeySet();

  private void jobStarted(PodRecord pod, Candidate candidate, Reservation reservation, String message) {
    Decision decision = candidate.decision();
    jobs.add(decision.uid());
    adopted.remove(decision.uid());
    inProgress(new InFlight(decision, owner(pod), candidate.balance(), reservation, false));
    outcomes.record(decision, Result.BACKGROUND, message, false);
  }

  /**
   * Takes a job's place in the limits (a hand-made job, or one whose admission this replica did not see): why it must
   * wait, or empty once admitted. Refused by the same hold-backs and limits as any removal, reported the same way.
   */
  Optional<String> admitJob(PodRecord pod, Decision decision) {
    if (createdHere(pod)) {
      return Optional.empty();
    }
    // A job this service made for a rule's deadline is judged by that rule; any other (a pass's, a hand-made one's) by
    // the profile's evictor.
    boolean balance = !rules.get().evaluator().decidesPerPod(decision.profile(), decision.strategy());
    Candidate candidate = new Candidate(decision, balance, rules.get().generation(), false, null);
    Instant now = clock.instant();
    if (!mayLead.getAsBoolean() || closing) {
      return Optional.of("this replica does not lead");
    }
    if (rules.get().policy().dryRun()) {
      return Optional.of(JOBS_IN_DRY_RUN);
    }
    if (heldBack(pod, candidate, now)) {
      return Optional.of(killSwitch.holds(decision.action()) ? "removals are paused: " + killSwitch.reason() : "held back by a throttle");
    }
    BlastRadiusGuard inGuard = guard; // as in admit
    if (!journal.takeOver(inGuard)) {
      return Optional.of("the guard's window is not read yet");
    }
    Optional<Reservation> reservation = reserve(pod, candidate, inGuard, now);
    if (reservation.isEmpty()) {
      return Optional.of("over a removal limit, or the blast-radius guard refused it");
    }
    if (reservation.get().guard().counts(decision) && !journal.persist(reservation.get().guard())) {
      release(decision, reservation.get());
      return Optional.of("cannot write the guard's window");
    }
    jobs.add(pod.uid());
    adopted.add(pod.uid());
    inProgress(new InFlight(decision, owner(pod), balance, reservation.get(), false));
    return Optional.empty();
  }

  /** What holds every job's eviction now; a job admitted while the policy was live also waits out a dry-run. */
  private Optional<String> jobHeldNow() {
    return heldNow(Action.EVICT).or(() -> rules.get().policy().dryRun() ? Optional.of(JOBS_IN_DRY_RUN) : Optional.empty());
  }

  /**
   * A job's eviction: the final check on what is current (lease, kill switch, cache, the pod the job names, and the
   * policy: a job this gate made must still be wanted by its rule or strategy, any other must pass {@code protection}),
   * the rate, then at once the request with the pod's current UID and resourceVersion as preconditions.
   *
   * @param protection why the pod must not go, for a job this gate did not make (the evictor's protections): the only
   *     judge of a hand-made job, and a minimum for one that names the profile that made it elsewhere
   * @param send the request by the job's eviction policy (Eviction, Delete, soft eviction)
   */
  JobSendResult evictForJob(PodRecord pod, Optional<String> protection, java.util.function.Function<Decision, PodRemover.Result> send) {
    InFlight entry = inBackground.getIfPresent(pod.uid());
    if (entry == null || !jobs.contains(pod.uid())) {
      return new JobSendResult(JobSend.HELD, "not admitted");
    }
    Optional<String> hold = jobHeldNow();
    if (hold.isPresent()) {
      return new JobSendResult(JobSend.HELD, hold.get());
    }
    Backoff waiting = backoff.getIfPresent(pod.uid());
    if (waiting != null && waiting.retryAt().isAfter(clock.instant())) {
      return new JobSendResult(JobSend.HELD, "retried after " + waiting.retryAt());
    }
    // Judged at admission, and again now: siblings may have gone unavailable since, or been admitted by the worker
    // at the same moment (its own final check sees this job; this one must see its removal).
    Optional<String> throttled = ownerThrottle(pod, rules.get().policy());
    if (throttled.isPresent()) {
      return new JobSendResult(JobSend.HELD, throttled.get());
    }
    Decision old = entry.decision();
    Optional<String> refusal = old.profile().equals(MigrationJobController.STRATEGY) ? protection
        : stillWanted(entry, pod).or(() -> adopted.contains(pod.uid()) ? protection : Optional.empty());
    if (refusal.isPresent()) {
      return new JobSendResult(JobSend.REFUSED, refusal.get());
    }
    if (!bucket.tryTake().isZero()) {
      return new JobSendResult(JobSend.HELD, "waiting for the removal rate");
    }
    // Again, last: the judging above takes a while on a large cluster.
    Optional<String> last = jobHeldNow();
    if (last.isPresent()) {
      return new JobSendResult(JobSend.HELD, last.get());
    }
    Decision now = new Decision(pod.namespace(), pod.name(), pod.uid(), pod.resourceVersion(), pod.nodeName(), old.strategy(),
        old.profile(), old.rule(), Action.EVICT, old.reason(), old.dueAt(), old.owner());
    PodRemover.Result result = send.apply(now);
    switch (result.outcome()) {
      case REMOVED -> {
        // It happened: counted in the window it was admitted in, no longer in progress (unless the pod's deletion,
        // seen meanwhile, ended it already).
        supersede(now, entry.reservation());
        if (settles(entry)) {
          uncarry(entry);
          outcomes.record(now, Result.SUCCESS, result.message(), false);
          freed(entry);
        }
        return new JobSendResult(JobSend.SENT, result.message());
      }
      case GONE -> {
        return new JobSendResult(JobSend.GONE, result.message());
      }
      case REFUSED -> {
        metrics.pdbRefusals.labels(now.namespace()).inc();
        outcomes.record(now, Result.PDB_REFUSED, result.message() + "; retry in " + backOff(pod.uid()).toSeconds() + "s", false);
      }
      case CONFLICT -> outcomes.record(now, Result.CONFLICT, "the pod changed: " + result.message(), false);
      default -> {
        if (result.code() == PodRemover.NO_ANSWER) {
          // It may have been carried out: if the job ends without another eviction, the guard keeps counting it.
          entry.unanswered().set(now);
        }
        metrics.apiErrors.labels(now.action().wireName(), String.valueOf(result.code())).inc();
        outcomes.record(now, Result.ERROR, result.code() + " " + result.message() + "; retry in " + backOff(pod.uid()).toSeconds() + "s",
            false);
      }
    }
    return new JobSendResult(JobSend.HELD, result.code() + " " + result.message());
  }

  /** A job this gate made is carried out only while its rule (re-judged on the pod as it is) or its profile still wants it. */
  private Optional<String> stillWanted(InFlight job, PodRecord pod) {
    Rules now = rules.get();
    if (job.balance()) {
      return now.evaluator().refusal(job.decision().profile(), pod, cache);
    }
    boolean due = now.evaluator().evaluate(pod, cache).filter(v -> v.isDue(clock.instant())).isPresent();
    return due ? Optional.empty() : Optional.of("no rule wants the pod now");
  }

  /**
   * Whether {@code pod} has a job this gate admitted. If its job is being created right now, waits for the create's
   * answer first: the job's watch event can arrive before it, and admitting that job anew would count the pod twice.
   */
  private boolean createdHere(PodRecord pod) {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(PodRemover.REQUEST_TIMEOUT_SECONDS + 5);
    try {
      while (sending.containsKey(pod.key()) && System.nanoTime() < until) {
        Thread.sleep(10);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return jobs.contains(pod.uid());
  }

  /** A job ended: it no longer counts as in progress; its place goes back if it never sent its eviction. */
  void jobEnded(String podUid) {
    if (!jobs.remove(podUid)) {
      return; // no job of this gate's: whatever else is in progress for the pod is not the job's to end
    }
    adopted.remove(podUid);
    InFlight inFlight = inBackground.getIfPresent(podUid);
    if (inFlight != null && settles(inFlight)) {
      release(inFlight);
      freed(inFlight);
    }
  }

  /** Whether this replica may act on jobs now (leads, not stopping). */
  boolean mayLead() {
    return !closing && mayLead.getAsBoolean();
  }

  /** The policy in force now. */
  Rules rules() {
    return rules.get();
  }

  /** Stops admitting; waiting removals give up at once; requests already sent may finish. */
  @Override
  public void close() {
    closing = true;
    wake();
    senders.shutdown();
    try {
      senders.awaitTermination(40, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
