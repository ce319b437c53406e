package io.podsweeper.policy;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * A budget for finished pods (README "Finished-pod budget"): at most {@code maxPods} pods of the named {@code phases}
 * in the cluster (the policy file's), or in one namespace (a PodCleanupPolicy's). Over it, the oldest finished pods go
 * first, from the namespaces furthest over their fair share; never one younger than {@code minRetention} since it
 * finished, nor one a protection or a rule's keepLast keeps.
 *
 * @param name who set it, for decisions and metrics: {@value #CLUSTER} for the policy file's, the PodCleanupPolicy's
 *     profile name ({@code PodCleanupPolicy <namespace>/<name>}) for a tenant's
 * @param namespace empty for the cluster's budget; the namespace a tenant's budget caps
 * @param maxPodsPerNamespace the cluster's cap on any one namespace (a tenant's budget has none: it is one)
 * @param phases Succeeded and/or Failed: the explicit opt-in, as for every finished-pod rule
 */
public record FinishedPodBudget(
    String name, Optional<String> namespace, int maxPods, OptionalInt maxPodsPerNamespace, Duration minRetention, Set<PodState> phases) {
  /** The name of the policy file's budget, and the field that sets it. */
  public static final String CLUSTER = "finishedPodBudget";
  public static final Duration DEFAULT_MIN_RETENTION = Duration.ofMinutes(10);
  static final int MAX_PODS = 10_000_000;
  private static final Set<PodState> FINISHED_PHASES = EnumSet.of(PodState.SUCCEEDED, PodState.FAILED);

  public FinishedPodBudget {
    phases = Set.copyOf(phases);
  }

  /** The rule of its decisions: the field's name, after the PodCleanupPolicy's for a tenant's (as its rules are named). */
  public String rule() {
    return namespace.isEmpty() ? CLUSTER : name.substring(name.lastIndexOf('/') + 1) + "/" + CLUSTER;
  }

  /** The same budget held no shorter than {@code minimum} (a tenant's, under the cluster's). */
  public FinishedPodBudget withMinRetentionAtLeast(Duration minimum) {
    return minRetention.compareTo(minimum) >= 0 ? this
        : new FinishedPodBudget(name, namespace, maxPods, maxPodsPerNamespace, minimum, phases);
  }

  /** The policy file's {@code finishedPodBudget}. */
  static FinishedPodBudget readCluster(ConfigNode node) {
    node.requireObject(Set.of("maxPods", "maxPodsPerNamespace", "minRetention", "phases"));
    int max = maxPods(node);
    OptionalInt perNamespace = node.optionalInt("maxPodsPerNamespace", 0, MAX_PODS);
    if (perNamespace.isPresent() && perNamespace.getAsInt() >= max) {
      throw node.child("maxPodsPerNamespace").error(perNamespace.getAsInt() + " is not below maxPods " + max
          + ": no namespace could reach it before the cluster's budget; leave it out or lower it");
    }
    return new FinishedPodBudget(CLUSTER, Optional.empty(), max, perNamespace,
        node.optionalDuration("minRetention").orElse(DEFAULT_MIN_RETENTION), phases(node));
  }

  /**
   * A PodCleanupPolicy's {@code spec.finishedPodBudget}: a cap on its own namespace, with the cluster's minMaxAge as
   * the default retention (the guard rails are checked by {@link CleanupPolicies}).
   */
  static FinishedPodBudget readNamespaced(ConfigNode node, String policyName, String namespace, Duration defaultRetention) {
    node.requireObject(Set.of("maxPods", "minRetention", "phases"));
    return new FinishedPodBudget(policyName, Optional.of(namespace), maxPods(node), OptionalInt.empty(),
        node.optionalDuration("minRetention").orElse(defaultRetention), phases(node));
  }

  private static int maxPods(ConfigNode node) {
    if (!node.has("maxPods")) {
      throw node.child("maxPods").error("is required: the most finished pods to keep");
    }
    return node.optionalInt("maxPods", 0, MAX_PODS).getAsInt();
  }

  /** The phases, named explicitly: a budget removes no finished pod of a phase it does not name. */
  private static Set<PodState> phases(ConfigNode node) {
    List<ConfigNode> items = node.list("phases");
    if (items.isEmpty()) {
      throw node.child("phases").error("name the finished phases the budget counts and may remove (Succeeded, Failed):"
          + " it removes none by default");
    }
    Set<PodState> phases = EnumSet.noneOf(PodState.class);
    for (ConfigNode item : items) {
      String name = item.string();
      PodState phase = PodState.parse(name).filter(FINISHED_PHASES::contains)
          .orElseThrow(() -> item.error("\"" + name + "\" is not a finished phase (Succeeded or Failed)"));
      if (!phases.add(phase)) {
        throw item.error("duplicate phase \"" + name + "\"");
      }
    }
    return phases;
  }
}
