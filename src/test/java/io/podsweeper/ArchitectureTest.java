package io.podsweeper;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The decision core imports no Kubernetes client, HTTP server, metrics library or cache: Kubernetes I/O stays at the edges. */
class ArchitectureTest {
  private static final JavaClasses MAIN =
      new ClassFileImporter().withImportOption(new ImportOption.DoNotIncludeTests()).importPackages("io.podsweeper");

  @Test
  void decisionCoreIsPure() {
    noClasses().that().resideInAnyPackage("io.podsweeper.policy..", "io.podsweeper.cluster..", "io.podsweeper.strategy..",
            "io.podsweeper.safety..")
        .should().dependOnClassesThat().resideInAnyPackage("io.fabric8..", "io.vertx..", "io.prometheus..",
            "com.github.benmanes.caffeine..", "io.podsweeper.kube..", "io.podsweeper.engine..", "io.podsweeper.http..",
            "io.podsweeper.metrics..", "io.podsweeper.cli..")
        .check(MAIN);
  }
}
