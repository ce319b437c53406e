package io.podsweeper.removal;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.EvictionRequestMode;
import io.podsweeper.policy.Policy;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How evictions in background end: with their pod (gone or finished), with their EvictionRequest's conditions,
 * withdrawn by this service when the pod no longer qualifies, or past their timeout. And the EvictionRequests
 * (KEP-4563) themselves: made when the cluster serves the API and the policy or the pod asks for them, taken over by a
 * new term, judged again when the pod, the policy or the kill switch changes.
 */
final class InBackground {
  private static final Logger LOG = LoggerFactory.getLogger(InBackground.class);
  static final String EVACUATION_MESSAGE = "Eviction triggered evacuation";

  private final Ledger ledger;
  private final Checks checks;
  private final PodSource cache;
  private final Pause pause;
  private final Supplier<Rules> rules;
  private final OutcomeSink outcomes;
  private final Metrics metrics;
  private final Clock clock;
  private final ExecutorService senders;
  private final Consumer<String> revisit;
  /** Where evictions go as EvictionRequests when the cluster serves the API; empty: the eviction endpoint. */
  private volatile Optional<EvictionRequester> requester = Optional.empty();
  /** What the active interceptor of an EvictionRequest in progress last reported, by pod UID (logged once per change). */
  private final Map<String, String> progress = new ConcurrentHashMap<>();

  /** @param revisit asks the scheduler to look at a pod (by key) again now: one its owner's eviction held back */
  InBackground(Ledger ledger, Checks checks, PodSource cache, Pause pause, Supplier<Rules> rules, OutcomeSink outcomes, Metrics metrics,
      Clock clock, ExecutorService senders, Consumer<String> revisit) {
    this.ledger = ledger;
    this.checks = checks;
    this.cache = cache;
    this.pause = pause;
    this.rules = rules;
    this.outcomes = outcomes;
    this.metrics = metrics;
    this.clock = clock;
    this.senders = senders;
    this.revisit = revisit;
  }

  void requestThrough(EvictionRequester evictionRequests) {
    requester = Optional.of(evictionRequests);
  }

  /** An eviction goes as an EvictionRequest for a pod that asks to be evicted in background, or for all by policy. */
  Optional<EvictionRequester> requesterFor(PodRecord pod, Decision d) {
    return requester.filter(r -> d.action() == Action.EVICT && (rules.get().policy().evictionRequests() == EvictionRequestMode.All
        || pod.annotations().containsKey(PodRecord.REQUEST_EVICT_ONLY_ANNOTATION)));
  }

  /** A 429 that says the eviction started an evacuation, for a pod that asked for it: accepted, to happen in background. */
  static boolean acceptedAsEvacuation(PodRecord pod, RequestResult result) {
    return pod.annotations().containsKey(PodRecord.REQUEST_EVICT_ONLY_ANNOTATION) && result.message().contains(EVACUATION_MESSAGE);
  }

  /** An eviction in background ends when its pod finishes; an EvictionRequest for a pod still running is judged again. */
  void podChanged(PodRecord pod) {
    ledger.inProgress(pod.uid()).ifPresent(entry -> {
      if (pod.terminated()) {
        end(entry, "Succeeded".equals(pod.phase()) ? Result.SUCCESS : Result.ERROR, "pod " + pod.phase());
      } else if (entry.requested() && !pod.terminating()) {
        reconsider(entry, pod);
      }
    });
  }

  void podDeleted(PodRecord pod) {
    ledger.inProgress(pod.uid()).ifPresent(entry -> end(entry, Result.SUCCESS, "pod gone"));
  }

  /**
   * It ended with its pod: it stays counted in the window it was made in (it happened, or failed as a removal would);
   * made without the pod's preconditions (a job, an EvictionRequest), it stood for nothing until now.
   */
  void end(InProgress entry, Result result, String how) {
    if (!ledger.settle(entry)) {
      return;
    }
    ledger.ended(entry);
    String last = progress.remove(entry.decision.uid());
    outcomes.record(entry.decision, result, entry.what() + " ended: " + how + (last == null ? "" : " (last progress: " + last + ")"), false);
    freed(entry);
  }

  /** Settled already, it will not evict the pod: its reservation is given back. */
  private void didNotHappen(InProgress entry, Result result, String how) {
    ledger.undone(entry);
    progress.remove(entry.decision.uid());
    outcomes.record(entry.decision, result, entry.what() + " " + how, false);
    freed(entry);
  }

  /** Its owner has one eviction less in progress: its pods held by maxInFlightPerOwner need not wait for the next pass. */
  void freed(InProgress entry) {
    if (!entry.owner.isEmpty()) {
      cache.podsInNamespace(entry.decision.namespace()).stream()
          .filter(p -> !p.uid().equals(entry.decision.uid()) && p.controller().map(o -> o.uid().equals(entry.owner)).orElse(false))
          .forEach(p -> revisit.accept(p.key()));
    }
  }

  /** Housekeeping: an EvictionRequest past its timeout is withdrawn; another eviction in background ends as failed. */
  void expire() {
    for (InProgress entry : ledger.expire()) {
      String why = entry.what() + " did not finish within " + Ledger.BACKGROUND_TIMEOUT.toMinutes() + "m";
      if (entry.requested()) {
        withdraw(entry, Result.ERROR, why);
      } else {
        ledger.timedOut(entry);
        outcomes.record(entry.decision, Result.ERROR, why, false);
      }
    }
  }

  /**
   * A new term, or the requests listed for the first time since this process started: every EvictionRequest that lists
   * this service and has not ended is taken over as if this term had made it. It counts against the limits until it
   * ends; one whose pod is gone or finished, or that no longer qualifies under the rules that made it (written on the
   * request), or while evictions are paused, is withdrawn at once. The guard's window, remembered across restarts and
   * failovers, counted it when it was made.
   */
  void adoptAll() {
    Optional<EvictionRequester> listing = requester;
    if (listing.isEmpty() || !checks.mayLead()) {
      return;
    }
    for (EvictionRequester.Observed observed : listing.get().listed()) {
      String key = observed.namespace() + "/" + observed.pod();
      if (!observed.requesters().contains(EvictionRequester.REQUESTER) || observed.evicted().isPresent()
          || observed.canceled().isPresent() || ledger.sendingTo(key)) {
        continue;
      }
      Optional<PodRecord> pod = cache.pod(key).filter(p -> p.uid().equals(observed.uid()));
      EvictionRequester.Origin origin = observed.origin();
      String reason = "EvictionRequest " + observed.uid() + " taken over from an earlier leader or process";
      Decision decision = pod.map(p -> Decision.of(p, origin.strategy(), origin.profile(), origin.rule(), reason, clock.instant()))
          .orElse(new Decision(observed.namespace(), observed.pod(), observed.uid(), "", "", origin.strategy(), origin.profile(),
              origin.rule(), Action.EVICT, reason, clock.instant(), ""));
      Optional<InProgress> adopted = ledger.adopt(decision, pod.map(RemovalPipeline::owner).orElse(""), origin.balance());
      if (adopted.isEmpty()) {
        continue;
      }
      LOG.info("{} for {} taken over (requester {}): in progress", adopted.get().what(), key, EvictionRequester.REQUESTER);
      if (pod.isEmpty() || pod.get().terminated()) {
        if (ledger.settle(adopted.get())) {
          withdraw(adopted.get(), Result.CANCELED, pod.isEmpty() ? "the pod is gone" : "the pod has finished");
        }
      } else if (!pod.get().terminating() && (pause.holds(Action.EVICT) || judgedBy(rules.get().policy(), origin))) {
        reconsider(adopted.get(), pod.get());
      }
    }
  }

  /**
   * Whether the policy in force can judge a request taken over: it has the profile that made it. One it does not have
   * may not be read yet (a team's PodCleanupPolicy comes a moment after the requests): that request stays in progress,
   * judged at the next policy change, or withdrawn when it has not ended within its timeout.
   */
  private static boolean judgedBy(Policy policy, EvictionRequester.Origin origin) {
    return origin.profile().isEmpty() ? !policy.profiles().isEmpty()
        : policy.profiles().stream().anyMatch(p -> p.name().equals(origin.profile()));
  }

  /** An EvictionRequest changed: it ends when Evicted or Canceled, or when this service is no longer among its requesters. */
  void observed(EvictionRequester.Observed observed) {
    Optional<InProgress> found = ledger.inProgress(observed.uid()).filter(InProgress::requested);
    if (found.isEmpty()) {
      return;
    }
    InProgress entry = found.get();
    if (observed.evicted().isPresent()) {
      end(entry, Result.SUCCESS, "Evicted: " + observed.evicted().get());
    } else if (observed.canceled().isPresent() || !observed.requesters().contains(EvictionRequester.REQUESTER)) {
      if (ledger.settle(entry)) {
        didNotHappen(entry, Result.CANCELED, "canceled by others: " + observed.canceled().orElse("this service was taken out of spec.requesters"));
      }
    } else if (!observed.progress().isEmpty() && !observed.progress().equals(progress.put(observed.uid(), observed.progress()))) {
      LOG.info("{} for {}: {}", entry.what(), entry.decision.podKey(), observed.progress());
    }
  }

  /** The kill switch was thrown, or the policy changed: every EvictionRequest in progress is judged again. */
  void reconsiderAll() {
    for (InProgress entry : ledger.requested()) {
      cache.pod(entry.decision.podKey())
          .filter(p -> p.uid().equals(entry.decision.uid()) && !p.terminating() && !p.terminated())
          .ifPresent(pod -> reconsider(entry, pod));
    }
  }

  /** Withdraws an EvictionRequest in progress when its pod no longer qualifies: paused, protected, no rule wants it. */
  private void reconsider(InProgress entry, PodRecord pod) {
    Optional<String> why = pause.holds(Action.EVICT) ? Optional.of(pause.why())
        : checks.unwanted(pod, entry.decision, entry.balance, rules.get());
    if (why.isPresent() && ledger.settle(entry)) {
      withdraw(entry, Result.CANCELED, why.get());
    }
  }

  /**
   * Takes this service out of the pod's EvictionRequest, already settled, off the caller's thread; the reservation is
   * given back. If the API server cannot be reached it is in progress again, and the next change of the pod or policy
   * tries again. Only the leader writes: every replica is the same requester.
   */
  private void withdraw(InProgress entry, Result result, String why) {
    Optional<EvictionRequester> withdrawing = requester;
    if (!checks.mayLead() || withdrawing.isEmpty()) {
      return;
    }
    try {
      senders.execute(() -> {
        RequestResult answer = withdrawing.get().withdraw(entry.decision);
        if (answer.outcome() == RequestResult.Outcome.REMOVED || answer.outcome() == RequestResult.Outcome.GONE) {
          didNotHappen(entry, result, "withdrawn: " + why);
        } else {
          ledger.restore(entry);
          metrics.apiErrors.labels(entry.decision.action().wireName(), String.valueOf(answer.code())).inc();
          LOG.warn("cannot withdraw {} for {} ({}): {} {}; tried again at the next change", entry.what(), entry.decision.podKey(), why,
              answer.code(), answer.message());
        }
      });
    } catch (RejectedExecutionException e) {
      LOG.debug("shutting down: {} for {} not withdrawn", entry.what(), entry.decision.podKey());
    }
  }
}
