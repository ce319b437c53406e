package io.podsweeper.engine;

import io.podsweeper.cluster.PodListener;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.Policy;
import io.podsweeper.removal.Backoff;
import io.podsweeper.removal.EvictionRequester;
import io.podsweeper.removal.JobAdmission;
import io.podsweeper.removal.PoliciesCurrent;
import io.podsweeper.removal.RemovalPath;
import io.podsweeper.removal.RemovalRequests;
import io.podsweeper.removal.Rules;
import io.podsweeper.safety.GuardWindowStore;
import io.podsweeper.safety.RemovalBudget;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.PassResult;
import io.podsweeper.strategy.PolicyEvaluator;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The live loop's scheduler. Two keyed work queues: pods to evaluate (when they change, and again when a deadline
 * passes: a delayed add per pending deadline) and pods due (each handed to the {@link RemovalPath}, which alone decides
 * whether and when a request is sent, and answers when to look again). A periodic full pass re-evaluates every pod as a
 * safety net and runs the node-aware strategies, whose decisions join the same queue; so do the finished-pod budget's
 * removals ({@link BudgetRemovals}), as pods finish.
 *
 * <p>Nothing here outlives the process: deadlines, queues and backoff are rebuilt from the informers after a restart,
 * so a crash can neither remove a pod twice (requests carry preconditions) nor forget a due one.
 */
public final class Sweeper implements PodListener, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Sweeper.class);
  /** How soon a pod due while the cache or the team policies are not current is looked at again. */
  private static final Duration STALE_RETRY = Duration.ofSeconds(1);
  private static final Duration HOUSEKEEPING = Duration.ofSeconds(10);

  private final PodSource cache;
  private final Metrics metrics;
  private final Clock clock;
  private final RemovalPath path;
  private final Outcomes outcomes;
  private final ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "sweeper-timers"));
  private final Evaluations evaluations;
  private final DueRemovals due;
  private final BudgetRemovals budget;
  private final RoomPlans rooms;
  /** A look at the plans in flight is queued on the timer thread (events come in bursts: one look for them all). */
  private final AtomicBoolean roomLookQueued = new AtomicBoolean();
  private volatile boolean stopping;
  private volatile boolean leading = true;
  /** Whether this replica's lease is still valid by the local clock (leader election's fence); always, without it. */
  private volatile BooleanSupplier leaseValid = () -> true;
  /** The periodic full pass, and the interval it was scheduled with; replaced when a reload changes the interval. */
  private ScheduledFuture<?> fullPasses;
  private Duration fullPassInterval;

  public Sweeper(Policy policy, PodSource cache, RemovalRequests requests, Metrics metrics, Clock clock, RecentDecisions recent) {
    this(policy, cache, requests, metrics, clock, recent, new KillSwitch(metrics, (paused, reason, over) -> true), reason -> {}, GuardWindowStore.NONE);
  }

  /**
   * @param guardTrippedNotice told (besides the log line) when the blast-radius guard stops removals, e.g. to
   *     record a Kubernetes Event
   * @param guardWindow where the guard's window is remembered across restarts and failovers
   */
  public Sweeper(Policy policy, PodSource cache, RemovalRequests requests, Metrics metrics, Clock clock, RecentDecisions recent,
      KillSwitch killSwitch, Consumer<String> guardTrippedNotice, GuardWindowStore guardWindow) {
    this.cache = cache;
    this.metrics = metrics;
    this.clock = clock;
    Backoff backoff = new Backoff(clock, System::nanoTime);
    // Evaluations back off on their own: a pod whose judging threw is not thereby held from removal, nor the reverse.
    this.evaluations = new Evaluations(cache, this::rules, clock, metrics,
        new WorkQueue(System::nanoTime, new Backoff(clock, System::nanoTime)), this::dueNow, System::nanoTime,
        ManagementFactory.getThreadMXBean()::getCurrentThreadCpuTime, () -> leading);
    this.outcomes = new Outcomes(metrics, recent, clock, () -> rules().policy().source());
    this.path = new RemovalPath(policy, new RemovalPath.Ports(cache, requests, killSwitch, outcomes, metrics, clock, System::nanoTime,
        backoff, () -> leading && !stopping && leaseValid.getAsBoolean(), guardTrippedNotice, guardWindow, evaluations::add));
    this.due = new DueRemovals(cache, path, clock, metrics, new WorkQueue(System::nanoTime, backoff), evaluations::add, this::settled);
    this.budget = new BudgetRemovals(cache, clock, System::nanoTime, new WorkQueue(System::nanoTime, new Backoff(clock, System::nanoTime)),
        due::add, () -> leading && !stopping);
    path.budgetsCheckedBy(budget::refusal);
    metrics.registerScrapeTimeFamilies(() -> BudgetGauges.of(budget.usage()));
    this.rooms = new RoomPlans(cache, clock, metrics, due::add, path::rules, () -> leading && !stopping && leaseValid.getAsBoolean(),
        this::lookAtRoomPlansSoon);
    outcomes.addListener(rooms::outcome);
    path.balanceWantedWhile(rooms::wants);
    killSwitch.onResume(this::resumed);
    killSwitch.onPause(path::reconsiderRequests);
    timers.setRemoveOnCancelPolicy(true);
    metrics.dryRun.set(policy.dryRun() ? 1 : 0);
  }

  /** A new policy (hot reload): takes effect at once, every pod is evaluated again under it. */
  public void reload(Policy newPolicy) {
    Rules applied = path.apply(newPolicy);
    due.dropBalanced();
    budget.rebuild(path.rules());
    rooms.policyChanged(applied);
    metrics.dryRun.set(newPolicy.dryRun() ? 1 : 0);
    scheduleFullPasses(newPolicy.fullPassInterval());
    evaluations.addAll();
  }

  /** While {@code current} says a namespace's policies are behind, nothing is decided or sent there. */
  public void policiesCurrentWhile(PoliciesCurrent current) {
    path.policiesCurrentWhile(current);
  }

  /** The cache and the team policies are current: decisions may be made and sent on them. */
  public boolean current() {
    return path.current();
  }

  /** Leader election's verdict: only the leader sends removals; a new leader looks at every pod at once. */
  public void setLeading(boolean value) {
    boolean was = leading;
    leading = value;
    metrics.leader.set(value ? 1 : 0);
    if (!value) {
      path.steppedDown();
      if (was) {
        rooms.steppedDown();
      }
    }
    path.wake();
    if (value && !was && !stopping) {
      path.adoptRequests();
      budget.wake();
      // Not a new limits window: a replica that lost its lease and won it again (an API-server blip) stays within the
      // limits of the window it was in.
      timers.execute(this::passWithinTheWindow);
    }
  }

  /** Evictions go as EvictionRequests (KEP-4563), for the pods the policy says: the cluster serves the API. */
  public void requestEvictionsThrough(EvictionRequester requester) {
    path.requestEvictionsThrough(requester);
  }

  /** An EvictionRequest was added or changed (its informer's thread). */
  public void evictionRequestObserved(EvictionRequester.Observed observed) {
    path.evictionRequestObserved(observed);
  }

  /** The EvictionRequests are listed: this service takes over those it is a requester of (a restart). */
  public void adoptEvictionRequests() {
    path.adoptRequests();
  }

  /** The fence: no request is sent unless {@code valid} says this replica's lease has not run out. */
  public void fenceWith(BooleanSupplier valid) {
    this.leaseValid = valid;
  }

  private void resumed() {
    path.resumed();
    if (!stopping) {
      evaluations.addAll();
      budget.wake();
    }
  }

  /** Where warnings about per-pod lifetimes that do not parse go, besides the log and the metric (Events). */
  public void warnAboutLifetimes(LifetimeWarnings.Sink sink) {
    evaluations.warnAboutLifetimes(sink);
  }

  /** Where the Events go that say ahead of time when a pod will be removed (the policy's {@code warnBefore}). */
  public void warnBeforeRemovals(RemovalWarnings.Sink sink) {
    evaluations.warnBeforeRemovals(sink);
  }

  /** Told (namespace, why) when a namespace's team rules are put off for its share of the evaluation thread. */
  public void reportThrottledTeams(BiConsumer<String, String> sink) {
    evaluations.reportThrottledTeams(sink);
  }

  /** Where MakeRoom's plans hold their room (the pending pod's nomination) and tell what they do (Events). */
  public void holdRoomWith(RoomHolds holds) {
    rooms.holdRoomWith(holds);
  }

  /** Where MakeRoom's plans to free a node hold it (this service's NoSchedule taint) and tell what they do (Events). */
  public void holdNodesWith(NodeHolds holds) {
    rooms.holdNodesWith(holds);
  }

  /** Told about every outcome (Events, the audit log). */
  public void addListener(OutcomeListener listener) {
    outcomes.addListener(listener);
  }

  /** Starts evaluating and removing, and the periodic full pass; call once the cache has synced. */
  public void start() {
    evaluations.start();
    due.start();
    budget.rebuild(path.rules());
    budget.start();
    timers.scheduleWithFixedDelay(path::expire, HOUSEKEEPING.toMillis(), HOUSEKEEPING.toMillis(), TimeUnit.MILLISECONDS);
    long every = RoomPlans.LOOK_EVERY.toMillis();
    timers.scheduleWithFixedDelay(this::lookAtRoomPlans, every, every, TimeUnit.MILLISECONDS);
    // The informers' initial list has just queued every pod; the first full pass is one interval away.
    scheduleFullPasses(path.rules().policy().fullPassInterval());
  }

  /** Full passes every {@code interval}, the first one interval from now; nothing if that is the schedule already. */
  private synchronized void scheduleFullPasses(Duration interval) {
    if (stopping || interval.equals(fullPassInterval)) {
      return;
    }
    if (fullPasses != null) {
      fullPasses.cancel(false);
    }
    fullPassInterval = interval;
    fullPasses = timers.scheduleWithFixedDelay(this::fullPass, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void podChanged(PodRecord pod) {
    path.podChanged(pod);
    budget.podChanged(pod);
    if (rooms.involves(pod)) {
      lookAtRoomPlansSoon();
    }
    evaluations.add(pod.key());
    if (pod.terminated() && path.rules().evaluator().usesRetention()) {
      // A newly finished pod can push an older one of its group beyond a keepLast: look at the group now.
      String group = pod.retentionGroup();
      cache.podsInNamespace(pod.namespace()).stream()
          .filter(p -> p.terminated() && !p.key().equals(pod.key()) && p.retentionGroup().equals(group))
          .forEach(p -> evaluations.add(p.key()));
    }
  }

  /** A pod is due now. */
  private void dueNow(String key) {
    due.add(key);
  }

  /** What became of a decision over the cluster: the budget's own are its to settle. */
  private void settled(Decision decision, long generation, boolean removed) {
    budget.settled(decision, generation, removed);
  }

  @Override
  public void podDeleted(PodRecord pod) {
    path.podDeleted(pod);
    budget.podDeleted(pod);
    evaluations.forget(pod);
    due.cancel(pod.key());
    if (rooms.involves(pod)) {
      lookAtRoomPlansSoon();
    }
  }

  @Override
  public void namespaceChanged(String namespace) {
    budget.namespaceChanged(namespace);
    cache.podsInNamespace(namespace).forEach(p -> evaluations.add(p.key()));
  }

  /** Every cached pod once more, in a new limits window (where the budget's removals held by the limits may go). */
  void fullPass() {
    path.newWindow();
    budget.wake();
    passWithinTheWindow();
  }

  /** Every cached pod once more, and the balance strategies, in the limits window in force. */
  private void passWithinTheWindow() {
    long started = System.nanoTime();
    try {
      evaluations.addAll();
      balance();
    } catch (RuntimeException e) {
      LOG.error("full pass failed", e);
    } finally {
      metrics.fullPass((System.nanoTime() - started) / 1e9);
    }
  }

  /** The node-aware strategies over the whole cache; their decisions join the same queue and the same path. */
  private void balance() {
    Instant now = clock.instant();
    Rules in = path.rules();
    PassResult pass = in.evaluator().balance(cache, now, new RemovalBudget(in.policy().limits()), metrics::timeStrategy);
    if (pass.skipped().isPresent()) {
      metrics.balancePasses.labels("skipped").inc();
      LOG.info("balance strategies skipped: {}", pass.skipped().get());
      return;
    }
    metrics.balancePasses.labels("run").inc();
    pass.notes().forEach(note -> LOG.debug("balance: {}", note));
    pass.faults().forEach(fault -> {
      metrics.evaluationErrors.labels("", "balance").inc();
      LOG.error("balance: {}; the pass went on without it", fault);
    });
    pass.decisions().forEach(d -> due.add(d, in.generation()));
    rooms.offer(pass.plans(), in);
  }

  /** A look at MakeRoom's plans in flight, on the timer thread, unless one is queued already. */
  private void lookAtRoomPlansSoon() {
    if (!stopping && roomLookQueued.compareAndSet(false, true)) {
      try {
        timers.execute(this::lookAtRoomPlans);
      } catch (RejectedExecutionException e) {
        roomLookQueued.set(false); // shutting down
      }
    }
  }

  private void lookAtRoomPlans() {
    roomLookQueued.set(false);
    try {
      rooms.look();
    } catch (RuntimeException e) {
      LOG.error("looking at MakeRoom's plans in flight failed", e);
    }
  }

  /** Where PodMigrationJobs are admitted and carried out. */
  public JobAdmission jobs() {
    return path.jobs();
  }

  /** The policy in force now. */
  public Rules rules() {
    return path.rules();
  }

  /** Pods whose deadline is ahead, each to be evaluated again then. */
  public int pendingDeadlines() {
    return evaluations.pendingDeadlines();
  }

  public PolicyEvaluator evaluator() {
    return path.rules().evaluator();
  }

  /** Stops deciding; a removal waiting for its turn gives up at once, a request already sent may finish. */
  @Override
  public void close() {
    stopping = true;
    synchronized (this) {
      if (fullPasses != null) {
        fullPasses.cancel(false);
      }
    }
    path.wake();
    try {
      due.close();
      budget.close();
      evaluations.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    path.close();
    timers.shutdownNow();
    rooms.close();
  }

  static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
