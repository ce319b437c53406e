package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** The lease timings of {@code run}: upstream's flag names, defaults from Leadership.Timing.DEFAULT, refused before any connection. */
class LeaderElectionFlagsTest {
  @Test
  void theDefaultsAreTheLeadershipDefaults() {
    CommandLine.Model.CommandSpec run = new CommandLine(new RunCommand()).getCommandSpec();
    assertThat(run.findOption("--leader-elect-lease-duration").defaultValueString()).isEqualTo("15s");
    assertThat(run.findOption("--leader-elect-renew-deadline").defaultValueString()).isEqualTo("10s");
    assertThat(run.findOption("--leader-elect-retry-period").defaultValueString()).isEqualTo("2s");
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(delimiter = '|', value = {
      "--leader-elect-lease-duration | 0s   | --leader-elect-lease-duration: must be a positive duration such as 15s or 1m30s, got \"0s\"",
      "--leader-elect-lease-duration | soon | --leader-elect-lease-duration: must be a positive duration",
      "--leader-elect-lease-duration | 1s   | --leader-elect-lease-duration: must be whole seconds and at least 2s",
      "--leader-elect-lease-duration | 4500ms | --leader-elect-lease-duration: must be whole seconds",
      "--leader-elect-renew-deadline | 15s  | --leader-elect-renew-deadline: must be shorter than --leader-elect-lease-duration 15s, got 15s",
      "--leader-elect-retry-period   | 5s   | --leader-elect-retry-period: must be shorter than --leader-elect-renew-deadline 10s divided by 2.2",
      "--leader-elect-retry-period   | -2s  | --leader-elect-retry-period: must be a positive duration"})
  void badTimingsAreRefusedWithTheFlagsName(String flag, String value, String message) {
    CliRun run = CliRun.of("run", "--policy", "config/policy.yaml", "--leader-elect", "--namespace", "podsweeper",
        "--kubeconfig", "/no/such/kubeconfig", flag, value);
    assertThat(run.exitCode()).as(run.err()).isEqualTo(Main.BAD_INPUT);
    assertThat(run.err()).startsWith("error: " + message).doesNotContain("Exception");
  }
}
