package io.podsweeper.engine;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.kube.ClusterCache;
import io.podsweeper.kube.EvictionRequester;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.Policy;
import io.podsweeper.safety.GuardWindowStore;
import io.podsweeper.safety.RemovalBudget;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.PassResult;
import io.podsweeper.strategy.PolicyEvaluator;
import io.podsweeper.strategy.Verdict;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The live loop's scheduler: evaluates a pod when it changes and again when its deadline passes (one timer per
 * pending deadline), runs a periodic full pass as a safety net and the node-aware strategies, and hands due pods one
 * at a time to the {@link RemovalGate}, which alone decides whether and when a request is sent.
 *
 * <p>Nothing here outlives the process: deadlines, queue and backoff are rebuilt from the informers after a
 * restart, so a crash can neither remove a pod twice (requests carry preconditions) nor forget a due one.
 */
public final class Sweeper implements ClusterCache.PodListener, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Sweeper.class);
  private static final String STOP = "";

  private record Deadline(String uid, Instant dueAt, ScheduledFuture<?> timer) {}

  /** A node-aware decision waiting for the worker, and the policy generation it was made under. */
  private record QueuedBalance(Decision decision, long generation) {}

  private final PodSource cache;
  private final Metrics metrics;
  private final Clock clock;
  private final ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "sweeper-timers"));
  private final Map<String, Deadline> deadlines = new ConcurrentHashMap<>();
  private final BlockingQueue<String> queue = new LinkedBlockingQueue<>();
  private final Set<String> queued = ConcurrentHashMap.newKeySet();
  private final Map<String, Instant> dueSince = new ConcurrentHashMap<>();
  /** Decisions of the last balance pass, by pod key, until the worker takes them; a reload drops them. */
  private final Map<String, QueuedBalance> balanceDecisions = new ConcurrentHashMap<>();
  private final Thread worker = daemon(this::work, "sweeper-removals");
  private final Outcomes outcomes;
  private final RemovalGate gate;
  private final KillSwitch killSwitch;
  private final LifetimeWarnings lifetimeWarnings;
  private volatile RemovalGate.Rules rules;
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
    this.killSwitch = killSwitch;
    this.lifetimeWarnings = new LifetimeWarnings(metrics);
    this.outcomes = new Outcomes(metrics, recent, clock, () -> rules.policy().source());
    this.gate = new RemovalGate(cache, requests, killSwitch, outcomes, metrics, clock, () -> rules,
        () -> leading && !stopping && leaseValid.getAsBoolean(), this::retryLater, guardTrippedNotice,
        new GuardJournal(guardWindow, clock));
    killSwitch.onResume(this::resumed);
    killSwitch.onPause(gate::reconsiderRequests);
    timers.setRemoveOnCancelPolicy(true);
    apply(policy);
  }

  private void apply(Policy newPolicy) {
    RemovalGate.Rules old = rules;
    RemovalGate.Rules next = new RemovalGate.Rules(newPolicy, new PolicyEvaluator(newPolicy), old == null ? 1 : old.generation() + 1);
    gate.apply(old == null ? null : old.policy(), newPolicy, () -> {
      rules = next;
      // Node-aware decisions hold only under the policy that made them: the next balance pass decides again.
      balanceDecisions.clear();
    });
    metrics.dryRun.set(newPolicy.dryRun() ? 1 : 0);
  }

  /** A new policy (hot reload): takes effect at once, every pod is evaluated again under it. */
  public void reload(Policy newPolicy) {
    apply(newPolicy);
    scheduleFullPasses(newPolicy.fullPassInterval());
    cache.pods().forEach(this::evaluate);
  }

  /** While {@code current} is false (the namespaced policies' informers are behind), nothing is decided or sent. */
  public void policiesCurrentWhile(java.util.function.BooleanSupplier current) {
    gate.policiesCurrentWhile(current);
  }

  /** Leader election's verdict: only the leader sends removals; a new leader looks at every pod at once. */
  public void setLeading(boolean value) {
    boolean was = leading;
    leading = value;
    metrics.leader.set(value ? 1 : 0);
    if (!value) {
      gate.steppedDown();
    }
    gate.wake();
    if (value && !was && !stopping) {
      gate.adoptRequests();
      // Not a new limits window: a replica that lost its lease and won it again (an API-server blip) stays within the
      // limits of the window it was in.
      timers.execute(this::passWithinTheWindow);
    }
  }

  /** Evictions go as EvictionRequests (KEP-4563), for the pods the policy says: the cluster serves the API. */
  public void requestEvictionsThrough(EvictionRequester requester) {
    gate.requestEvictionsThrough(requester);
  }

  /** An EvictionRequest was added or changed (its informer's thread). */
  public void evictionRequestObserved(EvictionRequester.Observed observed) {
    gate.evictionRequestObserved(observed);
  }

  /** The EvictionRequests are listed: this service takes over those it is a requester of (a restart). */
  public void adoptEvictionRequests() {
    gate.adoptRequests();
  }

  /** The fence: no request is sent unless {@code valid} says this replica's lease has not run out. */
  public void fenceWith(BooleanSupplier valid) {
    this.leaseValid = valid;
  }

  private void resumed() {
    gate.resumed();
    if (!stopping) {
      timers.execute(() -> cache.pods().forEach(this::evaluate));
    }
  }

  /** Where warnings about per-pod lifetimes that do not parse go, besides the log and the metric (Events). */
  void warnAboutLifetimes(LifetimeWarnings.Sink sink) {
    lifetimeWarnings.sendTo(sink);
  }

  /** Told about every outcome (Events, the audit log). */
  public void addListener(OutcomeListener listener) {
    outcomes.addListener(listener);
  }

  /** Starts removing, and the periodic full pass; call once the cache has synced. */
  public void start() {
    worker.start();
    // The informers' initial list has just evaluated every pod; the first full pass is one interval away.
    scheduleFullPasses(rules.policy().fullPassInterval());
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
    gate.podChanged(pod);
    evaluate(pod);
    if (pod.terminated() && rules.evaluator().usesRetention()) {
      // A newly finished pod can push an older one of its group beyond a keepLast: look at the group now.
      String group = pod.retentionGroup();
      cache.podsInNamespace(pod.namespace()).stream()
          .filter(p -> p.terminated() && !p.key().equals(pod.key()) && p.retentionGroup().equals(group))
          .forEach(this::evaluate);
    }
  }

  @Override
  public void podDeleted(PodRecord pod) {
    gate.podDeleted(pod);
    lifetimeWarnings.forget(pod);
    cancelDeadline(pod.key());
    dueSince.remove(pod.key());
  }

  @Override
  public void namespaceChanged(String namespace) {
    cache.pods().stream().filter(p -> p.namespace().equals(namespace)).forEach(this::evaluate);
  }

  /** Every cached pod once more, in a new limits window. */
  void fullPass() {
    gate.newWindow();
    passWithinTheWindow();
  }

  /** Every cached pod once more, and the balance strategies, in the limits window in force. */
  private void passWithinTheWindow() {
    long started = System.nanoTime();
    try {
      cache.pods().forEach(this::evaluate);
      balance();
    } catch (RuntimeException e) {
      LOG.error("full pass failed", e);
    } finally {
      metrics.passDuration.observe((System.nanoTime() - started) / 1e9);
    }
  }

  /** The node-aware strategies over the whole cache; their decisions join the same queue and the same gate. */
  private void balance() {
    Instant now = clock.instant();
    RemovalGate.Rules in = rules;
    PassResult pass = in.evaluator().balance(cache, now, new RemovalBudget(in.policy().limits()));
    if (pass.skipped().isPresent()) {
      metrics.balancePasses.labels("skipped").inc();
      LOG.info("balance strategies skipped: {}", pass.skipped().get());
      return;
    }
    metrics.balancePasses.labels("run").inc();
    pass.notes().forEach(note -> LOG.debug("balance: {}", note));
    for (Decision d : pass.decisions()) {
      balanceDecisions.put(d.podKey(), new QueuedBalance(d, in.generation()));
      enqueue(d.podKey(), now);
    }
  }

  private void evaluate(PodRecord pod) {
    if (stopping) {
      return;
    }
    Optional<Verdict> verdict = rules.evaluator().evaluate(pod, cache);
    lifetimeWarnings.check(pod, rules.evaluator().invalidLifetimes(pod, cache));
    if (verdict.isEmpty()) {
      cancelDeadline(pod.key());
      return;
    }
    Instant dueAt = verdict.get().dueAt();
    if (verdict.get().isDue(clock.instant())) {
      cancelDeadline(pod.key());
      enqueue(pod.key(), dueAt);
    } else {
      schedule(pod, dueAt);
    }
  }
  private void schedule(PodRecord pod, Instant dueAt) {
    deadlines.compute(pod.key(), (key, existing) -> {
      if (existing != null && existing.uid().equals(pod.uid()) && existing.dueAt().equals(dueAt)) {
        return existing;
      }
      if (existing != null) {
        existing.timer().cancel(false);
      }
      // "Strictly older than": due one millisecond after the deadline itself.
      long delay = Math.max(0, Duration.between(clock.instant(), dueAt).toMillis() + 1);
      ScheduledFuture<?> timer = timers.schedule(() -> deadlinePassed(key, pod.uid()), delay, TimeUnit.MILLISECONDS);
      return new Deadline(pod.uid(), dueAt, timer);
    });
    metrics.pendingDeadlines.set(deadlines.size());
  }

  private void deadlinePassed(String key, String uid) {
    deadlines.computeIfPresent(key, (k, d) -> d.uid().equals(uid) ? null : d);
    metrics.pendingDeadlines.set(deadlines.size());
    cache.pod(key).filter(p -> p.uid().equals(uid)).ifPresent(this::evaluate);
  }

  private void cancelDeadline(String key) {
    Deadline removed = deadlines.remove(key);
    if (removed != null) {
      removed.timer().cancel(false);
      metrics.pendingDeadlines.set(deadlines.size());
    }
  }

  private void enqueue(String key, Instant dueAt) {
    dueSince.putIfAbsent(key, dueAt);
    if (queued.add(key)) {
      queue.add(key);
      metrics.queuedRemovals.set(queued.size());
    }
  }

  private void retryLater(String key, Duration delay) {
    if (!stopping) {
      timers.schedule(() -> cache.pod(key).ifPresent(this::evaluate), delay.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  private void work() {
    while (!stopping) {
      String key;
      try {
        key = queue.take();
      } catch (InterruptedException e) {
        return;
      }
      if (key.equals(STOP)) {
        return;
      }
      queued.remove(key);
      metrics.queuedRemovals.set(queued.size());
      try {
        process(key);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        LOG.error("removal of {} failed unexpectedly; it is retried at the next pass", key, e);
      }
    }
  }

  /** Turns a queued pod into a candidate for the gate, if it is still due (or still the pod a balance pass chose). */
  private void process(String key) throws InterruptedException {
    if (gate.busyWith(key)) {
      // Its request is on its way; the outcome (or the pod's next event) decides what happens next.
      return;
    }
    if (!gate.current()) {
      // Never decide on a cache or policy that may be stale (watch broken, relisting): wait for them to catch up.
      retryLater(key, RemovalGate.STALE_CACHE_RETRY);
      return;
    }
    Optional<PodRecord> current = cache.pod(key);
    Instant now = clock.instant();
    RemovalGate.Rules in = rules;
    Optional<Verdict> verdict = current.flatMap(p -> in.evaluator().evaluate(p, cache)).filter(v -> v.isDue(now));
    // A balance decision holds only for the very pod version, and the very policy, it was made on.
    Optional<QueuedBalance> balanced = Optional.ofNullable(balanceDecisions.remove(key))
        .filter(q -> current.isPresent() && q.generation() == in.generation() && q.decision().uid().equals(current.get().uid())
            && q.decision().resourceVersion().equals(current.get().resourceVersion()));
    Instant due = dueSince.remove(key);
    if (verdict.isEmpty() && balanced.isEmpty()) {
      // Gone, changed, or no longer due: its own events and deadlines take it from here.
      current.ifPresent(this::evaluate);
      return;
    }
    PodRecord pod = current.get();
    RemovalGate.Candidate candidate = verdict.isPresent()
        ? new RemovalGate.Candidate(verdict.get().decide(pod, now), false, in.generation(), in.policy().dryRun(), due)
        : new RemovalGate.Candidate(balanced.get().decision(), true, balanced.get().generation(), in.policy().dryRun(), due);
    gate.admit(pod, candidate);
  }

  /** The policy in force, compiled: what the last {@link #reload} (or the constructor) got. */
  /** The gate, for the PodMigrationJobs it admits and carries out. */
  RemovalGate gate() {
    return gate;
  }

  public PolicyEvaluator evaluator() {
    return rules.evaluator();
  }

  public int pendingDeadlines() {
    return deadlines.size();
  }

  /** Stops deciding; a removal waiting for its turn gives up at once, a request already sent may finish. */
  @Override
  public void close() {
    stopping = true;
    queue.add(STOP);
    synchronized (this) {
      if (fullPasses != null) {
        fullPasses.cancel(false);
      }
    }
    gate.wake();
    try {
      worker.join(Duration.ofSeconds(5).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    gate.close();
    timers.shutdownNow();
  }

  static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
