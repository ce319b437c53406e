package io.podsweeper.removal;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Koordinator's PodMigrationJobs on the removal path: a job holds its place in the limits as an eviction in background
 * from its admission (the worker's, when it made the job; else the job controller's, for a hand-made job or one another
 * process made) until it ends or sends its eviction; its eviction meets the same final check, rate and settlement as
 * any removal, on the pod as it is then.
 */
public final class JobAdmission {
  /** The profile a hand-made job is judged as: no rule chose its pod, so the evictor's protections alone judge it. */
  public static final String HAND_MADE = "PodMigrationJob";
  /** Why a job waits while the policy in force is a dry-run: a job's eviction has no dry-run of its own. */
  public static final String JOBS_IN_DRY_RUN = "dry-run: PodMigrationJobs are neither started nor evicted";
  /** How long an admission waits for the answer to its job's create, on its way: the request's timeout and a margin. */
  private static final Duration CREATE_ANSWER = Duration.ofSeconds(35);

  /** How a job's eviction went: sent (the pod goes), held (look again later), refused (the job fails), or the pod is gone. */
  public enum JobSend { SENT, HELD, REFUSED, GONE }

  public record JobSendResult(JobSend outcome, String message) {}

  private final Parts parts;
  private final Supplier<Rules> rules;
  private final Function<String, Optional<CompletableFuture<Answer>>> onItsWay;
  /**
   * Pods whose job was admitted from the cluster rather than made here (by UID): whatever profile the job names, it also
   * meets the protections of a hand-made job, since anyone who may create a job can write its annotations.
   */
  private final Set<String> adopted = ConcurrentHashMap.newKeySet();

  /** @param onItsWay the answer of a request on its way for a pod (by key): a job's create */
  JobAdmission(Parts parts, Supplier<Rules> rules, Function<String, Optional<CompletableFuture<Answer>>> onItsWay) {
    this.parts = parts;
    this.rules = rules;
    this.onItsWay = onItsWay;
  }

  /** The worker's eviction made a job: its reservation is held for it. */
  void started(PodRecord pod, Candidate c, Reservation r, String message) {
    parts.ledger().holdForJob(pod.uid());
    adopted.remove(pod.uid());
    parts.ledger().toBackground(r, RemovalPipeline.owner(pod), c.balance(), InProgress.Kind.JOB);
    parts.outcomes().record(c.decision(), Result.BACKGROUND, message, false);
  }

  /**
   * Takes a job's place in the limits (a hand-made job, or one whose admission this replica did not see): why it must
   * wait, or empty once admitted. Refused by the same hold-backs and limits as any removal, reported the same way.
   */
  public Optional<String> admit(PodRecord pod, Decision decision) {
    if (createdHere(pod)) {
      return Optional.empty();
    }
    if (!parts.checks().mayLead()) {
      return Optional.of("this replica does not lead");
    }
    if (rules.get().policy().dryRun()) {
      return Optional.of(JOBS_IN_DRY_RUN);
    }
    // A job this service made for a rule's deadline is judged by that rule; any other by the profile's evictor.
    boolean balance = !rules.get().evaluator().decidesPerPod(decision.profile(), decision.strategy());
    Admission.Admitted admitted = parts.admission().admit(pod, new Candidate(decision, balance, rules.get().generation(), false, null));
    if (admitted.reservation() == null) {
      return Optional.of(admitted.why());
    }
    Reservation r = admitted.reservation();
    if (parts.ledger().remembered(r) && !parts.journal().persist(parts.ledger().guard(r.guardEpoch()))) {
      parts.ledger().rollBack(r);
      return Optional.of("cannot write the guard's window");
    }
    parts.ledger().holdForJob(pod.uid());
    adopted.add(pod.uid());
    parts.ledger().toBackground(r, RemovalPipeline.owner(pod), balance, InProgress.Kind.JOB);
    return Optional.empty();
  }

  /**
   * Whether {@code pod} has a job admitted here. If its job is being created right now, waits for the create's answer
   * first: the job's watch event can arrive before it, and admitting that job anew would count the pod twice.
   */
  private boolean createdHere(PodRecord pod) {
    Optional<CompletableFuture<Answer>> creating = onItsWay.apply(pod.key());
    if (creating.isPresent()) {
      try {
        creating.get().get(CREATE_ANSWER.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        // answered or not, what is held now decides
      }
    }
    return parts.ledger().jobHolds(pod.uid());
  }

  /**
   * A job's eviction: the final check on what is current (lease, kill switch, cache, the pod the job names, and the
   * policy: a job made here must still be wanted by its rule or strategy, any other must pass {@code protection}), the
   * rate, then at once the request with the pod's current UID and resourceVersion as preconditions.
   *
   * @param protection why the pod must not go, for a job not made here (the evictor's protections)
   * @param send the request by the job's eviction policy (Eviction, Delete, soft eviction)
   */
  public JobSendResult evict(PodRecord pod, Optional<String> protection, Function<Decision, RequestResult> send) {
    Optional<InProgress> held = parts.ledger().inProgress(pod.uid());
    if (held.isEmpty() || !parts.ledger().jobHolds(pod.uid())) {
      return new JobSendResult(JobSend.HELD, "not admitted");
    }
    InProgress entry = held.get();
    Optional<String> hold = heldNow(pod.namespace()).or(() -> parts.backoff().until(pod.key()).map(at -> "retried after " + at))
        // Judged at admission, and again now: siblings may have gone unavailable, or been admitted by the worker meanwhile.
        .or(() -> parts.checks().ownerThrottle(pod, rules.get().policy().limits()));
    if (hold.isPresent()) {
      return new JobSendResult(JobSend.HELD, hold.get());
    }
    Decision old = entry.decision;
    Optional<String> refusal = old.profile().equals(HAND_MADE) ? protection
        : parts.checks().unwanted(pod, old, entry.balance, rules.get()).or(() -> adopted.contains(pod.uid()) ? protection : Optional.empty());
    if (refusal.isPresent()) {
      return new JobSendResult(JobSend.REFUSED, refusal.get());
    }
    if (!parts.pacing().trySend()) {
      return new JobSendResult(JobSend.HELD, "waiting for the removal rate");
    }
    Optional<String> last = heldNow(pod.namespace()); // again, last: the judging above takes a while on a large cluster
    if (last.isPresent()) {
      return new JobSendResult(JobSend.HELD, last.get());
    }
    Decision now = new Decision(pod.namespace(), pod.name(), pod.uid(), pod.resourceVersion(), pod.nodeName(), old.strategy(),
        old.profile(), old.rule(), Action.EVICT, old.reason(), old.dueAt(), old.owner());
    RequestResult result = send.apply(now);
    if (result.outcome() == RequestResult.Outcome.GONE) {
      return new JobSendResult(JobSend.GONE, result.message());
    }
    parts.settlement().settle(now, result, new Settlement.Hold() {
      @Override
      public boolean happened() {
        boolean settled = parts.ledger().evicted(entry, now);
        if (settled) {
          parts.background().freed(entry);
        }
        return settled;
      }

      @Override
      public void didNotHappen() {
        // the job goes on holding its place, and tries again
      }

      @Override
      public void noAnswer() {
        parts.ledger().unanswered(entry, now);
      }
    });
    return result.outcome() == RequestResult.Outcome.REMOVED ? new JobSendResult(JobSend.SENT, result.message())
        : new JobSendResult(JobSend.HELD, result.code() + " " + result.message());
  }

  /** What holds a job's eviction in {@code namespace} now; a job admitted while the policy was live also waits out a dry-run. */
  private Optional<String> heldNow(String namespace) {
    return parts.checks().heldNow(Action.EVICT, namespace).or(() -> rules.get().policy().dryRun() ? Optional.of(JOBS_IN_DRY_RUN) : Optional.empty());
  }

  /** A job ended: it no longer holds its pod; its place goes back if it never sent its eviction. */
  public void ended(String podUid) {
    if (!parts.ledger().releaseJob(podUid)) {
      return; // no job of this service's: whatever else is in progress for the pod is not the job's to end
    }
    adopted.remove(podUid);
    parts.ledger().inProgress(podUid).filter(parts.ledger()::settle).ifPresent(entry -> {
      parts.ledger().undone(entry);
      parts.background().freed(entry);
    });
  }

  /** Whether this replica may act on jobs now (leads, not stopping). */
  public boolean mayLead() {
    return parts.checks().mayLead();
  }

  /** The policy in force now. */
  public Rules rules() {
    return rules.get();
  }
}
