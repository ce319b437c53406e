package io.podsweeper.engine;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.removal.Answer;
import io.podsweeper.removal.Candidate;
import io.podsweeper.removal.RemovalPath;
import io.podsweeper.removal.Rules;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.Verdict;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pods due now, one worker handing each to the {@link RemovalPath} as it is then: a deadline still due under the policy
 * in force, or a decision made over the whole cluster (a node-aware strategy's, a finished-pod budget's) still for the
 * very pod version and policy it was made on. The path answers when to look again; a key stays with the worker until a
 * sender's answer comes, so no pod has two requests on their way.
 */
final class DueRemovals {
  private static final Logger LOG = LoggerFactory.getLogger(DueRemovals.class);
  /** How soon a pod due while the cache or the team policies are not current is looked at again. */
  private static final Duration STALE_RETRY = Duration.ofSeconds(1);

  /** A node-aware or budget decision waiting for the worker, and the policy generation it was made under. */
  private record Balanced(Decision decision, long generation) {}

  /** Told what became of each decision {@link #add(Decision, long) added}, once the worker is done with it. */
  @FunctionalInterface
  interface Settled {
    /** @param removed the request was carried out (in a dry run: the server would accept it) */
    void settled(Decision decision, long generation, boolean removed);
  }

  private final PodSource cache;
  private final RemovalPath path;
  private final Clock clock;
  private final Metrics metrics;
  private final WorkQueue queue;
  private final Consumer<String> evaluate;
  private final Settled settled;
  /** Decisions of the last balance pass and of the budget, by pod key, until the worker takes them; a reload drops them. */
  private final Map<String, Balanced> balanced = new ConcurrentHashMap<>();
  private final Thread worker = Sweeper.daemon(this::work, "sweeper-removals");
  private volatile boolean stopping;

  /**
   * @param evaluate asks for a pod no longer due to be evaluated again (its own deadlines take it from there)
   * @param settled told what became of each decision added
   */
  DueRemovals(PodSource cache, RemovalPath path, Clock clock, Metrics metrics, WorkQueue queue, Consumer<String> evaluate, Settled settled) {
    this.cache = cache;
    this.path = path;
    this.clock = clock;
    this.metrics = metrics;
    this.queue = queue;
    this.evaluate = evaluate;
    this.settled = settled;
  }

  void start() {
    worker.start();
  }

  /** A deadline passed for the pod under {@code key}. */
  void add(String key) {
    queue.add(key);
    metrics.queuedRemovals.set(queue.ready());
  }

  /** A balance pass or the budget decided: held for the very pod version and the policy generation it was made on. */
  void add(Decision decision, long generation) {
    balanced.put(decision.podKey(), new Balanced(decision, generation));
    add(decision.podKey());
  }

  /** A new policy: decisions over the cluster hold only under the policy that made them; they are made again. */
  void dropBalanced() {
    balanced.clear();
  }

  void cancel(String key) {
    queue.cancel(key);
  }

  private void work() {
    try {
      for (String key = queue.take(); key != null && !stopping; key = queue.take()) {
        metrics.queuedRemovals.set(queue.ready());
        Answer answer;
        // Never decide on a cache or policy that may be stale (watch broken, relisting): wait for them to catch up.
        boolean current = path.currentIn(key.substring(0, key.indexOf('/')));
        Balanced taken = current ? balanced.remove(key) : null;
        try {
          answer = current ? process(key, Optional.ofNullable(taken)) : Answer.retryAfter(STALE_RETRY);
        } catch (RuntimeException e) {
          // Judging the pod threw: the evaluation stage counts it, logs it once and backs off; nothing else waits.
          LOG.debug("judging {} for its removal failed: {}", key, e.toString());
          evaluate.accept(key);
          answer = Answer.DONE;
        }
        settle(key, answer, taken);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * What the removal path answered for {@code key}: the key stays with its worker until a sender's answer comes; a
   * decision added for it ({@code taken}, or null) is settled then, taken once whatever the answer.
   */
  private void settle(String key, Answer answer, Balanced taken) {
    if (answer.kind() == Answer.Kind.SENDING) {
      answer.sent().whenComplete((sent, e) -> settle(key, sent == null ? Answer.DONE : sent, taken));
      return;
    }
    queue.done(key);
    if (answer.kind() == Answer.Kind.RETRY && !stopping) {
      queue.addAfter(key, answer.after());
    }
    if (taken != null) {
      settled.settled(taken.decision(), taken.generation(), answer.kind() == Answer.Kind.REMOVED);
    }
  }

  /** Turns a queued pod into a candidate for the removal path, if it is still due (or still the pod a pass or the budget chose). */
  private Answer process(String key, Optional<Balanced> taken) throws InterruptedException {
    Optional<PodRecord> current = cache.pod(key);
    Instant now = clock.instant();
    Rules in = path.rules();
    Optional<Verdict> verdict = current.flatMap(p -> in.evaluator().evaluate(p, cache)).filter(v -> v.isDue(now));
    Optional<Balanced> decided = taken
        .filter(q -> current.isPresent() && q.generation() == in.generation() && q.decision().uid().equals(current.get().uid())
            && q.decision().resourceVersion().equals(current.get().resourceVersion()));
    if (verdict.isEmpty() && decided.isEmpty()) {
      // Gone, changed, or no longer due: its own events and deadlines take it from here.
      current.ifPresent(p -> evaluate.accept(p.key()));
      return Answer.DONE;
    }
    PodRecord pod = current.get();
    Candidate candidate = verdict.isPresent()
        ? new Candidate(verdict.get().decide(pod, now), false, in.generation(), in.policy().dryRun(), verdict.get().dueAt())
        : new Candidate(decided.get().decision(), true, decided.get().generation(), in.policy().dryRun(), decided.get().decision().dueAt());
    return path.admit(pod, candidate);
  }

  void close() throws InterruptedException {
    stopping = true;
    queue.shutDown();
    worker.join(Duration.ofSeconds(5).toMillis());
  }
}
