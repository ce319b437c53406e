package io.podsweeper.kube;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.internal.KubeConfigUtils;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.kubernetes.client.utils.Utils;

/**
 * fabric8's serialization without its registry of every kind: the kinds an object of unknown type may be are the
 * ones this process watches, each registered where its watch is made ({@link #expect}).
 *
 * <p>Why: fabric8's default serialization, the first time it reads a field typed only as "some Kubernetes object" (a
 * watch event's object, a kubeconfig's extension), loads and registers every kind of every model module on the class
 * path: about 500 classes more than the service loads without it (Gateway API, flow control, dynamic resources, ...),
 * of which it uses none. The AOT cache, which loads every class it holds at start, held them: 5 of its 71 MB, resident
 * for the life of the process, and CPU on the main thread before the pods' list (docs/benchmarks.md, issue 36).
 *
 * <p>What is read by type (a list, a get, a Status) needs no registry. What is not: a watch event's object, which
 * fabric8 decodes by the event's apiVersion and kind. {@link Status} is registered here, for the watches' error events:
 * an expired resourceVersion (410 Gone) comes as one, and a watch that took it for anything else would retry it instead
 * of listing again (CacheCurrencyIT). Each informer registers the kind it watches: an object of a kind left unregistered
 * decodes as a {@link GenericKubernetesResource}, which fabric8's watch then converts to the watched type, a second
 * decoding of every event.
 */
public final class KubeSerialization {
  private KubeSerialization() {}

  /** fabric8's serialization on {@code mapper}, which knows the kinds registered with {@link #expect} and Status. */
  public static KubernetesSerialization of(ObjectMapper mapper) {
    KubernetesSerialization serialization = new KubernetesSerialization(mapper, false);
    serialization.registerKubernetesResource(Status.class);
    return serialization;
  }

  /** Makes {@code serialization} decode a watch event's object of {@code type}'s kind as a {@code type}. */
  static void expect(KubernetesSerialization serialization, Class<? extends HasMetadata> type) {
    if (type != GenericKubernetesResource.class) {
      serialization.registerKubernetesResource(type);
    }
  }

  /**
   * A client configuration from a kubeconfig's text, as fabric8's {@code Config.fromKubeconfig} makes it (the current
   * context; then the system properties and environment variables fabric8 reads, unless auto-configuration is off),
   * but read with {@link #of} instead of fabric8's default serialization, whose registry a kubeconfig's extensions
   * field would load.
   */
  public static Config kubeconfig(String text) {
    if (Utils.isNullOrEmpty(text)) {
      throw new KubernetesClientException("Could not create Config from kubeconfig"); // as fabric8 says it
    }
    io.fabric8.kubernetes.api.model.Config kubeconfig = of(new ObjectMapper()).unmarshal(text, io.fabric8.kubernetes.api.model.Config.class);
    Config config = Config.empty();
    KubeConfigUtils.merge(config, null, kubeconfig);
    if (!Utils.getSystemPropertyOrEnvVar(Config.KUBERNETES_DISABLE_AUTO_CONFIG_SYSTEM_PROPERTY, false)) {
      Config.configFromSysPropsOrEnvVars(config);
    }
    return config;
  }
}
