package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.metrics.Metrics;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.testing.LogLines;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyWatcherTest {
  private static final String VALID = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      rules: [{name: r, states: [Failed]}]
      """;

  private final Metrics metrics = new Metrics();
  private final List<Policy> applied = new CopyOnWriteArrayList<>();
  private final List<String> rejected = new CopyOnWriteArrayList<>();

  private double reloads(String result) {
    return metrics.policyReloads.labels(result).get();
  }

  /**
   * A file of the wrong shape (here a v1alpha1 list given as a string, which once escaped as an
   * UnsupportedOperationException and ended the reload timer) is rejected with a message naming the field, and the
   * next edit still applies.
   */
  @Test
  void aFileOfTheWrongShapeIsRejectedAndTheNextEditApplies(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, VALID);
    PolicyWatcher watcher = new PolicyWatcher(file, PolicyLoader.load(file), UnaryOperator.identity(), applied::add, rejected::add, metrics);

    Files.writeString(file, """
        apiVersion: descheduler/v1alpha1
        kind: DeschedulerPolicy
        strategies:
          PodLifeTime:
            enabled: true
            params:
              podLifeTime: {maxPodLifeTimeSeconds: 86400, podStatusPhases: Pending}
        """);
    watcher.check();

    assertThat(applied).isEmpty();
    assertThat(rejected).singleElement().asString().contains("podStatusPhases: must be a list");
    assertThat(reloads("rejected")).isEqualTo(1.0);

    Files.writeString(file, VALID.replace("name: r", "name: fixed"));
    watcher.check();
    assertThat(applied).hasSize(1);
  }

  /** A reload says what changed (issue 41: "reloaded: 1 profile(s)" hid that dry-run was turned off). */
  @Test
  void aReloadSaysWhatChanged(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        dryRun: true
        limits: {perSecond: 10}
        rules:
          - {name: failed, states: [Failed], maxAgeAfterFinish: 1h}
          - {name: crashloop, states: [CrashLoopBackOff], maxAge: 1h}
        """);
    PolicyWatcher watcher = new PolicyWatcher(file, PolicyLoader.load(file), UnaryOperator.identity(), applied::add, rejected::add, metrics);
    try (LogLines lines = LogLines.of(PolicyWatcher.class)) {
      Files.writeString(file, """
          apiVersion: podsweeper.io/v1alpha1
          kind: PodSweeperPolicy
          dryRun: false
          limits: {perSecond: 2}
          rules:
            - {name: failed, states: [Failed], maxAgeAfterFinish: 2h}
            - {name: succeeded, states: [Succeeded], maxAgeAfterFinish: 1h}
          """);
      watcher.check();
      Files.writeString(file, Files.readString(file) + "# a comment\n");
      watcher.check();
      assertThat(lines.events()).extracting(ILoggingEvent::getFormattedMessage).containsExactly(
          "policy " + file + " reloaded: dry-run off; rule failed changed; rule succeeded added; rule crashloop removed; limits: perSecond 10.0 -> 2.0",
          "policy " + file + " reloaded: nothing that acts changed");
    }
  }
}
