package io.podsweeper.kube;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.HttpURLConnection;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes Kubernetes Events (core/v1) about an object; a failure to record is logged, never thrown. An Event that
 * repeats one this process recorded (same object, type, reason and message) raises that Event's count and last
 * time instead of adding another, as client-go's recorder does, so a condition that persists is one line in
 * {@code kubectl describe} ("x12 over 30m") rather than a new Event per occurrence.
 */
public final class EventRecorder {
  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
  static final String COMPONENT = "podsweeper";
  private static final int MAX_MESSAGE_LENGTH = 1000;

  private record Occurrence(String namespace, String kind, String name, String uid, String type, String reason, String message) {}

  private record Recorded(String eventName, int count) {}

  private final KubernetesClient client;
  /** This replica's name (its leader-election identity, the pod's name): which of two replicas recorded an Event. */
  private final String instance;
  /** Bounded like client-go's correlator cache: a forgotten Event only means the next repeat starts a new one. */
  private final Cache<Occurrence, Recorded> recorded = Caffeine.newBuilder().maximumSize(4096).build();

  /** @param instance this replica's name, the Events' {@code reportingInstance} and {@code source.host} */
  public EventRecorder(KubernetesClient client, String instance) {
    this.client = client;
    this.instance = instance;
  }

  /** Synchronized: two threads repeating one Event at once would both create it, or count one repeat twice. */
  public synchronized void record(String namespace, String kind, String name, String uid, String type, String reason, String message) {
    Occurrence occurrence = new Occurrence(namespace, kind, name, uid, type, reason,
        message.length() > MAX_MESSAGE_LENGTH ? message.substring(0, MAX_MESSAGE_LENGTH) : message);
    String now = Instant.now().toString();
    try {
      Recorded seen = recorded.getIfPresent(occurrence);
      if (seen != null && counted(namespace, seen, now)) {
        recorded.put(occurrence, new Recorded(seen.eventName(), seen.count() + 1));
      } else {
        recorded.put(occurrence, new Recorded(create(occurrence, now).getMetadata().getName(), 1));
      }
    } catch (KubernetesClientException e) {
      LOG.warn("cannot record event {} on {} {}/{}: {}", reason, kind, namespace, name, ApiAnswers.oneLine(e));
    }
  }

  /**
   * An Event on a ConfigMap, with its uid: {@code kubectl describe configmap} lists only the Events that carry it.
   * Without the uid (the ConfigMap is gone, or reading it is not allowed) the Event is still recorded by name.
   */
  public void recordOnConfigMap(String namespace, String name, String type, String reason, String message) {
    String uid = "";
    try {
      ConfigMap configMap = client.configMaps().inNamespace(namespace).withName(name).get();
      uid = configMap == null ? "" : configMap.getMetadata().getUid();
    } catch (KubernetesClientException e) {
      LOG.debug("cannot read ConfigMap {}/{} for its uid: {}", namespace, name, e.getMessage());
    }
    record(namespace, "ConfigMap", name, uid, type, reason, message);
  }

  /**
   * Raises the count of an Event recorded before; false if it is gone (Events expire, an hour by default). One PATCH by
   * name: given only a name, fabric8 would GET the Event first, which the ServiceAccount may not (manifests/rbac.yaml
   * grants events create and patch), so every repeat failed and the count stayed 1.
   */
  private boolean counted(String namespace, Recorded seen, String now) {
    Event named = new EventBuilder().withNewMetadata().withNamespace(namespace).withName(seen.eventName()).endMetadata().build();
    try {
      client.v1().events().inNamespace(namespace).resource(named)
          .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"count\":" + (seen.count() + 1) + ",\"lastTimestamp\":\"" + now + "\"}");
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == HttpURLConnection.HTTP_NOT_FOUND) {
        return false;
      }
      throw e;
    }
  }

  private Event create(Occurrence o, String now) {
    return client.v1().events().inNamespace(o.namespace()).resource(new EventBuilder()
        .withNewMetadata().withGenerateName(o.name() + ".").withNamespace(o.namespace()).endMetadata()
        .withInvolvedObject(new ObjectReferenceBuilder().withApiVersion("v1").withKind(o.kind()).withName(o.name())
            .withNamespace(o.namespace()).withUid(o.uid()).build())
        .withType(o.type()).withReason(o.reason()).withMessage(o.message())
        .withNewSource().withComponent(COMPONENT).withHost(instance).endSource()
        .withReportingComponent(COMPONENT).withReportingInstance(instance)
        .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
        .build()).create();
  }
}
