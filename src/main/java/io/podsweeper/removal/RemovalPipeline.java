package io.podsweeper.removal;

import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.strategy.Decision;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one path of a pod's removal: checks → reserve → its turn → a request slot → (on a sender) write-ahead → its
 * request's turn → final check → send → settle.
 * The waits are where the world moves: they give up as soon as their removal can no longer go, and the final check,
 * immediately before the request with nothing waiting in between, reads everything again from what is current.
 */
final class RemovalPipeline {
  private static final Logger LOG = LoggerFactory.getLogger(RemovalPipeline.class);

  private final Parts parts;
  private final JobAdmission jobs;
  private final RemovalRequests requests;
  private final Reports reports;
  private final Pause pause;
  private final Metrics metrics;
  private final Clock clock;
  private final ExecutorService senders;
  /** The answer each request on its way will give, by pod key. */
  private final Map<String, CompletableFuture<Answer>> onTheirWay = new ConcurrentHashMap<>();

  RemovalPipeline(Parts parts, JobAdmission jobs, RemovalRequests requests, Reports reports, Pause pause, Metrics metrics, Clock clock,
      ExecutorService senders) {
    this.parts = parts;
    this.jobs = jobs;
    this.requests = requests;
    this.reports = reports;
    this.pause = pause;
    this.metrics = metrics;
    this.clock = clock;
    this.senders = senders;
  }

  /**
   * Admits a candidate, on the scheduler's worker: answers once its request is handed to a sender (whose answer comes
   * later), or once it is held, refused by the limits, or no longer wanted (with the reservation given back).
   */
  Answer admit(PodRecord pod, Candidate c) throws InterruptedException {
    Decision d = c.decision();
    Optional<Instant> backedOff = parts.backoff().until(d.podKey());
    if (backedOff.isPresent()) {
      return Answer.retryAfter(Duration.between(clock.instant(), backedOff.get()));
    }
    Admission.Admitted admitted = parts.admission().admit(pod, c);
    if (admitted.reservation() == null) {
      return admitted.otherwise();
    }
    Reservation r = admitted.reservation();
    BooleanSupplier stillGoes = () -> parts.checks().mayStillGo(c);
    if (!parts.pacing().awaitTurn(stillGoes) || !parts.pacing().awaitSlot(stillGoes)) {
      parts.ledger().rollBack(r);
      return Answer.retryAfter(Duration.ZERO);
    }
    CompletableFuture<Answer> answered = new CompletableFuture<>();
    onTheirWay.put(d.podKey(), answered);
    parts.ledger().sending(d.podKey(), owner(pod));
    try {
      senders.execute(() -> answered.complete(sendOnce(pod, c, r)));
    } catch (RejectedExecutionException e) { // shutting down: nothing was sent
      parts.ledger().rollBack(r);
      done(d.podKey());
      answered.complete(Answer.DONE);
    }
    return Answer.sending(answered);
  }

  /** The answer of the request on its way for {@code key}, if one is. */
  Optional<CompletableFuture<Answer>> onItsWay(String key) {
    return Optional.ofNullable(onTheirWay.get(key));
  }

  private Answer sendOnce(PodRecord pod, Candidate c, Reservation r) {
    try {
      return send(pod, c, r);
    } catch (InterruptedException e) {
      parts.ledger().rollBack(r); // shutting down: nothing was sent
      Thread.currentThread().interrupt();
      return Answer.DONE;
    } catch (RuntimeException e) {
      parts.ledger().rollBack(r);
      LOG.error("removal of {} failed unexpectedly; it is retried at the next pass", c.decision().podKey(), e);
      return Answer.DONE;
    } finally {
      done(c.decision().podKey());
    }
  }

  private void done(String key) {
    parts.ledger().sent(key);
    parts.pacing().releaseSlot();
    onTheirWay.remove(key);
  }

  /**
   * On the sender's thread: the guard's write-ahead, the request's turn (Pacing: right before the request it paces, so a
   * slow write does not let requests held up together go out back to back), the final check, then at once the request,
   * then settle.
   */
  private Answer send(PodRecord pod, Candidate c, Reservation r) throws InterruptedException {
    Decision d = c.decision();
    if (!c.dryRun() && parts.ledger().remembered(r) && !parts.journal().persist(parts.ledger().guard(r.guardEpoch()))) {
      parts.ledger().rollBack(r);
      return Answer.retryAfter(Admission.STALE_RETRY);
    }
    if (!parts.pacing().awaitSend(() -> parts.checks().mayStillGo(c))) {
      parts.ledger().rollBack(r);
      return Answer.retryAfter(Duration.ZERO);
    }
    Optional<String> stop = parts.checks().finalCheck(c);
    if (stop.isPresent()) {
      parts.ledger().rollBack(r);
      LOG.debug("not sending the removal of {}: {}", d.podKey(), stop.get());
      if (pause.holds(d.action())) {
        reports.once(d, Result.PAUSED, pause.why(), false);
        return Answer.DONE;
      }
      return parts.checks().closing() ? Answer.DONE : Answer.retryAfter(parts.checks().currentIn(d.namespace()) && pause.watched() ? Duration.ZERO : Admission.STALE_RETRY);
    }
    if (c.dueSince() != null) {
      metrics.decisionToRequest.observe(Math.max(0, Duration.between(c.dueSince(), clock.instant()).toNanos() / 1e9));
    }
    long started = parts.pacing().now();
    Optional<EvictionRequester> requester = parts.background().requesterFor(pod, d);
    RequestResult result = requester.isPresent() ? requester.get().request(d, c.balance(), c.dryRun()) : requests.send(d, c.dryRun());
    metrics.requestDuration.labels(d.action().wireName()).observe((parts.pacing().now() - started) / 1e9);
    if (c.dryRun()) {
      return parts.settlement().dryRun(d, r, result);
    }
    if (requester.isPresent() && result.outcome() == RequestResult.Outcome.REMOVED) {
      // Requested: the pod leaves in its own time (interceptors, then the eviction-request controller); it keeps its place
      // in the limits until then, or until this service withdraws. One taken over meanwhile is replaced: counted once.
      parts.backoff().forget(d.podKey());
      parts.ledger().toBackground(r, owner(pod), c.balance(), InProgress.Kind.REQUEST);
      parts.outcomes().record(d, Result.BACKGROUND, "EvictionRequest " + d.uid() + " made, requester " + EvictionRequester.REQUESTER
          + ": the pod leaves in its own time", false);
      return Answer.DONE;
    }
    if (result.outcome() == RequestResult.Outcome.STARTED) {
      jobs.started(pod, c, r, result.message());
      return Answer.DONE;
    }
    if (result.outcome() == RequestResult.Outcome.REFUSED && InBackground.acceptedAsEvacuation(pod, result)) {
      // Accepted: the pod leaves in its own time (e.g. a live migration). It keeps its place in the limits.
      parts.ledger().toBackground(r, owner(pod), false, InProgress.Kind.EVACUATION);
      parts.outcomes().record(d, Result.BACKGROUND, result.message(), false);
      return Answer.DONE;
    }
    return parts.settlement().settle(d, result, parts.settlement().of(r));
  }

  static String owner(PodRecord pod) {
    return pod.controller().map(OwnerRef::uid).orElse("");
  }
}
