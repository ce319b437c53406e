package io.podsweeper.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.MigrationJobs.DeleteOptions;
import io.podsweeper.policy.MigrationJobs.EvictionPolicy;
import io.podsweeper.policy.MigrationJobs.Mode;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.strategy.Decision;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Koordinator's {@code PodMigrationJob} and {@code Reservation} ({@code scheduling.koordinator.sh/v1alpha1}, both
 * cluster-scoped) on the API server: the jobs as an informer sees them, their status written as koord-descheduler
 * writes it, the Reservation a ReservationFirst job asks koord-scheduler for, and the Events of a job's lifecycle.
 * Field names, phases, reasons and annotations are Koordinator's (apis/scheduling/v1alpha1).
 */
public final class MigrationJobs implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MigrationJobs.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  public static final String API_VERSION = "scheduling.koordinator.sh/v1alpha1";
  public static final String KIND = "PodMigrationJob";
  /** koord-descheduler skips jobs another reconciler created; this service marks its own with this value. */
  public static final String CREATED_BY_ANNOTATION = "koordinator.sh/job-created-by";
  public static final String CREATOR = "podsweeper";
  public static final String EVICT_REASON_ANNOTATION = "koordinator.sh/evict-reason";
  public static final String EVICT_TRIGGER_ANNOTATION = "koordinator.sh/evict-trigger";
  /**
   * On a job this service made: the profile whose decision it carries out, so that any replica, after a restart or a
   * failover, re-judges it by that profile's rule or strategy rather than as a hand-made job.
   */
  public static final String PROFILE_ANNOTATION = "podsweeper.io/profile";
  /** On the pod or the job: overrides the eviction policy (Eviction, Delete, SoftEviction). */
  public static final String EVICT_POLICY_LABEL = "koordinator.sh/evict-policy";
  public static final String SOFT_EVICTION_ANNOTATION = "scheduling.koordinator.sh/soft-eviction";
  /** Cluster-scoped objects' Events live here, as kubectl looks for them. */
  private static final String EVENT_NAMESPACE = "default";

  private static final ResourceDefinitionContext JOBS = context(KIND, "podmigrationjobs");
  private static final ResourceDefinitionContext RESERVATIONS = context("Reservation", "reservations");

  /** A condition of a job's status: type, status (True/False/Unknown), reason. */
  public record Condition(String type, String status, String reason) {}

  /**
   * A job as last seen.
   *
   * @param podUid {@code spec.podRef.uid}, empty if the creator left it out (it is filled when the job starts)
   * @param createdBy the {@code koordinator.sh/job-created-by} annotation, empty for a hand-made job
   * @param profile the {@code podsweeper.io/profile} annotation ({@link #PROFILE_ANNOTATION}), empty if absent
   * @param reservation {@code spec.reservationOptions.reservationRef.name}, empty until one is made or given
   * @param deleteOptions {@code spec.deleteOptions}: its gracePeriodSeconds and propagationPolicy (never its preconditions)
   */
  public record Job(String name, String uid, Instant created, boolean paused, Optional<Duration> ttl, Optional<Mode> mode,
      String podNamespace, String podName, String podUid, String phase, List<Condition> conditions, Optional<String> reservation,
      String createdBy, String profile, Optional<EvictionPolicy> evictPolicyLabel, String evictReason, String evictTrigger, String message,
      Optional<DeleteOptions> deleteOptions) {

    public Optional<Condition> condition(String type) {
      return conditions.stream().filter(c -> c.type().equals(type)).findFirst();
    }

    public String podKey() {
      return podNamespace + "/" + podName;
    }
  }

  /** What the Reservation of a job says, as koord-descheduler reads it. */
  public enum ReservationPhase { NOT_SERVED, MISSING, PENDING, SCHEDULED, UNSCHEDULABLE }

  /** @param boundPod namespace/name of {@code status.currentOwners[0]}, the pod that took the reserved room */
  public record ReservationState(ReservationPhase phase, String nodeName, String message, Optional<String> boundPod) {}

  /**
   * A change to a job's status, applied as koord-descheduler applies it: a condition also becomes the job's
   * {@code status}, {@code reason} and {@code message}; null fields are left as they are.
   *
   * @param newPod the pod that took the Reservation (namespace/name), for {@code status.podRef}
   */
  public record StatusChange(String phase, String status, String reason, String message, Condition condition, String nodeName,
      String newPod) {
    public static StatusChange ended(String phase, String status, String reason, String message) {
      return new StatusChange(phase, status, reason, message, null, null, null);
    }

    public static StatusChange condition(Condition condition, String message) {
      return new StatusChange(null, null, null, message, condition, null, null);
    }

    public static StatusChange message(String message) {
      return new StatusChange(null, null, null, message, null, null, null);
    }
  }

  private final KubernetesClient client;
  private final SharedIndexInformer<GenericKubernetesResource> informer;

  private MigrationJobs(KubernetesClient client, Runnable changed, Consumer<Job> deleted) {
    this.client = client;
    this.informer = jobApi().inform(new ResourceEventHandler<>() {
      @Override
      public void onAdd(GenericKubernetesResource obj) {
        changed.run();
      }

      @Override
      public void onUpdate(GenericKubernetesResource oldObj, GenericKubernetesResource newObj) {
        changed.run();
      }

      @Override
      public void onDelete(GenericKubernetesResource obj, boolean deletedFinalStateUnknown) {
        deleted.accept(job(JSON.valueToTree(obj)));
      }
    });
  }

  /**
   * Watches the jobs, or empty if the API server does not serve PodMigrationJobs (Koordinator's CRDs not installed).
   *
   * @param changed a job was added or changed
   * @param deleted a job was deleted, as last seen
   */
  public static Optional<MigrationJobs> start(KubernetesClient client, Runnable changed, Consumer<Job> deleted) {
    if (!served(client, "podmigrationjobs")) {
      return Optional.empty();
    }
    return Optional.of(new MigrationJobs(client, changed, deleted));
  }

  static boolean served(KubernetesClient client, String resource) {
    try {
      APIResourceList list = client.getApiResources(API_VERSION);
      return list != null && list.getResources().stream().anyMatch(r -> r.getName().equals(resource));
    } catch (KubernetesClientException e) {
      LOG.debug("cannot discover {}: {}", API_VERSION, e.getMessage());
      return false;
    }
  }

  public List<Job> jobs() {
    List<Job> jobs = new ArrayList<>();
    for (GenericKubernetesResource r : informer.getStore().list()) {
      jobs.add(job(JSON.valueToTree(r)));
    }
    return jobs;
  }

  static Job job(JsonNode o) {
    JsonNode meta = o.path("metadata");
    JsonNode spec = o.path("spec");
    JsonNode status = o.path("status");
    List<Condition> conditions = new ArrayList<>();
    status.path("conditions").forEach(c -> conditions.add(new Condition(c.path("type").asText(), c.path("status").asText(),
        c.path("reason").asText())));
    JsonNode ref = spec.path("reservationOptions").path("reservationRef").path("name");
    return new Job(meta.path("name").asText(), meta.path("uid").asText(), Instant.parse(meta.path("creationTimestamp").asText()),
        spec.path("paused").asBoolean(false),
        spec.hasNonNull("ttl") ? Durations.parse(spec.path("ttl").asText()) : Optional.empty(),
        io.podsweeper.policy.MigrationJobs.of(Mode.values(), spec.path("mode").asText()),
        spec.path("podRef").path("namespace").asText(), spec.path("podRef").path("name").asText(), spec.path("podRef").path("uid").asText(),
        status.path("phase").asText(), conditions, ref.isTextual() && !ref.asText().isEmpty() ? Optional.of(ref.asText()) : Optional.empty(),
        meta.path("annotations").path(CREATED_BY_ANNOTATION).asText(), meta.path("annotations").path(PROFILE_ANNOTATION).asText(),
        EvictionPolicy.of(meta.path("labels").path(EVICT_POLICY_LABEL).asText()),
        meta.path("annotations").path(EVICT_REASON_ANNOTATION).asText(), meta.path("annotations").path(EVICT_TRIGGER_ANNOTATION).asText(),
        status.path("message").asText(), deleteOptions(spec.path("deleteOptions")));
  }

  /** A job's {@code spec.deleteOptions} (the CRD's schema has checked its types), empty if it has none. */
  static Optional<DeleteOptions> deleteOptions(JsonNode o) {
    if (!o.isObject()) {
      return Optional.empty();
    }
    JsonNode grace = o.path("gracePeriodSeconds");
    JsonNode propagation = o.path("propagationPolicy");
    return Optional.of(new DeleteOptions(grace.canConvertToLong() && grace.isIntegralNumber() ? OptionalLong.of(grace.asLong()) : OptionalLong.empty(),
        propagation.isTextual() ? Optional.of(propagation.asText()) : Optional.empty()));
  }

  /**
   * Creates the job for an admitted eviction, as koord-descheduler does: a random name, the reason and the strategy
   * in its annotations, the pod by namespace, name and UID, {@code defaultDeleteOptions} as its {@code deleteOptions}.
   */
  public RequestResult create(Decision decision, io.podsweeper.policy.MigrationJobs defaults) {
    ObjectNode job = JSON.createObjectNode();
    job.put("apiVersion", API_VERSION).put("kind", KIND);
    ObjectNode meta = job.putObject("metadata");
    meta.put("name", UUID.randomUUID().toString());
    meta.putObject("annotations").put(EVICT_REASON_ANNOTATION, decision.reason()).put(EVICT_TRIGGER_ANNOTATION, decision.strategy())
        .put(CREATED_BY_ANNOTATION, CREATOR).put(PROFILE_ANNOTATION, decision.profile());
    ObjectNode spec = job.putObject("spec");
    spec.putObject("podRef").put("namespace", decision.namespace()).put("name", decision.name()).put("uid", decision.uid());
    spec.put("mode", defaults.mode().wireName()).put("ttl", goDuration(defaults.ttl()));
    defaults.deleteOptions().ifPresent(d -> {
      d.write(spec.putObject("deleteOptions"));
    });
    try {
      GenericKubernetesResource created = jobApi().resource(JSON.convertValue(job, GenericKubernetesResource.class)).create();
      return new RequestResult(RequestResult.Outcome.STARTED, 201, "PodMigrationJob " + created.getMetadata().getName() + " created");
    } catch (KubernetesClientException e) {
      return new RequestResult(RequestResult.Outcome.ERROR, e.getCode(), "cannot create a PodMigrationJob: " + e.getMessage());
    }
  }

  /** Writes a status change; false if the job changed meanwhile (it is looked at again with what is current). */
  public boolean update(Job job, StatusChange change) {
    try {
      Resource<GenericKubernetesResource> resource = jobApi().withName(job.name());
      GenericKubernetesResource current = resource.get();
      if (current == null || !current.getMetadata().getUid().equals(job.uid())) {
        return false;
      }
      ObjectNode o = JSON.valueToTree(current);
      ObjectNode status = o.has("status") && o.get("status").isObject() ? (ObjectNode) o.get("status") : o.putObject("status");
      if (change.condition() != null) {
        setCondition(status, change.condition(), change.message());
      }
      if (change.phase() != null) {
        status.put("phase", change.phase());
      }
      if (change.status() != null) {
        omitEmpty(status, "status", change.status());
      }
      if (change.reason() != null) {
        omitEmpty(status, "reason", change.reason());
      }
      if (change.message() != null) {
        omitEmpty(status, "message", change.message());
      }
      if (change.nodeName() != null) {
        status.put("nodeName", change.nodeName());
      }
      if (change.newPod() != null) {
        String[] key = change.newPod().split("/", 2);
        status.putObject("podRef").put("namespace", key[0]).put("name", key[1]);
      }
      jobApi().resource(JSON.convertValue(o, GenericKubernetesResource.class)).updateStatus();
      return true;
    } catch (KubernetesClientException e) {
      LOG.debug("cannot update PodMigrationJob {}: {}", job.name(), e.getMessage());
      return false;
    }
  }

  /** As Koordinator's UpdateCondition: replaces the condition of that type, its transition time set when its status changes. */
  private static void setCondition(ObjectNode status, Condition condition, String message) {
    ArrayNode conditions = status.has("conditions") && status.get("conditions").isArray()
        ? (ArrayNode) status.get("conditions") : status.putArray("conditions");
    String now = Instant.now().toString();
    ObjectNode c = null;
    for (JsonNode existing : conditions) {
      if (existing.path("type").asText().equals(condition.type())) {
        c = (ObjectNode) existing;
      }
    }
    if (c == null) {
      c = conditions.addObject().put("type", condition.type());
    }
    if (!condition.status().equals(c.path("status").asText())) {
      c.put("lastTransitionTime", now);
    }
    c.put("status", condition.status()).put("lastProbeTime", now);
    omitEmpty(c, "reason", condition.reason());
    omitEmpty(c, "message", message);
    status.put("status", condition.type());
    omitEmpty(status, "reason", condition.reason());
    omitEmpty(status, "message", message);
  }

  /** As Go's {@code omitempty}: an empty string is no field at all (the CRD's schema takes no null). */
  private static void omitEmpty(ObjectNode o, String field, String value) {
    if (value.isEmpty()) {
      o.remove(field);
    } else {
      o.put(field, value);
    }
  }

  /** Fills {@code spec.podRef.uid} of a job that left it out, as koord-descheduler does when a job starts. */
  public boolean setPodUid(Job job, String uid) {
    return editSpec(job, spec -> ((ObjectNode) spec.with("podRef")).put("uid", uid));
  }

  /** An Event on the job, as koord-descheduler records its lifecycle (action "Migrating"). */
  public void event(Job job, String type, String reason, String message) {
    try {
      String now = Instant.now().toString();
      ObjectNode e = JSON.createObjectNode();
      e.put("apiVersion", "v1").put("kind", "Event");
      e.putObject("metadata").put("generateName", job.name() + ".").put("namespace", EVENT_NAMESPACE);
      e.putObject("involvedObject").put("apiVersion", API_VERSION).put("kind", KIND).put("name", job.name()).put("uid", job.uid());
      e.put("type", type).put("reason", reason).put("message", message).put("action", "Migrating")
          .put("firstTimestamp", now).put("lastTimestamp", now).put("count", 1);
      e.putObject("source").put("component", EventRecorder.COMPONENT);
      client.v1().events().inNamespace(EVENT_NAMESPACE).resource(JSON.convertValue(e, io.fabric8.kubernetes.api.model.Event.class)).create();
    } catch (KubernetesClientException ex) {
      LOG.warn("cannot record event {} on PodMigrationJob {}: {}", reason, job.name(), ex.getMessage());
    }
  }

  /**
   * Creates the Reservation of a ReservationFirst job, as koord-descheduler does: named after the job's UID, the
   * pod's own template (not on its current node), its controller as owner, allocated once, the job's TTL; then the
   * job's {@code spec.reservationOptions.reservationRef} names it. Empty if done, else why not.
   */
  public Optional<String> createReservation(Job job, Duration ttl) {
    if (!served(client, "reservations")) {
      return Optional.of("the API server does not serve " + API_VERSION + " Reservations (Koordinator's Reservation CRD is not"
          + " installed): mode ReservationFirst needs it and koord-scheduler; use mode EvictDirectly");
    }
    try {
      Pod pod = client.pods().inNamespace(job.podNamespace()).withName(job.podName()).get();
      if (pod == null) {
        return Optional.of("pod " + job.podKey() + " is gone");
      }
      ObjectNode podJson = JSON.valueToTree(pod);
      ObjectNode template = JSON.createObjectNode();
      ObjectNode podMeta = template.putObject("metadata");
      for (String field : List.of("labels", "annotations")) {
        if (podJson.path("metadata").path(field).isObject()) {
          podMeta.set(field, podJson.path("metadata").path(field));
        }
      }
      ObjectNode podSpec = podJson.path("spec").deepCopy();
      podSpec.remove("nodeName");
      ObjectNode notHere = JSON.createObjectNode().put("key", "metadata.name").put("operator", "NotIn");
      notHere.putArray("values").add(pod.getSpec().getNodeName() == null ? "" : pod.getSpec().getNodeName());
      ObjectNode required = ((ObjectNode) podSpec.with("affinity").with("nodeAffinity")).with("requiredDuringSchedulingIgnoredDuringExecution");
      ArrayNode terms = required.has("nodeSelectorTerms") ? (ArrayNode) required.get("nodeSelectorTerms") : required.putArray("nodeSelectorTerms");
      if (terms.isEmpty()) {
        terms.addObject();
      }
      terms.forEach(t -> ((ObjectNode) t).withArray("matchFields").add(notHere));
      template.set("spec", podSpec);
      ObjectNode reservation = JSON.createObjectNode();
      reservation.put("apiVersion", API_VERSION).put("kind", "Reservation");
      reservation.putObject("metadata").put("name", job.uid()).putObject("labels").put("app.kubernetes.io/created-by", CREATOR);
      ObjectNode spec = reservation.putObject("spec");
      spec.set("template", template);
      spec.put("allocateOnce", true).put("ttl", goDuration(ttl));
      ArrayNode owners = spec.putArray("owners");
      pod.getMetadata().getOwnerReferences().stream().filter(o -> Boolean.TRUE.equals(o.getController())).findFirst()
          .ifPresent(o -> owners.addObject().set("controller", ((ObjectNode) JSON.valueToTree(o)).put("namespace", job.podNamespace())));
      if (owners.isEmpty()) {
        owners.addObject().putObject("object").put("kind", "Pod").put("namespace", job.podNamespace()).put("name", job.podName())
            .put("uid", pod.getMetadata().getUid());
      }
      GenericKubernetesResource created = reservationApi().resource(JSON.convertValue(reservation, GenericKubernetesResource.class)).create();
      String uid = created.getMetadata().getUid();
      boolean referenced = editSpec(job, jobSpec -> ((ObjectNode) jobSpec.with("reservationOptions").with("reservationRef"))
          .put("apiVersion", "v1alpha1").put("kind", "Reservation").put("name", job.uid()).put("uid", uid));
      return referenced ? Optional.empty() : Optional.of("cannot name the Reservation in the job");
    } catch (KubernetesClientException e) {
      return Optional.of("cannot create the Reservation: " + e.getMessage());
    }
  }

  /** The job's Reservation, judged as koord-descheduler judges it (scheduled: a node and condition Scheduled True). */
  public ReservationState reservation(String name) {
    GenericKubernetesResource r;
    try {
      r = reservationApi().withName(name).get();
    } catch (KubernetesClientException e) {
      return new ReservationState(ReservationPhase.PENDING, "", "cannot read the Reservation: " + e.getMessage(), Optional.empty());
    }
    if (r == null) {
      // Not found: the object, or (rarely, so asked only then) the whole resource.
      return new ReservationState(served(client, "reservations") ? ReservationPhase.MISSING : ReservationPhase.NOT_SERVED, "", "",
          Optional.empty());
    }
    return reservationState(JSON.valueToTree(r).path("status"));
  }

  static ReservationState reservationState(JsonNode status) {
    String phase = status.path("phase").asText();
    String node = status.path("nodeName").asText();
    JsonNode owner = status.path("currentOwners").path(0);
    Optional<String> bound = owner.hasNonNull("name") ? Optional.of(owner.path("namespace").asText() + "/" + owner.path("name").asText())
        : Optional.empty();
    String unschedulable = "";
    boolean scheduled = false;
    for (JsonNode c : status.path("conditions")) {
      if (c.path("type").asText().equals("Scheduled")) {
        scheduled |= c.path("status").asText().equals("True") && c.path("reason").asText().equals("Scheduled");
        if (c.path("reason").asText().equals("Unschedulable")) {
          unschedulable = c.path("message").asText();
        }
      }
    }
    if (phase.isEmpty() || phase.equals("Pending")) {
      return new ReservationState(ReservationPhase.PENDING, node, unschedulable, bound);
    }
    if (!node.isEmpty() && scheduled) {
      return new ReservationState(ReservationPhase.SCHEDULED, node, "", bound);
    }
    return new ReservationState(ReservationPhase.UNSCHEDULABLE, node, unschedulable.isEmpty() ? "Reservation is " + phase : unschedulable, bound);
  }

  public void deleteReservation(Job job) {
    job.reservation().ifPresent(name -> {
      try {
        reservationApi().withName(name).delete();
      } catch (KubernetesClientException e) {
        LOG.debug("cannot delete Reservation {}: {}", name, e.getMessage());
      }
    });
  }

  private boolean editSpec(Job job, java.util.function.Consumer<ObjectNode> edit) {
    try {
      GenericKubernetesResource current = jobApi().withName(job.name()).get();
      if (current == null || !current.getMetadata().getUid().equals(job.uid())) {
        return false;
      }
      ObjectNode o = JSON.valueToTree(current);
      edit.accept((ObjectNode) o.with("spec"));
      jobApi().resource(JSON.convertValue(o, GenericKubernetesResource.class)).update();
      return true;
    } catch (KubernetesClientException e) {
      LOG.debug("cannot update PodMigrationJob {}: {}", job.name(), e.getMessage());
      return false;
    }
  }

  /** Go's time.Duration text, which metav1.Duration parses: 5m0s, 1h0m0s, 90s as 1m30s. */
  static String goDuration(Duration d) {
    long s = d.toSeconds();
    return (s >= 3600 ? s / 3600 + "h" : "") + (s >= 60 ? (s % 3600) / 60 + "m" : "") + s % 60 + "s";
  }

  private MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> jobApi() {
    return client.genericKubernetesResources(JOBS);
  }

  private MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> reservationApi() {
    return client.genericKubernetesResources(RESERVATIONS);
  }

  private static ResourceDefinitionContext context(String kind, String plural) {
    return new ResourceDefinitionContext.Builder().withGroup("scheduling.koordinator.sh").withVersion("v1alpha1").withKind(kind)
        .withPlural(plural).withNamespaced(false).build();
  }

  @Override
  public void close() {
    informer.close();
  }
}
