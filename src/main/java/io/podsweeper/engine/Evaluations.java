package io.podsweeper.engine;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.CleanupPolicies;
import io.podsweeper.policy.Profile;
import io.podsweeper.removal.Rules;
import io.podsweeper.strategy.Verdict;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pods to evaluate, on a thread of their own (never an informer's): when they change, and again when their deadline
 * passes (a delayed add per pending deadline, cancelled when the pod goes or is no longer due). A pod due now is handed
 * on; a warning is raised for a lifetime written on it that does not parse, and (with {@code warnBefore}) an Event says
 * ahead of time when a pod will go.
 */
final class Evaluations {
  private static final Logger LOG = LoggerFactory.getLogger(Evaluations.class);
  private static final Duration LONGEST_WAIT = Duration.ofDays(1);

  private final PodSource cache;
  private final Supplier<Rules> rules;
  private final Clock clock;
  private final Metrics metrics;
  private final WorkQueue queue;
  private final LifetimeWarnings lifetimeWarnings;
  private final RemovalWarnings removalWarnings;
  private final Consumer<String> due;
  private final TenantBudget teams;
  private volatile BiConsumer<String, String> throttledTeams = (namespace, why) -> {};
  private final LongSupplier cpuTime;
  /** The pod state (uid, resourceVersion, what threw) each failed pod was last logged for, by key: logged once per state. */
  private final Cache<String, String> logged = Caffeine.newBuilder().maximumSize(10_000).expireAfterWrite(Duration.ofHours(1)).build();
  private final Thread worker = Sweeper.daemon(this::work, "sweeper-evaluations");

  /**
   * @param due told the key of each pod due now
   * @param ticker nanoseconds, for the teams' budget intervals
   * @param cpuTime this thread's CPU time in nanoseconds, what the teams' rules are charged
   * @param leading whether this replica leads: only the leader warns before a removal
   */
  Evaluations(PodSource cache, Supplier<Rules> rules, Clock clock, Metrics metrics, WorkQueue queue, Consumer<String> due,
      LongSupplier ticker, LongSupplier cpuTime, BooleanSupplier leading) {
    this.cache = cache;
    this.rules = rules;
    this.clock = clock;
    this.metrics = metrics;
    this.queue = queue;
    this.lifetimeWarnings = new LifetimeWarnings(metrics);
    this.removalWarnings = new RemovalWarnings(metrics, leading);
    this.due = due;
    this.teams = new TenantBudget(ticker);
    this.cpuTime = cpuTime;
  }

  void start() {
    worker.start();
  }

  /** Evaluates the pod under {@code key} soon (again). */
  void add(String key) {
    queue.add(key);
  }

  /** Every cached pod, soon. */
  void addAll() {
    cache.pods().forEach(p -> queue.add(p.key()));
  }

  /** The pod went: no deadline of its own any more. */
  void forget(PodRecord pod) {
    lifetimeWarnings.forget(pod);
    removalWarnings.forget(pod);
    queue.cancel(pod.key());
  }

  /** Told (namespace, why) each time a namespace's team rules are put off for its share (their status says so). */
  void reportThrottledTeams(BiConsumer<String, String> sink) {
    throttledTeams = sink;
  }

  void warnAboutLifetimes(LifetimeWarnings.Sink sink) {
    lifetimeWarnings.sendTo(sink);
  }

  void warnBeforeRemovals(RemovalWarnings.Sink sink) {
    removalWarnings.sendTo(sink);
  }

  /** Pods whose deadline is ahead, each evaluated again then. */
  int pendingDeadlines() {
    return queue.delayed();
  }

  private void work() {
    try {
      for (String key = queue.take(); key != null; key = queue.take()) {
        Optional<PodRecord> pod = Optional.empty();
        try {
          pod = cache.pod(key);
          pod.ifPresent(this::evaluate);
          if (logged.asMap().remove(key) != null) {
            queue.forget(key);
          }
        } catch (RuntimeException e) {
          failed(key, pod, e);
        } finally {
          queue.done(key);
          metrics.pendingDeadlines.set(queue.delayed());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * One pod's judging threw: that pod alone fails, counted, logged once per pod state with the pod named, and judged
   * again with backoff (5 s doubling to 5 min); every other pod goes on.
   */
  private void failed(String key, Optional<PodRecord> pod, RuntimeException e) {
    metrics.evaluationErrors.labels(pod.map(PodRecord::namespace).orElse(""), "evaluate").inc();
    String state = pod.map(p -> p.uid() + "/" + p.resourceVersion()).orElse("") + "/" + e;
    Duration retry = queue.addRateLimited(key);
    if (!state.equals(logged.asMap().put(key, state))) {
      LOG.error("judging pod {} failed, it is left alone and judged again in {}: {}", key, retry, e.toString(), e);
    }
  }

  /**
   * Due now: handed on; due later: looked at again then ("strictly older than": one millisecond after the deadline). The
   * cluster's rules always judge; a team's PodCleanupPolicies judge within their namespace's share of the evaluation
   * thread, else once the next interval begins.
   */
  private void evaluate(PodRecord pod) {
    Rules in = rules.get();
    Optional<Verdict> verdict = in.evaluator().evaluate(pod, cache, p -> CleanupPolicies.teamNamespace(p).isEmpty());
    Predicate<Profile> team = p -> CleanupPolicies.teamNamespace(p).filter(pod.namespace()::equals).isPresent();
    boolean deferred = false;
    if (in.policy().profiles().stream().anyMatch(team)) {
      Optional<Duration> wait = teams.waitFor(pod.namespace());
      deferred = wait.isPresent();
      if (deferred) {
        metrics.teamRulesThrottled.labels(pod.namespace()).inc();
        throttledTeams.accept(pod.namespace(), teams.why(pod.namespace()));
        queue.addAfter(pod.key(), wait.get());
      } else {
        long started = cpuTime.getAsLong();
        Optional<Verdict> byTeam = in.evaluator().evaluate(pod, cache, team);
        long took = cpuTime.getAsLong() - started;
        teams.spend(pod.namespace(), took);
        metrics.teamRulesSeconds.labels(pod.namespace()).inc(took / 1e9);
        verdict = Stream.of(verdict, byTeam).flatMap(Optional::stream).min(Comparator.comparing(Verdict::dueAt));
      }
    }
    lifetimeWarnings.check(pod, in.evaluator().invalidLifetimes(pod, cache));
    Instant now = clock.instant();
    Duration lead = in.policy().warnBefore();
    if (!deferred) {
      // Deferred, the team's rules were not asked: their verdict is not known to be gone.
      removalWarnings.check(pod, verdict, lead, in.policy().dryRun(), now);
    }
    if (verdict.isEmpty() || verdict.get().isDue(now)) {
      if (!deferred) {
        queue.cancel(pod.key());
      }
      verdict.ifPresent(v -> due.accept(pod.key()));
    } else {
      // Looked at again when the warning is due, then at the deadline; at most a day from now: a far deadline needs no
      // timer of its own until it is near.
      Instant next = RemovalWarnings.warnAt(verdict.get(), lead, now).orElse(verdict.get().dueAt());
      Duration until = Duration.between(now, next).plusMillis(1);
      queue.addAfter(pod.key(), until.compareTo(LONGEST_WAIT) > 0 ? LONGEST_WAIT : until);
    }
  }

  void close() throws InterruptedException {
    queue.shutDown();
    worker.join(Duration.ofSeconds(5).toMillis());
  }
}
