package io.podsweeper.migration;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.migration.MigrationJobSteps.PodAt;
import io.podsweeper.migration.MigrationJobSteps.Step;
import io.podsweeper.kube.MigrationJobs;
import io.podsweeper.kube.MigrationJobs.Condition;
import io.podsweeper.kube.MigrationJobs.Job;
import io.podsweeper.kube.MigrationJobs.ReservationState;
import io.podsweeper.kube.MigrationJobs.StatusChange;
import io.podsweeper.kube.PodRemover;
import io.podsweeper.policy.EvictorArgs;
import io.podsweeper.policy.MigrationJobs.DeleteOptions;
import io.podsweeper.policy.MigrationJobs.EvictionPolicy;
import io.podsweeper.policy.Policy;
import io.podsweeper.removal.JobAdmission;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.Evictor;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out PodMigrationJobs as Koordinator's MigrationController does, while the policy asks for them: the jobs
 * this service made for admitted evictions and hand-made ones alike (not those another reconciler made, by their
 * {@code koordinator.sh/job-created-by}). One thread looks at every unfinished job on each change and every second;
 * {@link MigrationJobSteps} says what each needs, the removal path ({@link JobAdmission}) admits it and sends its eviction.
 *
 * <p>The kill switch holds jobs that have not sent their eviction: they stay Running (or Pending) with the reason in
 * their status message, and go on when removals resume; their TTL still ends them (Failed, Timeout).
 */
public final class MigrationJobController implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MigrationJobController.class);
  public static final String STRATEGY = JobAdmission.HAND_MADE;
  private static final long TICK_MILLIS = 1000;

  private final MigrationJobs api;
  private final JobAdmission admission;
  private final PodSource cache;
  private final PodRemover remover;
  private final Clock clock;
  private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "migration-jobs");
    t.setDaemon(true);
    return t;
  });
  /**
   * The pod each job was admitted for, by job UID (touched on this controller's thread only): a job ends for exactly that
   * pod, even if its spec never got the pod's UID written or another pod now has its name.
   */
  private final Map<String, String> admitted = new HashMap<>();

  public MigrationJobController(MigrationJobs api, JobAdmission admission, PodSource cache, PodRemover remover, Clock clock) {
    this.api = api;
    this.admission = admission;
    this.cache = cache;
    this.remover = remover;
    this.clock = clock;
  }

  public void start() {
    thread.scheduleWithFixedDelay(this::reconcileAll, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
  }

  /**
   * Where the removal path's requests go while the policy asks for jobs: an eviction becomes a PodMigrationJob (a dry-run, or
   * a DELETE of a finished pod, is sent as it is).
   */
  public RequestResult send(Decision decision, boolean dryRun) {
    Optional<io.podsweeper.policy.MigrationJobs> wanted = admission.rules().policy().migrationJobs();
    return !dryRun && decision.action() == Action.EVICT && wanted.isPresent()
        ? api.create(decision, wanted.get()) : remover.remove(decision, dryRun);
  }

  /** Every PodMigrationJob the API server has (not only this service's), by phase. */
  public Map<String, Long> jobsByPhase() {
    return MigrationJobSteps.byPhase(api.jobs());
  }

  /** A job changed: look at the jobs now rather than at the next tick. */
  public void changed() {
    if (!thread.isShutdown()) {
      thread.execute(this::reconcileAll);
    }
  }

  /**
   * A job was deleted (by hand, say, while it waited for its Reservation): it has ended, so its pod is no longer held
   * for it and its place in the limits goes back if it never sent its eviction.
   */
  public void deleted(Job job) {
    boolean ours = job.createdBy().isEmpty() || job.createdBy().equals(MigrationJobs.CREATOR);
    // A finished job's end was told when it finished; another koord-descheduler's jobs are not ours to end.
    if (ours && !MigrationJobSteps.finished(job) && !thread.isShutdown()) {
      thread.execute(() -> endedForTheGate(job));
    }
  }

  /** The admission of a job: its place in the limits, remembered for the pod it was admitted for. */
  private Optional<String> admit(Job job, PodRecord pod) {
    Optional<String> held = admission.admit(pod, decision(job, pod));
    if (held.isEmpty()) {
      admitted.put(job.uid(), pod.uid());
    }
    return held;
  }

  /**
   * Tells the admission that the job has ended, for the pod it was admitted for, else the pod it names by UID (a job this
   * service made names it from the start), never whatever pod has that name now.
   */
  private void endedForTheGate(Job job) {
    String podUid = Optional.ofNullable(admitted.remove(job.uid())).orElse(job.podUid());
    if (!podUid.isEmpty()) {
      admission.ended(podUid);
    }
  }

  private void reconcileAll() {
    try {
      Policy policy = admission.rules().policy();
      // In a dry-run the jobs are left as they are: no status written, no eviction (the admission holds them too).
      if (policy.migrationJobs().isEmpty() || !admission.mayLead() || policy.dryRun()) {
        return;
      }
      for (Job job : api.jobs()) {
        boolean ours = job.createdBy().isEmpty() || job.createdBy().equals(MigrationJobs.CREATOR);
        if (ours && !MigrationJobSteps.finished(job)) {
          reconcile(job, policy.migrationJobs().get());
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("PodMigrationJobs: {}", e.toString(), e);
    }
  }

  private void reconcile(Job job, io.podsweeper.policy.MigrationJobs defaults) {
    Optional<PodRecord> pod = cache.pod(job.podKey());
    Optional<ReservationState> reservation = MigrationJobSteps.readsReservation(job, defaults.mode())
        ? Optional.of(api.reservation(job.reservation().get())) : Optional.empty();
    Instant now = clock.instant();
    Step step = MigrationJobSteps.next(job, pod.map(p -> new PodAt(p.uid(), p.nodeName())), reservation, this::readyOrGone,
        defaults.mode(), now);
    switch (step.kind()) {
      case WAIT -> { }
      case FAIL -> fail(job, step.reason(), step.message());
      case START -> start(job, pod.get());
      case CREATE_RESERVATION -> {
        Optional<String> problem = api.createReservation(job, job.ttl().orElse(defaults.ttl()));
        if (problem.isPresent()) {
          api.update(job, StatusChange.condition(new Condition(MigrationJobSteps.RESERVATION_CREATED, "False", "FailedCreateReservation"),
              "Failed to create Reservation caused by " + problem.get()));
          fail(job, "FailedCreateReservation", "Failed to create Reservation caused by " + problem.get());
        } else if (api.update(job, StatusChange.condition(new Condition(MigrationJobSteps.RESERVATION_CREATED, "True", ""), ""))) {
          api.event(job, "Normal", MigrationJobSteps.RESERVATION_CREATED, "Successfully create Reservation \"" + job.uid() + "\"");
        }
      }
      case RESERVATION_SCHEDULED -> {
        StatusChange scheduled = StatusChange.condition(new Condition(MigrationJobSteps.RESERVATION_SCHEDULED, "True", ""), "");
        if (api.update(job, new StatusChange(null, null, null, "", scheduled.condition(), step.detail(), null))) {
          api.event(job, "Normal", MigrationJobSteps.RESERVATION_SCHEDULED,
              "Assigned Reservation \"" + job.reservation().orElse("") + "\" to node \"" + step.detail() + "\"");
        }
      }
      case EVICT -> evict(job, pod.get(), defaults);
      case EVICT_COMPLETE -> {
        String message = "Pod \"" + job.podKey() + "\" has been evicted";
        if (api.update(job, StatusChange.condition(new Condition(MigrationJobSteps.EVICTION, "True", MigrationJobSteps.EVICT_COMPLETE), ""))) {
          api.event(job, "Normal", MigrationJobSteps.EVICT_COMPLETE, message);
        }
      }
      case WAIT_FOR_BIND -> {
        if (job.condition(MigrationJobSteps.POD_BOUND_RESERVATION).isEmpty()
            && api.update(job, StatusChange.condition(new Condition(MigrationJobSteps.POD_BOUND_RESERVATION, "False",
                "WaitForPodBindReservation"), ""))) {
          api.event(job, "Normal", "WaitForPodBindReservation", "Waiting for Pod bind Reservation");
        }
      }
      case RESERVATION_BOUND -> {
        if (api.update(job, new StatusChange(null, null, null, "", new Condition(MigrationJobSteps.RESERVATION_BOUND, "True", ""), null,
            step.detail()))) {
          api.event(job, "Normal", MigrationJobSteps.POD_BOUND_RESERVATION, "Reservation bound by pod \"" + step.detail() + "\"");
        }
      }
      case WAIT_FOR_READY -> {
        if (!job.condition(MigrationJobSteps.BOUND_POD_READY).map(Condition::reason).orElse("").equals(MigrationJobSteps.WAIT_FOR_BOUND_POD_READY)
            && api.update(job, StatusChange.condition(new Condition(MigrationJobSteps.BOUND_POD_READY, "False",
                MigrationJobSteps.WAIT_FOR_BOUND_POD_READY), ""))) {
          api.event(job, "Normal", MigrationJobSteps.WAIT_FOR_BOUND_POD_READY, "Waiting for Bound Pod " + step.detail() + " Ready");
        }
      }
      case SUCCEED -> {
        if (!step.detail().isEmpty() && !MigrationJobSteps.conditionTrue(job, MigrationJobSteps.BOUND_POD_READY)) {
          if (!api.update(job, StatusChange.condition(new Condition(MigrationJobSteps.BOUND_POD_READY, "True", ""), ""))) {
            return;
          }
          api.event(job, "Normal", MigrationJobSteps.BOUND_POD_READY, "Bind pod \"" + step.detail() + "\" is ready");
        }
        StatusChange done = StatusChange.ended(MigrationJobSteps.SUCCEEDED, "Complete", "", step.message());
        if (api.update(job, step.detail().isEmpty() ? done : new StatusChange(done.phase(), done.status(), done.reason(), done.message(),
            new Condition(MigrationJobSteps.POD_BOUND_RESERVATION, "True", ""), null, step.detail()))) {
          endedForTheGate(job);
          api.event(job, "Normal", "Complete", step.message());
        }
      }
    }
  }

  /** Whether a pod (namespace/name) is Ready, as Koordinator's IsPodReady; as there, one that is gone counts as Ready. */
  private boolean readyOrGone(String key) {
    return cache.pod(key).map(p -> p.conditions().stream().anyMatch(c -> "Ready".equals(c.type()) && "True".equals(c.status())))
        .orElse(true);
  }

  /** Pending → Running once admitted: the evictor's protections, then the limits; held jobs stay Pending. */
  private void start(Job job, PodRecord pod) {
    Optional<String> protection = job.createdBy().isEmpty() ? protection(pod) : Optional.empty();
    if (protection.isPresent()) {
      forbidden(job, pod, protection.get());
      return;
    }
    Optional<String> held = admit(job, pod);
    if (held.isPresent()) {
      hold(job, held.get());
      return;
    }
    if (job.podUid().isEmpty() && !api.setPodUid(job, pod.uid())) {
      return;
    }
    api.update(job, StatusChange.ended(MigrationJobSteps.RUNNING, null, null, null));
  }

  private void evict(Job job, PodRecord pod, io.podsweeper.policy.MigrationJobs defaults) {
    Optional<String> held = admit(job, pod);
    if (held.isPresent()) {
      hold(job, held.get());
      return;
    }
    EvictionPolicy how = EvictionPolicy.of(pod.labels().getOrDefault(MigrationJobs.EVICT_POLICY_LABEL, ""))
        .or(job::evictPolicyLabel).orElse(defaults.evictionPolicy());
    // Koordinator's precedence: the job's own deleteOptions, else defaultDeleteOptions (a whole object, not merged).
    Optional<DeleteOptions> options = job.deleteOptions().or(defaults::deleteOptions);
    JobAdmission.JobSendResult sent = admission.evict(pod, protection(pod), d -> switch (how) {
      case EVICTION -> remover.remove(d, false, options);
      case DELETE -> remover.remove(new Decision(d.namespace(), d.name(), d.uid(), d.resourceVersion(), d.node(), d.strategy(),
          d.profile(), d.rule(), Action.DELETE, d.reason(), d.dueAt(), d.owner()), false, options);
      case SOFT_EVICTION -> remover.softEvict(d);
    });
    switch (sent.outcome()) {
      case SENT -> {
        String message = "Pod \"" + job.podKey() + "\" evicted from node \"" + pod.nodeName() + "\" by the reason \"" + reason(job) + "\"";
        if (api.update(job, StatusChange.condition(new Condition(MigrationJobSteps.EVICTION, "False", MigrationJobSteps.EVICTING), message))) {
          api.event(job, "Normal", MigrationJobSteps.EVICTING, message);
        }
      }
      case HELD -> hold(job, sent.message());
      case REFUSED -> forbidden(job, pod, sent.message());
      case GONE -> fail(job, "MissingPod", "Abort job caused by missing Pod \"" + job.podKey() + "\"");
    }
  }

  /** Says in the job's status message why it waits (once per reason), leaving its phase, status and reason alone. */
  private void hold(Job job, String why) {
    String message = "held: " + why;
    if (!message.equals(job.message())) {
      api.update(job, StatusChange.message(message));
      LOG.info("PodMigrationJob {} for pod {} {}", job.name(), job.podKey(), message);
    }
  }

  private void forbidden(Job job, PodRecord pod, String why) {
    fail(job, MigrationJobSteps.FORBIDDEN, "Pod \"" + pod.key() + "\" is forbidden to migrate because it does not meet the requirements: " + why);
  }

  private void fail(Job job, String reason, String message) {
    if (api.update(job, StatusChange.ended(MigrationJobSteps.FAILED, null, reason, message))) {
      api.deleteReservation(job);
      endedForTheGate(job);
      api.event(job, "Warning", reason, message);
      LOG.info("PodMigrationJob {} for pod {} failed: {} {}", job.name(), job.podKey(), reason, message);
    }
  }

  private Optional<String> protection(PodRecord pod) {
    return new Evictor(handMadeJobEvictor(admission.rules().policy())).protection(pod, cache);
  }

  /**
   * The evictor a job whose pod no rule chose meets: the policy's first profile's (Koordinator's MigrationController
   * filters). With no profile, or when the first is Podsweeper's own rules, whose evictor leaves the protections to
   * each rule ({@link EvictorArgs#NONE}), the DefaultEvictor's defaults: no rule chose this pod, so none opted in.
   */
  public static EvictorArgs handMadeJobEvictor(Policy policy) {
    if (policy.profiles().isEmpty() || policy.profiles().get(0).evictor().equals(EvictorArgs.NONE)) {
      return EvictorArgs.UPSTREAM_DEFAULT;
    }
    return policy.profiles().get(0).evictor();
  }

  /**
   * What the admission judges a job as. A job this service made names the profile that decided (its annotation), so that
   * its rule or strategy judges it again, whichever replica or process carries it out; any other job is hand-made
   * (profile {@link #STRATEGY}): the evictor's protections judge it.
   */
  private Decision decision(Job job, PodRecord pod) {
    String strategy = job.evictTrigger().isEmpty() ? STRATEGY : job.evictTrigger();
    boolean madeHere = job.createdBy().equals(MigrationJobs.CREATOR) && !job.profile().isEmpty();
    return Decision.of(pod, strategy, madeHere ? job.profile() : STRATEGY, job.name(), "PodMigrationJob " + job.name() + ": " + reason(job), clock.instant());
  }

  /** The reason as koord-descheduler tells it: the evict-reason annotation, else the trigger, else NotSet. */
  private static String reason(Job job) {
    return !job.evictReason().isEmpty() ? job.evictReason() : !job.evictTrigger().isEmpty() ? job.evictTrigger() : "NotSet";
  }

  @Override
  public void close() {
    thread.shutdownNow();
    api.close();
  }
}
