package io.podsweeper.testing;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The PodCleanupPolicy and ClusterPodCleanupPolicy CRDs of manifests/crds/ on the test API server, and objects of them.
 * As an extension ({@code @ExtendWith({ApiServerExtension.class, PodCleanupPolicies.class})}) it installs the CRDs
 * before a class's tests and deletes every policy object after each test: the cluster policy is shared by the run.
 */
public final class PodCleanupPolicies implements BeforeAllCallback, AfterEachCallback {
  private static final Path CRDS = Path.of(System.getProperty("podsweeper.projectDir", "."), "manifests", "crds");
  private static final String API_VERSION = "podsweeper.io/v1alpha1";
  private static final String FIELD_MANAGER = "podsweeper-crd-it";

  @Override
  public void beforeAll(ExtensionContext context) {
    installCrds(ApiServerExtension.server(context).client());
  }

  @Override
  public void afterEach(ExtensionContext context) {
    removeAll(ApiServerExtension.server(context).client());
  }

  /** Installs the CRDs and waits until both kinds and their status subresources are served. */
  public static void installCrds(KubernetesClient client) {
    crds(client).forEach(crd -> client.resource(crd).fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply());
    await().atMost(Duration.ofSeconds(10)).until(() -> servedKinds(client) >= 4);
  }

  public static List<HasMetadata> crds(KubernetesClient client) {
    List<HasMetadata> crds = new ArrayList<>();
    try (var files = Files.list(CRDS)) {
      for (Path file : files.sorted().toList()) {
        try (InputStream in = Files.newInputStream(file)) {
          crds.addAll(client.load(in).items());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return crds;
  }

  /** Resources (kinds and their status subresources) the API server serves in podsweeper.io/v1alpha1. */
  public static int servedKinds(KubernetesClient client) {
    var served = client.getApiResources(API_VERSION);
    return served == null ? 0 : served.getResources().size();
  }

  /** Applies ClusterPodCleanupPolicy {@code default} with {@code spec} (YAML lines indented by two). */
  public static void clusterPolicy(KubernetesClient client, String spec) {
    client.resource("""
        apiVersion: podsweeper.io/v1alpha1
        kind: ClusterPodCleanupPolicy
        metadata: {name: default}
        spec:
          %s
        """.formatted(spec)).fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
  }

  /** Applies a PodCleanupPolicy with one rule named "failed" holding {@code rule} (YAML lines indented by six). */
  public static void apply(KubernetesClient client, String namespace, String name, String rule) {
    client.resource("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodCleanupPolicy
        metadata: {name: %s, namespace: %s}
        spec:
          rules:
            - name: failed
              %s
        """.formatted(name, namespace, rule)).fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
  }

  private static void removeAll(KubernetesClient client) {
    client.genericKubernetesResources(API_VERSION, "PodCleanupPolicy").inAnyNamespace().delete();
    client.genericKubernetesResources(API_VERSION, "ClusterPodCleanupPolicy").delete();
  }
}
