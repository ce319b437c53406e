package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Taint;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.safety.RemovalBudget;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** Test helpers: a one-profile upstream policy around some plugins, nodes, and a pass over a snapshot. */
final class Passes {
  static final Instant NOW = Instant.parse("2026-01-02T00:00:00Z");

  private Passes() {}

  /** A v1alpha2 policy with one profile: {@code plugins} and {@code configs} are YAML fragments at profile level. */
  static PolicyEvaluator policy(String evictorArgs, String point, String plugin, String args) {
    return policy("", evictorArgs, point, plugin, args);
  }

  static PolicyEvaluator policy(String topLevel, String evictorArgs, String point, String plugin, String args) {
    return new PolicyEvaluator(PolicyLoader.parse("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n" + topLevel
        + profile(evictorArgs, point, plugin, args), "test"));
  }

  /** The same one-profile policy in Podsweeper's own format, which takes Koordinator's plugins too. */
  static PolicyEvaluator nativePolicy(String evictorArgs, String point, String plugin, String args) {
    return nativePolicy("", evictorArgs, point, plugin, args);
  }

  static PolicyEvaluator nativePolicy(String topLevel, String evictorArgs, String point, String plugin, String args) {
    return new PolicyEvaluator(PolicyLoader.parse("apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n" + topLevel
        + profile(evictorArgs, point, plugin, args), "test"));
  }

  private static String profile(String evictorArgs, String point, String plugin, String args) {
    return "profiles:\n- name: p\n"
        + "  pluginConfig:\n  - name: DefaultEvictor\n    args: " + evictorArgs + "\n"
        + "  - name: " + plugin + "\n    args: " + args + "\n"
        + "  plugins:\n    " + point + ":\n      enabled: [" + plugin + "]\n";
  }

  static PassResult run(PolicyEvaluator e, List<NodeRecord> nodes, PodRecord... pods) {
    return run(e, List.of(), nodes, pods);
  }

  /** A pass over nodes with measured usage (for LowNodeLoad). */
  static PassResult run(PolicyEvaluator e, List<NodeUsage> usage, List<NodeRecord> nodes, PodRecord... pods) {
    return runAt(e, NOW, usage, nodes, pods);
  }

  static PassResult runAt(PolicyEvaluator e, Instant at, List<NodeUsage> usage, List<NodeRecord> nodes, PodRecord... pods) {
    ClusterSnapshot snapshot = ClusterSnapshot.of(List.of(pods), List.of(), nodes).withNodeUsage(usage);
    return e.pass(snapshot, at, new RemovalBudget(e.policy().limits()), true);
  }

  static List<String> evicted(PassResult r) {
    return r.decisions().stream().map(Decision::name).toList();
  }

  static NodeRecord node(String name, Map<String, String> labels, List<Taint> taints) {
    return new NodeRecord(name, labels, true, false, taints, Map.of("cpu", 4000L, "memory", 16L << 30, "pods", 110L));
  }

  static NodeRecord node(String name) {
    return node(name, Map.of("kubernetes.io/hostname", name), List.of());
  }

  static NodeRecord sized(String name, long cpuMillis, long pods, boolean unschedulable) {
    return new NodeRecord(name, Map.of(), true, unschedulable, List.of(), Map.of("cpu", cpuMillis, "memory", 1L << 40, "pods", pods));
  }
}
