package io.podsweeper.engine;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.kube.ClusterCache;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.kube.PodRemover;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.Profile;
import io.podsweeper.safety.BlastRadiusGuard;
import io.podsweeper.safety.HourlyNamespaceCap;
import io.podsweeper.safety.RemovalBudget;
import io.podsweeper.safety.TokenBucket;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.PassResult;
import io.podsweeper.strategy.PolicyEvaluator;
import io.podsweeper.strategy.Verdict;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The live loop: evaluates a pod when it changes and again when its deadline passes (one timer per pending
 * deadline), runs a periodic full pass as a safety net, and removes due pods one at a time through the safety
 * checks (fresh cache, backoff, dry-run, limits, rate).
 *
 * <p>Nothing here outlives the process: deadlines, queue and backoff are rebuilt from the informers after a
 * restart, so a crash can neither remove a pod twice (requests carry preconditions) nor forget a due one.
 */
public final class Sweeper implements ClusterCache.PodListener, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Sweeper.class);
  private static final String STOP = "";
  static final Duration FIRST_BACKOFF = Duration.ofSeconds(5);
  static final Duration MAX_BACKOFF = Duration.ofMinutes(5);
  private static final Duration STALE_CACHE_RETRY = Duration.ofSeconds(1);

  private record Deadline(String uid, Instant dueAt, ScheduledFuture<?> timer) {}

  private record Backoff(int attempts, Instant retryAt) {}

  /** An eviction in background in progress, and the owner it counts against. */
  private record InFlight(Decision decision, String owner) {}

  static final Duration BACKGROUND_TIMEOUT = Duration.ofMinutes(10);
  static final String EVACUATION_MESSAGE = "Eviction triggered evacuation";

  private final PodSource cache;
  private final RemovalRequests requests;
  private final Metrics metrics;
  private final Clock clock;
  private final RecentDecisions recent;
  private final ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "sweeper-timers"));
  private final Map<String, Deadline> deadlines = new ConcurrentHashMap<>();
  private final BlockingQueue<String> queue = new LinkedBlockingQueue<>();
  private final Set<String> queued = ConcurrentHashMap.newKeySet();
  private final Map<String, Instant> dueSince = new ConcurrentHashMap<>();
  /** Decisions of the last balance pass, by pod key, until the worker takes them. */
  private final Map<String, Decision> balanceDecisions = new ConcurrentHashMap<>();
  private final Cache<String, Backoff> backoff = Caffeine.newBuilder().expireAfterWrite(MAX_BACKOFF.multipliedBy(2)).build();
  private final Set<String> reportedThisWindow = ConcurrentHashMap.newKeySet();
  /**
   * Pods this service is removing or removed lately, by UID: until the informer reports them gone they would count
   * as running twice in the guard's shares (once still cached, once as evicted).
   */
  private final Cache<String, Boolean> removedLately = Caffeine.newBuilder().expireAfterWrite(Duration.ofMinutes(5)).build();
  /** Evictions in background, by pod UID: never requested twice while in progress; a timeout ends one as failed. */
  private final Cache<String, InFlight> inBackground = Caffeine.newBuilder()
      .expireAfterWrite(BACKGROUND_TIMEOUT)
      .scheduler(com.github.benmanes.caffeine.cache.Scheduler.systemScheduler())
      .removalListener((String uid, InFlight f, com.github.benmanes.caffeine.cache.RemovalCause cause) -> {
        if (cause == com.github.benmanes.caffeine.cache.RemovalCause.EXPIRED && f != null) {
          record(f.decision(), Result.ERROR, "eviction in background did not finish within " + BACKGROUND_TIMEOUT.toMinutes() + "m", false);
        }
      })
      .build();
  private final Thread worker = daemon(this::work, "sweeper-removals");
  static final int MAX_IN_FLIGHT = 4;
  private final java.util.concurrent.Semaphore inFlightPermits = new java.util.concurrent.Semaphore(MAX_IN_FLIGHT);
  private final java.util.concurrent.ExecutorService senders =
      java.util.concurrent.Executors.newFixedThreadPool(MAX_IN_FLIGHT, r -> daemon(r, "sweeper-requests"));
  /** Pods whose request is in flight: a new event for one of them must not send a second request. */
  private final Set<String> sending = ConcurrentHashMap.newKeySet();
  private volatile Policy policy;
  private volatile PolicyEvaluator rules;
  private volatile RemovalBudget budget;
  private volatile TokenBucket bucket;
  private volatile boolean stopping;
  private volatile boolean leading = true;
  /** Whether this replica's lease is still valid by the local clock (leader election's fence); always, without it. */
  private volatile java.util.function.BooleanSupplier leaseValid = () -> true;
  private volatile BlastRadiusGuard guard;
  /** Kept across reloads: namespaced policies come and go, their hourly cap must not start over each time. */
  private final HourlyNamespaceCap namespaceCap = new HourlyNamespaceCap();
  /** maxRemovalsPerHourPerNamespace by profile name, for the profiles that have one (namespaced policies). */
  private volatile Map<String, Integer> hourlyCaps = Map.of();
  private final KillSwitch killSwitch;
  private final java.util.function.Consumer<String> guardTrippedNotice;
  private ScheduledFuture<?> fullPasses;
  private final List<OutcomeListener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();

  public Sweeper(Policy policy, PodSource cache, RemovalRequests requests, Metrics metrics, Clock clock, RecentDecisions recent) {
    this(policy, cache, requests, metrics, clock, recent, new KillSwitch(metrics, (p, r) -> {}), reason -> {});
  }

  /**
   * @param guardTrippedNotice told (besides the log line) when the blast-radius guard stops removals, e.g. to
   *     record a Kubernetes Event
   */
  public Sweeper(Policy policy, PodSource cache, RemovalRequests requests, Metrics metrics, Clock clock, RecentDecisions recent,
      KillSwitch killSwitch, java.util.function.Consumer<String> guardTrippedNotice) {
    this.killSwitch = killSwitch;
    this.guardTrippedNotice = guardTrippedNotice;
    killSwitch.onResume(this::resumed);
    this.cache = cache;
    this.requests = requests;
    this.metrics = metrics;
    this.clock = clock;
    this.recent = recent;
    timers.setRemoveOnCancelPolicy(true);
    apply(policy);
  }

  private void apply(Policy newPolicy) {
    Policy old = this.policy;
    this.policy = newPolicy;
    this.rules = new PolicyEvaluator(newPolicy);
    // A reload (a file edit, any PodCleanupPolicy change) must not open the limits and the guard's window again:
    // they start over only when they themselves change.
    if (old == null || !old.limits().equals(newPolicy.limits())) {
      this.budget = new RemovalBudget(newPolicy.limits());
      this.bucket = new TokenBucket(newPolicy.limits().perSecond());
    }
    if (old == null || !old.guard().equals(newPolicy.guard())) {
      this.guard = new BlastRadiusGuard(newPolicy.guard());
    }
    this.hourlyCaps = newPolicy.profiles().stream().filter(p -> p.maxRemovalsPerHourPerNamespace().isPresent())
        .collect(java.util.stream.Collectors.toUnmodifiableMap(Profile::name, p -> p.maxRemovalsPerHourPerNamespace().getAsInt()));
    metrics.dryRun.set(newPolicy.dryRun() ? 1 : 0);
  }

  /** A new policy (hot reload): takes effect at once, every pod is evaluated again under it. */
  public void reload(Policy newPolicy) {
    apply(newPolicy);
    reportedThisWindow.clear();
    cache.pods().forEach(this::evaluate);
  }

  /** Leader election's verdict: only the leader sends removals; a new leader looks at every pod at once. */
  public void setLeading(boolean value) {
    boolean was = leading;
    leading = value;
    metrics.leader.set(value ? 1 : 0);
    if (value && !was && !stopping) {
      timers.execute(this::fullPass);
    }
  }

  /** The fence: no request is sent unless {@code valid} says this replica's lease has not run out. */
  public void fenceWith(java.util.function.BooleanSupplier valid) {
    this.leaseValid = valid;
  }

  private void resumed() {
    guard.reset();
    metrics.guardTripped.set(0);
    reportedThisWindow.clear();
    if (!stopping) {
      timers.execute(() -> cache.pods().forEach(this::evaluate));
    }
  }

  /** Told about every outcome (Events, the audit log). */
  public void addListener(OutcomeListener listener) {
    listeners.add(listener);
  }

  /** Starts removing, and the periodic full pass; call once the cache has synced. */
  public void start() {
    worker.start();
    long interval = policy.fullPassInterval().toMillis();
    // The informers' initial list has just evaluated every pod; the first full pass is one interval away.
    fullPasses = timers.scheduleWithFixedDelay(this::fullPass, interval, interval, TimeUnit.MILLISECONDS);
  }

  @Override
  public void podChanged(PodRecord pod) {
    InFlight inFlight = inBackground.getIfPresent(pod.uid());
    if (inFlight != null && pod.terminated()) {
      inBackground.invalidate(pod.uid());
      boolean ok = "Succeeded".equals(pod.phase());
      record(inFlight.decision(), ok ? Result.SUCCESS : Result.ERROR, "eviction in background ended: pod " + pod.phase(), false);
    }
    evaluate(pod);
    if (pod.terminated() && rules.usesRetention()) {
      // A newly finished pod can push an older one of its group beyond a keepLast: look at the group now.
      String group = pod.retentionGroup();
      cache.podsInNamespace(pod.namespace()).stream()
          .filter(p -> p.terminated() && !p.key().equals(pod.key()) && p.retentionGroup().equals(group))
          .forEach(this::evaluate);
    }
  }

  @Override
  public void podDeleted(PodRecord pod) {
    InFlight inFlight = inBackground.getIfPresent(pod.uid());
    if (inFlight != null) {
      inBackground.invalidate(pod.uid());
      record(inFlight.decision(), Result.SUCCESS, "eviction in background ended: pod gone", false);
    }
    cancelDeadline(pod.key());
    dueSince.remove(pod.key());
    backoff.invalidate(pod.uid());
  }

  @Override
  public void namespaceChanged(String namespace) {
    cache.pods().stream().filter(p -> p.namespace().equals(namespace)).forEach(this::evaluate);
  }

  /** Every cached pod once more; also starts a new limits window. */
  void fullPass() {
    long started = System.nanoTime();
    try {
      budget.reset();
      reportedThisWindow.clear();
      cache.pods().forEach(this::evaluate);
      balance();
    } catch (RuntimeException e) {
      LOG.error("full pass failed", e);
    } finally {
      metrics.passDuration.observe((System.nanoTime() - started) / 1e9);
    }
  }

  /** The node-aware strategies over the whole cache; their decisions join the same queue and safety checks. */
  private void balance() {
    Instant now = clock.instant();
    PassResult pass = rules.balance(cache, now, new RemovalBudget(policy.limits()));
    if (pass.skipped().isPresent()) {
      metrics.balancePasses.labels("skipped").inc();
      LOG.info("balance strategies skipped: {}", pass.skipped().get());
      return;
    }
    metrics.balancePasses.labels("run").inc();
    pass.notes().forEach(note -> LOG.debug("balance: {}", note));
    for (Decision d : pass.decisions()) {
      balanceDecisions.put(d.podKey(), d);
      enqueue(d.podKey(), now);
    }
  }

  private void evaluate(PodRecord pod) {
    if (stopping) {
      return;
    }
    Optional<Verdict> verdict = rules.evaluate(pod, cache);
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

  private void process(String key) throws InterruptedException {
    if (sending.contains(key)) {
      // Its request is in flight; the outcome (or the pod's next event) decides what happens next.
      return;
    }
    if (!cache.isCurrent()) {
      // Never act on a cache that may be stale (watch broken, relisting): wait for it to catch up.
      retryLater(key, STALE_CACHE_RETRY);
      return;
    }
    Optional<PodRecord> current = cache.pod(key);
    Instant now = clock.instant();
    Optional<Verdict> verdict = current.flatMap(p -> rules.evaluate(p, cache)).filter(v -> v.isDue(now));
    // A balance decision holds only for the very pod version it was made on.
    Optional<Decision> balanced = Optional.ofNullable(balanceDecisions.remove(key))
        .filter(d -> current.isPresent() && d.uid().equals(current.get().uid()) && d.resourceVersion().equals(current.get().resourceVersion()));
    if (verdict.isEmpty() && balanced.isEmpty()) {
      // Gone, changed, or no longer due: its own events and deadlines take it from here.
      dueSince.remove(key);
      current.ifPresent(this::evaluate);
      return;
    }
    PodRecord pod = current.get();
    Decision decision = verdict.isPresent() ? verdict.get().decide(pod, now) : balanced.get();
    Backoff waiting = backoff.getIfPresent(pod.uid());
    if (waiting != null && waiting.retryAt().isAfter(now)) {
      retryLater(key, Duration.between(now, waiting.retryAt()));
      return;
    }
    if (!leading) {
      // A follower decides (its state stays warm) but never removes; the leader's full pass picks this up.
      dueSince.remove(key);
      return;
    }
    Policy active = policy;
    if (active.dryRun()) {
      dueSince.remove(key);
      if (reportedThisWindow.add(pod.uid() + "/dry-run")) {
        record(decision, Result.DRY_RUN, "dry-run: nothing removed", true);
      }
      return;
    }
    if (killSwitch.paused()) {
      dueSince.remove(key);
      if (reportedThisWindow.add(pod.uid() + "/paused")) {
        record(decision, Result.PAUSED, "removals are paused: " + killSwitch.reason(), false);
      }
      return;
    }
    if (inBackground.getIfPresent(pod.uid()) != null) {
      dueSince.remove(key);
      return;
    }
    Integer hourlyCap = hourlyCaps.get(decision.profile());
    Optional<String> throttled = ownerThrottle(pod, active)
        .or(() -> hourlyCap == null ? Optional.empty() : namespaceCap.check(pod.namespace(), hourlyCap, now));
    if (throttled.isPresent()) {
      dueSince.remove(key);
      if (reportedThisWindow.add(pod.uid() + "/throttled")) {
        record(decision, Result.LIMITED, throttled.get() + "; retried in the next pass", false);
      }
      return;
    }
    Optional<String> limit = budget.take(decision);
    if (limit.isPresent()) {
      dueSince.remove(key);
      if (reportedThisWindow.add(pod.uid() + "/limited")) {
        record(decision, Result.LIMITED, limit.get() + "; retried in the next pass", false);
      }
      return;
    }
    Optional<String> tripped = guard.check(decision, running(pod.namespace()), running(null), now);
    if (tripped.isPresent()) {
      String why = "blast-radius guard: " + tripped.get();
      metrics.guardTripped.set(1);
      killSwitch.pause(why);
      guardTrippedNotice.accept(why);
      LOG.error("{}; nothing more is removed until an operator resumes", why);
      budget.giveBack(decision);
      dueSince.remove(key);
      reportedThisWindow.add(pod.uid() + "/paused");
      record(decision, Result.PAUSED, why, false);
      return;
    }
    bucket.take();
    if (stopping) {
      budget.giveBack(decision);
      return;
    }
    Instant due = dueSince.remove(key);
    if (due != null) {
      metrics.decisionToRequest.observe(Math.max(0, Duration.between(due, clock.instant()).toNanos() / 1e9));
    }
    Instant admitted = clock.instant();
    guard.count(decision, admitted);
    if (hourlyCap != null) {
      namespaceCap.count(pod.namespace(), admitted);
    }
    removedLately.put(pod.uid(), true);
    // A few requests in flight at once, still paced by the token bucket: against a busy API server one at a time
    // cannot keep up with the configured rate (docs/benchmarks.md).
    inFlightPermits.acquire();
    sending.add(key);
    senders.execute(() -> {
      try {
        send(key, pod, decision, admitted, now, hourlyCap != null);
      } catch (RuntimeException e) {
        LOG.error("removal of {} failed unexpectedly; it is retried at the next pass", key, e);
      } finally {
        sending.remove(key);
        inFlightPermits.release();
      }
    });
  }

  /** @param capped the removal was counted against its namespace's hourly cap when admitted */
  private void send(String key, PodRecord pod, Decision decision, Instant admitted, Instant now, boolean capped) {
    if (!leaseValid.getAsBoolean()) {
      // The fence, last thing before the request: the lease may have run out while this waited (a stopped process).
      LOG.warn("not removing {}: this replica's lease is no longer valid", key);
      guard.uncount(decision, admitted);
      if (capped) {
        namespaceCap.uncount(pod.namespace(), admitted);
      }
      removedLately.invalidate(pod.uid());
      budget.giveBack(decision);
      return;
    }
    long started = System.nanoTime();
    PodRemover.Result result = requests.send(decision);
    metrics.requestDuration.labels(decision.action().wireName()).observe((System.nanoTime() - started) / 1e9);
    if (result.outcome() != PodRemover.Outcome.REMOVED
        && !(result.outcome() == PodRemover.Outcome.REFUSED && acceptedInBackground(pod, result))) {
      guard.uncount(decision, admitted);
      if (capped) {
        namespaceCap.uncount(pod.namespace(), admitted);
      }
      removedLately.invalidate(pod.uid());
    }
    switch (result.outcome()) {
      case REMOVED -> {
        backoff.invalidate(pod.uid());
        record(decision, Result.SUCCESS, result.message(), false);
      }
      case REFUSED -> {
        if (acceptedInBackground(pod, result)) {
          // Accepted: the pod leaves in its own time (e.g. a live migration). It keeps its place in the limits.
          inBackground.put(pod.uid(), new InFlight(decision, pod.controller().map(o -> o.uid()).orElse("")));
          record(decision, Result.BACKGROUND, result.message(), false);
          return;
        }
        budget.giveBack(decision);
        metrics.pdbRefusals.labels(decision.namespace()).inc();
        Duration delay = backOff(pod.uid(), now);
        record(decision, Result.PDB_REFUSED, result.message() + "; retry in " + delay.toSeconds() + "s", false);
        retryLater(key, delay);
      }
      case CONFLICT -> {
        budget.giveBack(decision);
        record(decision, Result.CONFLICT, "the pod changed or was recreated since the decision: " + result.message(), false);
      }
      case GONE -> {
        budget.giveBack(decision);
        record(decision, Result.GONE, result.message(), false);
      }
      case ERROR -> {
        budget.giveBack(decision);
        metrics.apiErrors.labels(decision.action().wireName(), String.valueOf(result.code())).inc();
        Duration delay = backOff(pod.uid(), now);
        record(decision, Result.ERROR, result.code() + " " + result.message() + "; retry in " + delay.toSeconds() + "s", false);
        retryLater(key, delay);
      }
    }
  }

  /** An eviction in background: a 429 that says the eviction started an evacuation, for a pod that asked for it. */
  private static boolean acceptedInBackground(PodRecord pod, PodRemover.Result result) {
    return pod.annotations().containsKey(PodRecord.REQUEST_EVICT_ONLY_ANNOTATION) && result.message().contains(EVACUATION_MESSAGE);
  }

  /** Koordinator-style per-workload throttles: evictions in progress and unavailable pods per owner. */
  private Optional<String> ownerThrottle(PodRecord pod, Policy active) {
    Optional<io.podsweeper.cluster.OwnerRef> owner = pod.controller();
    if (owner.isEmpty() || pod.terminated()) {
      return Optional.empty();
    }
    String uid = owner.get().uid();
    String name = owner.get().kind() + " " + owner.get().name();
    if (active.limits().maxInFlightPerOwner().isPresent()) {
      long inFlight = inBackground.asMap().values().stream().filter(f -> f.owner().equals(uid)).count();
      if (inFlight >= active.limits().maxInFlightPerOwner().getAsInt()) {
        return Optional.of(inFlight + " evictions of " + name + " already in progress (maxInFlightPerOwner)");
      }
    }
    if (active.limits().maxUnavailablePerOwner().isPresent()) {
      long unavailable = cache.pods().stream()
          .filter(p -> !p.uid().equals(pod.uid()) && !p.terminated() && p.controller().map(o -> o.uid().equals(uid)).orElse(false))
          .filter(p -> !p.available())
          .count() + (pod.available() ? 1 : 0);
      if (unavailable > active.limits().maxUnavailablePerOwner().getAsInt()) {
        return Optional.of("would leave " + unavailable + " pods of " + name + " unavailable (maxUnavailablePerOwner "
            + active.limits().maxUnavailablePerOwner().getAsInt() + ")");
      }
    }
    return Optional.empty();
  }

  private volatile long clusterRunningAt;
  private volatile int clusterRunning;

  /**
   * Running (not finished, not terminating) pods in a namespace, or in the cluster when it is null; the cluster's
   * count is taken at most once a second, a scan of every pod being too dear for every removal at 100k pods.
   */
  private int running(String namespace) {
    if (namespace == null) {
      long nowNanos = System.nanoTime();
      if (clusterRunningAt == 0 || nowNanos - clusterRunningAt > 1_000_000_000L) {
        clusterRunning = count(cache.pods());
        clusterRunningAt = nowNanos;
      }
      return clusterRunning;
    }
    return count(cache.podsInNamespace(namespace));
  }

  private int count(java.util.Collection<PodRecord> pods) {
    int n = 0;
    for (PodRecord p : pods) {
      if (!p.terminated() && !p.terminating() && removedLately.getIfPresent(p.uid()) == null) {
        n++;
      }
    }
    return n;
  }

  private Duration backOff(String uid, Instant now) {
    Backoff previous = backoff.getIfPresent(uid);
    int attempts = previous == null ? 1 : previous.attempts() + 1;
    Duration delay = FIRST_BACKOFF.multipliedBy(1L << Math.min(attempts - 1, 10));
    if (delay.compareTo(MAX_BACKOFF) > 0) {
      delay = MAX_BACKOFF;
    }
    backoff.put(uid, new Backoff(attempts, now.plus(delay)));
    return delay;
  }

  private void record(Decision d, Result result, String message, boolean dryRun) {
    metrics.removals.labels(result.label(), d.strategy(), d.namespace(), d.action().wireName()).inc();
    if (result != Result.PAUSED) {
      metrics.deschedulerEvicted.labels(deschedulerResult(result, message), d.strategy(), d.profile(), d.namespace(), d.node()).inc();
    }
    Instant time = clock.instant();
    recent.add(new RecentDecisions.Entry(time, d, result.label(), message, dryRun));
    Outcome outcome = new Outcome(time, d, result, message, dryRun, policy.source());
    for (OutcomeListener listener : listeners) {
      try {
        listener.outcome(outcome);
      } catch (RuntimeException e) {
        LOG.warn("outcome listener failed: {}", e.toString());
      }
    }
    LOG.info("{} {} pod {} uid={} rule={} result={} reason=\"{}\"{}", dryRun ? "would " + d.action().wireName() : d.action().wireName(),
        d.strategy(), d.podKey(), d.uid(), d.rule(), result.label(), d.reason(), message.isEmpty() ? "" : " detail=\"" + message + "\"");
  }

  /** The upstream counter's result values: success (dry-run included, as upstream counts it), error, or the limit text. */
  private static String deschedulerResult(Result result, String message) {
    return switch (result) {
      case SUCCESS, DRY_RUN -> "success";
      case BACKGROUND -> "background";
      case LIMITED -> message.substring(0, message.indexOf(';'));
      default -> "error";
    };
  }

  public int pendingDeadlines() {
    return deadlines.size();
  }

  /** Stops deciding, lets an in-flight request finish, and stops the timers. */
  @Override
  public void close() {
    stopping = true;
    queue.add(STOP);
    if (fullPasses != null) {
      fullPasses.cancel(false);
    }
    try {
      worker.join(Duration.ofSeconds(40).toMillis());
      senders.shutdown();
      senders.awaitTermination(40, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    timers.shutdownNow();
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
