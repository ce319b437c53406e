package io.podsweeper;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.marcnuri.helm.LintResult;
import io.podsweeper.testing.Chart;
import io.podsweeper.testing.Manifests;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Helm chart ({@code manifests/helm/podsweeper}), by Helm itself: lint clean, templates equal to the golden files,
 * and with its defaults the objects of the kustomize base, so that the two cannot drift apart. ChartIT installs and
 * upgrades it on the test API server.
 *
 * <p>Golden files ({@code src/test/resources/helm/*.yaml}): after a deliberate change to the chart, regenerate them
 * with {@code mvn -B -q test -Dtest=ChartTest -Dpodsweeper.golden=update} and review the diff.
 */
class ChartTest {
  private static final YAMLMapper YAML = new YAMLMapper();
  private static final Path GOLDEN = Manifests.PROJECT.resolve("src/test/resources/helm");
  /** Labels Helm's objects carry besides the kustomize base's (which they carry too). */
  private static final List<String> HELM_LABELS =
      List.of("app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by", "helm.sh/chart");
  private static final Map<String, Object> MONITORING =
      Map.of("serviceMonitor.enabled", true, "prometheusRule.enabled", true, "grafanaDashboard.enabled", true);

  @Test
  void helmLintsTheChartClean() {
    LintResult lint = Chart.lint();
    assertThat(lint.isFailed()).as(lint.getMessages().toString()).isFalse();
    // Strict: no warning. Helm's one remark is that a chart may have an icon (Podsweeper has none).
    assertThat(lint.getMessages()).containsExactly("[INFO] Chart.yaml: icon is recommended");
  }

  @Test
  void defaultValuesRenderTheGoldenFile() throws IOException {
    assertGolden("default.yaml", Chart.template("podsweeper", "podsweeper", null, Map.of()));
  }

  @Test
  void everyValueSetRendersTheGoldenFile() throws IOException {
    assertGolden("full.yaml", Chart.template("sweeper", "ops", GOLDEN.resolve("full-values.yaml"), Map.of()));
  }

  /**
   * With its defaults (and monitoring on), the chart renders every object of the kustomize base and of
   * {@code manifests/monitoring/}, field for field, less the Namespace (Helm installs into one) and the CRDs (Helm
   * installs {@code crds/} itself: the same files). It may add labels, never drop or change one.
   */
  @Test
  void defaultValuesRenderTheKustomizeBase() throws Exception {
    Map<String, ObjectNode> kustomized = byKey(Manifests.kustomize(Manifests.BASE) + "\n---\n" + Manifests.kustomize(Manifests.BASE.resolve("monitoring")));
    assertThat(kustomized.remove("Namespace//podsweeper")).isNotNull();
    kustomized.keySet().removeIf(key -> key.startsWith("CustomResourceDefinition/"));
    Map<String, ObjectNode> charted = byKey(Chart.template("podsweeper", "podsweeper", null, MONITORING));

    assertRendersAsKustomized(charted, kustomized);
  }

  /** {@code rbac.freeNodes} renders the free-nodes add-on ({@code manifests/free-nodes/}) as kustomize does; off, nothing of it. */
  @Test
  void freeNodesRendersTheAddOn() throws Exception {
    Map<String, ObjectNode> addOn = byKey(Manifests.kustomize(Manifests.BASE.resolve("free-nodes")));
    Map<String, ObjectNode> base = byKey(Chart.template("podsweeper", "podsweeper", null, Map.of()));
    Map<String, ObjectNode> charted = byKey(Chart.template("podsweeper", "podsweeper", null, Map.of("rbac.freeNodes", true)));

    assertThat(addOn).hasSize(2);
    assertThat(base.keySet()).doesNotContainAnyElementsOf(addOn.keySet());
    charted.keySet().retainAll(addOn.keySet());
    assertRendersAsKustomized(charted, addOn);
  }

  /** The same objects, field for field; the chart may add labels and annotations, never drop or change one. */
  private static void assertRendersAsKustomized(Map<String, ObjectNode> charted, Map<String, ObjectNode> kustomized) {
    assertThat(charted.keySet()).containsExactlyInAnyOrderElementsOf(kustomized.keySet());
    for (String key : kustomized.keySet()) {
      ObjectNode chart = charted.get(key);
      ObjectNode kustomize = kustomized.get(key);
      for (String field : List.of("labels", "annotations")) {
        JsonNode ours = chart.path("metadata").path(field);
        kustomize.path("metadata").path(field).fields().forEachRemaining(e ->
            assertThat(ours.path(e.getKey())).as(key + " metadata." + field + "." + e.getKey()).isEqualTo(e.getValue()));
        ((ObjectNode) chart.get("metadata")).remove(field);
        ((ObjectNode) kustomize.get("metadata")).remove(field);
      }
      assertThat(chart).as(key).isEqualTo(kustomize);
    }
  }

  @Test
  void theChartsCrdsAreTheBases() throws IOException {
    try (Stream<Path> crds = Files.list(Manifests.BASE.resolve("crds"))) {
      List<Path> files = crds.toList();
      assertThat(files).hasSize(2);
      for (Path file : files) {
        assertThat(Chart.DIR.resolve("crds").resolve(file.getFileName())).as("cp %s %s", file, Chart.DIR.resolve("crds"))
            .hasSameTextualContentAs(file);
      }
    }
  }

  /**
   * The default policy is the install step's, word for word (created once; a hook in the chart, which helm-java's
   * template does not print: ChartIT sees it installed).
   */
  @Test
  void theChartsDefaultPolicyIsTheInstallSteps() throws IOException {
    JsonNode installed = YAML.readTree(Manifests.INSTALL.resolve("policy-configmap.yaml").toFile());
    assertThat(Chart.DIR.resolve("files/policy.yaml")).hasContent(installed.path("data").path("policy.yaml").asText());
    assertThat(YAML.readTree(Chart.DIR.resolve("values.yaml").toFile()).get("policy")).isEmpty();
  }

  /** The objects of a YAML stream by kind, namespace and name. */
  private static Map<String, ObjectNode> byKey(String stream) throws IOException {
    Map<String, ObjectNode> objects = new TreeMap<>();
    try (var parser = YAML.createParser(stream)) {
      Iterator<JsonNode> documents = YAML.readValues(parser, JsonNode.class);
      while (documents.hasNext()) {
        JsonNode object = documents.next();
        if (object == null || object.isMissingNode() || object.isEmpty()) {
          continue;
        }
        JsonNode metadata = object.path("metadata");
        String key = object.path("kind").asText() + "/" + metadata.path("namespace").asText() + "/" + metadata.path("name").asText();
        assertThat(objects.put(key, (ObjectNode) object)).as("twice: " + key).isNull();
      }
    }
    return objects;
  }

  private static void assertGolden(String name, String rendered) throws IOException {
    Path golden = GOLDEN.resolve(name);
    if ("update".equals(System.getProperty("podsweeper.golden"))) {
      Files.writeString(golden, rendered);
    }
    assertThat(rendered).as("%s differs from `helm template`: after a deliberate change, run"
        + " mvn -B -q test -Dtest=ChartTest -Dpodsweeper.golden=update and review the diff", golden).isEqualTo(Files.readString(golden));
  }
}
