package io.podsweeper.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** MakeRoom's args: read with their defaults, every bad value refused at its place, and only in Podsweeper's own format. */
class MakeRoomPolicyTest {
  private static String policy(String apiVersion, String args) {
    return "apiVersion: " + apiVersion + "\nkind: " + (apiVersion.startsWith("podsweeper") ? "PodSweeperPolicy" : "DeschedulerPolicy") + "\n"
        + "profiles:\n- name: p\n  pluginConfig:\n  - name: MakeRoom\n    args: " + args + "\n"
        + "  plugins:\n    balance:\n      enabled: [MakeRoom]\n";
  }

  private static MakeRoomArgs read(String args) {
    return (MakeRoomArgs) PolicyLoader.parse(policy("podsweeper.io/v1alpha1", args), "p.yaml").profiles().get(0).balance().get(0);
  }

  @Test
  void defaultsAndEveryArgument() {
    assertThat(read("{}")).isEqualTo(new MakeRoomArgs(Duration.ofMinutes(5), NamespaceFilter.ALL, LabelSelector.EVERYTHING, 3, 5,
        Optional.empty(), Duration.ofMinutes(10)));
    MakeRoomArgs full = read("{pendingFor: 90s, namespaces: {include: [shop]}, labelSelector: {matchLabels: {app: cache}},"
        + " maxMovesPerPlan: 2, maxPlans: 7, freeNodes: {thresholds: {cpu: 20, memory: 30.5}, maxNodes: 2, maxMovesPerNode: 12, keepEmptyFor: 30m}, planTimeout: 3m}");
    assertThat(full).isEqualTo(new MakeRoomArgs(Duration.ofSeconds(90), new NamespaceFilter(java.util.List.of("shop"), java.util.List.of()),
        new LabelSelector(Map.of("app", "cache"), java.util.List.of()), 2, 7,
        Optional.of(new MakeRoomArgs.FreeNodes(Map.of("cpu", 20.0, "memory", 30.5), 2, 12, Duration.ofMinutes(30))), Duration.ofMinutes(3)));
    assertThat(read("{freeNodes: {thresholds: {cpu: 20}}}").freeNodes()).hasValue(new MakeRoomArgs.FreeNodes(Map.of("cpu", 20.0), 1, 10, Duration.ofMinutes(15)));
  }

  @ParameterizedTest(name = "{1}")
  @CsvSource(delimiter = '|', value = {
    "{pendingFor: -5m} | profiles[0].pluginConfig[0].args.pendingFor: invalid duration \"-5m\"",
    "{pendingFor: soon} | profiles[0].pluginConfig[0].args.pendingFor: invalid duration \"soon\"",
    "{maxMovesPerPlan: 0} | profiles[0].pluginConfig[0].args.maxMovesPerPlan: must be between 1 and 10, got 0",
    "{maxMovesPerPlan: 11} | profiles[0].pluginConfig[0].args.maxMovesPerPlan: must be between 1 and 10, got 11",
    "{maxPlans: 101} | profiles[0].pluginConfig[0].args.maxPlans: must be between 1 and 100, got 101",
    "{planTimeout: 0s} | profiles[0].pluginConfig[0].args.planTimeout: must be more than 0s",
    "{planTimeout: later} | profiles[0].pluginConfig[0].args.planTimeout: invalid duration \"later\"",
    "{maxMoves: 3} | profiles[0].pluginConfig[0].args.maxMoves: unknown field",
    "{namespaces: {include: [a], exclude: [b]}} | profiles[0].pluginConfig[0].args.namespaces: only one of Include/Exclude",
    "{labelSelector: {matchLabels: {\"bad key!\": x}}} | invalid label key \"bad key!\"",
    "{freeNodes: {}} | profiles[0].pluginConfig[0].args.freeNodes.thresholds: thresholds config is not valid: no resource threshold",
    "{freeNodes: {thresholds: {cpu: 120}}} | profiles[0].pluginConfig[0].args.freeNodes.thresholds.cpu: thresholds config is not valid",
    "{freeNodes: {thresholds: {cpus: 20}}} | profiles[0].pluginConfig[0].args.freeNodes.thresholds.cpus: unknown resource \"cpus\"",
    "{freeNodes: {thresholds: {cpu: 20}, maxNodes: 0}} | profiles[0].pluginConfig[0].args.freeNodes.maxNodes: must be between 1 and 100",
    "{freeNodes: {thresholds: {cpu: 20}, maxMovesPerNode: 51}} | profiles[0].pluginConfig[0].args.freeNodes.maxMovesPerNode: must be between 1 and 50",
    "{freeNodes: {thresholds: {cpu: 20}, nodes: 1}} | profiles[0].pluginConfig[0].args.freeNodes.nodes: unknown field",
    "{freeNodes: {thresholds: {cpu: 20}, keepEmptyFor: 0s}} | profiles[0].pluginConfig[0].args.freeNodes.keepEmptyFor: must be more than 0s and at most 24h",
    "{freeNodes: {thresholds: {cpu: 20}, keepEmptyFor: 25h}} | profiles[0].pluginConfig[0].args.freeNodes.keepEmptyFor: must be more than 0s and at most 24h",
  })
  void badArgumentsAreRefusedAtTheirPlace(String args, String message) {
    assertThatThrownBy(() -> read(args)).isInstanceOf(PolicyException.class).hasMessageContaining(message);
  }

  @Test
  void onlyPodsweepersOwnFormatNamesIt() {
    assertThatThrownBy(() -> PolicyLoader.parse(policy("descheduler/v1alpha2", "{}"), "p.yaml")).isInstanceOf(PolicyException.class)
        .hasMessageContaining("profiles[0].pluginConfig[0].name: MakeRoom is Podsweeper's own plugin, not the descheduler's");
    String koordinator = """
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerConfiguration
        profiles:
        - name: k
          plugins: {balance: {enabled: [{name: MakeRoom}]}}
          pluginConfig: [{name: MakeRoom, args: {}}]
        """;
    assertThatThrownBy(() -> PolicyLoader.parse(koordinator, "k.yaml")).isInstanceOf(PolicyException.class)
        .hasMessageContaining("MakeRoom is Podsweeper's own plugin, not Koordinator's");
    assertThatThrownBy(() -> PolicyLoader.parse(policy("podsweeper.io/v1alpha1", "{}").replace("balance:", "deschedule:"), "p.yaml"))
        .isInstanceOf(PolicyException.class).hasMessageContaining("MakeRoom is a balance plugin, not a deschedule plugin");
  }

  /** Converted, a policy with MakeRoom reads back the same, defaults written out. */
  @Test
  void convertsToTheSame() {
    Policy original = PolicyLoader.parse(policy("podsweeper.io/v1alpha1",
        "{pendingFor: 2m, namespaces: {exclude: [kube-system]}, freeNodes: {thresholds: {cpu: 25}}}"), "p.yaml");
    String written = NativePolicyWriter.write(original);
    assertThat(PolicyLoader.parse(written, "converted").profiles()).isEqualTo(original.profiles());
    assertThat(written).contains("maxMovesPerPlan: 3").contains("pendingFor: 120s");
  }
}
