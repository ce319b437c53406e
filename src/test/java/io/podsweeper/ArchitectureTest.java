package io.podsweeper;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The packages show the architecture: the decision core is pure, the removal path and the scheduler own the ports they
 * need (no Kubernetes client in them), the adapters and the composition root sit on top, and no package depends on
 * another that depends back on it.
 */
class ArchitectureTest {
  private static final JavaClasses MAIN =
      new ClassFileImporter().withImportOption(new ImportOption.DoNotIncludeTests()).importPackages("io.podsweeper");

  @Test
  void decisionCoreIsPure() {
    noClasses().that().resideInAnyPackage("io.podsweeper.policy..", "io.podsweeper.cluster..", "io.podsweeper.strategy..",
            "io.podsweeper.safety..")
        .should().dependOnClassesThat().resideInAnyPackage("io.fabric8..", "io.vertx..", "io.prometheus..",
            "com.github.benmanes.caffeine..", "io.podsweeper.kube..", "io.podsweeper.engine..", "io.podsweeper.http..",
            "io.podsweeper.metrics..", "io.podsweeper.cli..", "io.podsweeper.removal..", "io.podsweeper.app..",
            "io.podsweeper.migration..")
        .check(MAIN);
  }

  @Test
  void theRemovalPathAndTheSchedulerTalkToKubernetesOnlyThroughTheirPorts() {
    noClasses().that().resideInAnyPackage("io.podsweeper.removal..", "io.podsweeper.engine..")
        .should().dependOnClassesThat().resideInAnyPackage("io.fabric8..", "io.vertx..", "io.podsweeper.kube..",
            "io.podsweeper.http..", "io.podsweeper.migration..", "io.podsweeper.app..", "io.podsweeper.cli..")
        .check(MAIN);
  }

  @Test
  void layers() {
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("cli").definedBy("io.podsweeper.cli..")
        .layer("app").definedBy("io.podsweeper.app..")
        .layer("adapters").definedBy("io.podsweeper.kube..", "io.podsweeper.http..", "io.podsweeper.migration..")
        .layer("engine").definedBy("io.podsweeper.engine..")
        .layer("removal").definedBy("io.podsweeper.removal..")
        .layer("core").definedBy("io.podsweeper.policy..", "io.podsweeper.cluster..", "io.podsweeper.strategy..",
            "io.podsweeper.safety..")
        .layer("metrics").definedBy("io.podsweeper.metrics..")
        .whereLayer("cli").mayNotBeAccessedByAnyLayer()
        .whereLayer("app").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("adapters").mayOnlyBeAccessedByLayers("app", "cli", "adapters")
        .whereLayer("engine").mayOnlyBeAccessedByLayers("app", "adapters")
        .whereLayer("removal").mayOnlyBeAccessedByLayers("engine", "app", "adapters")
        .whereLayer("core").mayOnlyBeAccessedByLayers("removal", "engine", "app", "adapters", "cli")
        .check(MAIN);
  }

  @Test
  void noPackageDependsOnAnotherThatDependsBackOnIt() {
    slices().matching("io.podsweeper.(*)..").should().beFreeOfCycles().check(MAIN);
  }
}
