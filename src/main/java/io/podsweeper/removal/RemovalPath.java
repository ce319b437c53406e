package io.podsweeper.removal;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.Policy;
import io.podsweeper.safety.GuardWindowStore;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.PolicyEvaluator;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.LongSupplier;

/**
 * The removal path, assembled: the policy in force, and the one way every removal goes ({@link RemovalPipeline}), with
 * the {@link Ledger} of what removals hold, the evictions in background ({@link InBackground}) and the PodMigrationJobs'
 * admission ({@link JobAdmission}). What the cluster tells (a pod changed, an EvictionRequest, a resume, a new term) is
 * routed to the part that owns it.
 */
public final class RemovalPath implements AutoCloseable {
  /** What the removal path needs from its surroundings. */
  public record Ports(PodSource cache, RemovalRequests requests, Pause pause, OutcomeSink outcomes, Metrics metrics, Clock clock,
      LongSupplier ticker, Backoff backoff, BooleanSupplier mayLead, Consumer<String> guardTrippedNotice, GuardWindowStore guardWindow,
      Consumer<String> revisit) {}

  private volatile Rules rules;
  private final Metrics metrics;
  private final Backoff backoff;
  private final Ledger ledger;
  private final GuardJournal journal;
  private final Reports reports;
  private final Checks checks;
  private final Pacing pacing;
  private final InBackground background;
  private final JobAdmission jobs;
  private final RemovalPipeline pipeline;
  private final ExecutorService senders;

  public RemovalPath(Policy policy, Ports ports) {
    this(policy, ports, Pacing.Waits.onMonitor(), senders(SENDERS_IDLE));
  }

  /** How long a sender thread with nothing to send lives on. */
  static final Duration SENDERS_IDLE = Duration.ofSeconds(60);

  /**
   * Up to {@link Pacing#MAX_IN_FLIGHT} threads that send requests, each ending once it has been idle for {@code idle}.
   * Why they end: a burst of removals starts all of them, and each Java thread holds about 90 KiB of stack resident
   * for as long as it lives (the JVM touches its stack's shadow pages); between bursts, which is most of a service's
   * life, they would hold 1.5 MiB for nothing (docs/benchmarks.md, issue 36). A new burst starts them again, at a cost
   * of microseconds each beside a request's milliseconds.
   */
  static ExecutorService senders(Duration idle) {
    ThreadPoolExecutor senders = new ThreadPoolExecutor(Pacing.MAX_IN_FLIGHT, Pacing.MAX_IN_FLIGHT, idle.toNanos(), TimeUnit.NANOSECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, "removal-requests");
          t.setDaemon(true);
          return t;
        });
    senders.allowCoreThreadTimeOut(true);
    return senders;
  }

  /** @param senders where requests are sent from (and withdrawals): in tests, the caller's own thread */
  RemovalPath(Policy policy, Ports ports, Pacing.Waits waits, ExecutorService senders) {
    this.senders = senders;
    this.rules = new Rules(policy, new PolicyEvaluator(policy), 1);
    this.metrics = ports.metrics();
    this.backoff = ports.backoff();
    this.ledger = new Ledger(ports.cache(), ports.clock(), policy);
    this.journal = new GuardJournal(ports.guardWindow(), metrics, ports.ticker());
    this.reports = new Reports(ports.outcomes());
    this.checks = new Checks(ports.cache(), ports.pause(), ledger, this::rules, ports.mayLead(), ports.clock());
    this.pacing = new Pacing(policy.limits(), ports.ticker(), waits);
    Settlement settlement = new Settlement(ledger, ports.outcomes(), reports, backoff, metrics);
    Admission admission = new Admission(checks, ledger, journal, ports.pause(), reports, this::rules, ledger::jobHolds, metrics,
        ports.guardTrippedNotice());
    this.background = new InBackground(ledger, checks, ports.cache(), ports.pause(), this::rules, ports.outcomes(), metrics, ports.clock(),
        senders, ports.revisit());
    Parts parts = new Parts(admission, checks, ledger, journal, pacing, settlement, background, ports.outcomes(), backoff);
    this.jobs = new JobAdmission(parts, this::rules, key -> pipeline().onItsWay(key));
    this.pipeline = new RemovalPipeline(parts, jobs, ports.requests(), reports, ports.pause(), metrics, ports.clock(), senders);
  }

  private RemovalPipeline pipeline() {
    return pipeline;
  }

  /** The policy in force now. */
  public Rules rules() {
    return rules;
  }

  /**
   * Puts a new policy in force. A reload never opens the limits, the guard's window or the rate again: their counts and
   * spent tokens carry over under the new settings, changed in place; only then may anyone decide under the new policy.
   * Waiting removals look again at once, and every EvictionRequest in progress is judged again.
   */
  public Rules apply(Policy policy) {
    Rules old = rules;
    if (ledger.apply(old.policy(), policy)) {
      journal.forget(); // a dry-run switch: the new guard reads the remembered window before it counts
    }
    pacing.setRate(policy.limits());
    rules = new Rules(policy, new PolicyEvaluator(policy), old.generation() + 1);
    pacing.wake();
    background.reconsiderAll();
    return rules;
  }

  /** See {@link RemovalPipeline#admit}. */
  public Answer admit(PodRecord pod, Candidate candidate) throws InterruptedException {
    return pipeline.admit(pod, candidate);
  }

  /** A full pass starts a new limits window; evictions still in progress keep their places in it. */
  public void newWindow() {
    ledger.newWindow();
  }

  public void podChanged(PodRecord pod) {
    ledger.podChanged(pod);
    background.podChanged(pod);
  }

  public void podDeleted(PodRecord pod) {
    background.podDeleted(pod);
    backoff.forget(pod.key());
    reports.forget(pod.uid());
    ledger.podDeleted(pod);
  }

  /**
   * An operator resumed: the guard's window starts over, and the leader writes that to the cluster. Only the leader: a
   * follower that sees the resume late would otherwise clear what the leader counted since.
   */
  public void resumed() {
    if (checks.mayLead()) {
      journal.startOver(ledger.guard(ledger.guardEpoch()));
    } else {
      ledger.resetGuard();
    }
    metrics.guardTripped.set(0);
  }

  /** Leadership lost: a new term takes over the window the other leader wrote meanwhile, and its EvictionRequests. */
  public void steppedDown() {
    journal.forget();
    ledger.dropRequests();
  }

  /** Something a waiting removal depends on changed (leadership, the kill switch): let it look again now. */
  public void wake() {
    pacing.wake();
  }

  /** Evictions go as EvictionRequests from now on, for the pods the policy says (the cluster serves the API). */
  public void requestEvictionsThrough(EvictionRequester requester) {
    background.requestThrough(requester);
  }

  /** A new term, or the requests listed: those that list this service are taken over (see {@link InBackground#adoptAll}). */
  public void adoptRequests() {
    background.adoptAll();
  }

  public void evictionRequestObserved(EvictionRequester.Observed observed) {
    background.observed(observed);
  }

  /** The kill switch was thrown: every EvictionRequest in progress is judged again. */
  public void reconsiderRequests() {
    background.reconsiderAll();
  }

  /** While {@code current} says a namespace's policies are behind (their informers, or a change not applied), nothing is sent there. */
  public void policiesCurrentWhile(PoliciesCurrent current) {
    checks.policiesCurrentWhile(current);
  }

  /** Where the final check of a finished-pod budget's removal asks whether it still holds (the scheduler's ledger). */
  public void budgetsCheckedBy(BudgetCheck check) {
    checks.budgetsCheckedBy(check);
  }

  /**
   * A node-aware decision is sent only while {@code wanted} says its maker still wants it (checked at admission and
   * last before the send, and for an eviction in background): a room plan's step no longer is once its plan ended.
   */
  public void balanceWantedWhile(Predicate<Decision> wanted) {
    checks.balanceWantedWhile(wanted);
  }

  /** The cache is current, and the policies are watched: the service is ready. */
  public boolean current() {
    return checks.current();
  }

  /** The cache is current, and so is the policy in force for {@code namespace}: decisions there may be made and sent. */
  public boolean currentIn(String namespace) {
    return checks.currentIn(namespace);
  }

  /** Housekeeping, every few seconds: what aged out is forgotten, evictions in background past their timeout end. */
  public void expire() {
    background.expire();
  }

  /** Where PodMigrationJobs are admitted and their evictions sent. */
  public JobAdmission jobs() {
    return jobs;
  }

  /** Stops admitting; waiting removals give up at once; requests already sent may finish. */
  @Override
  public void close() {
    checks.close();
    pacing.wake();
    senders.shutdown();
    try {
      senders.awaitTermination(40, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
