package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Writes Kubernetes Events (core/v1) about an object; a failure to record is logged, never thrown. */
public final class EventRecorder {
  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
  static final String COMPONENT = "podsweeper";

  private final KubernetesClient client;

  public EventRecorder(KubernetesClient client) {
    this.client = client;
  }

  public void record(String namespace, String kind, String name, String uid, String type, String reason, String message) {
    String now = Instant.now().toString();
    try {
      client.v1().events().inNamespace(namespace).resource(new EventBuilder()
          .withNewMetadata().withGenerateName(name + ".").withNamespace(namespace).endMetadata()
          .withInvolvedObject(new ObjectReferenceBuilder().withApiVersion("v1").withKind(kind).withName(name)
              .withNamespace(namespace).withUid(uid).build())
          .withType(type).withReason(reason).withMessage(message.length() > 1000 ? message.substring(0, 1000) : message)
          .withNewSource().withComponent(COMPONENT).endSource()
          .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
          .build()).create();
    } catch (KubernetesClientException e) {
      LOG.warn("cannot record event {} on {} {}/{}: {}", reason, kind, namespace, name, e.getMessage());
    }
  }
}
