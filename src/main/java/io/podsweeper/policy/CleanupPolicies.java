package io.podsweeper.policy;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Namespace-scoped cleanup policies (the {@code PodCleanupPolicy} and {@code ClusterPodCleanupPolicy} custom
 * resources, see README "Namespace-scoped policies"): reading their specs, judging each namespaced policy against the
 * rule language and the cluster's guard rails, and composing the accepted ones with the file policy. A policy is
 * accepted whole or rejected whole, with a reason; nothing here talks to the cluster.
 */
public final class CleanupPolicies {
  /** The one ClusterPodCleanupPolicy that is read; without it every namespaced policy is rejected. */
  public static final String CLUSTER_POLICY_NAME = "default";
  public static final Duration DEFAULT_MIN_MAX_AGE = Duration.ofHours(1);
  /**
   * Every PodCleanupPolicy is judged on each reconcile, so these bound what one namespace can make Podsweeper do:
   * at most 20 × 50 rules by default. The CRD caps rules at {@value #MAX_RULES_PER_POLICY} whatever the rails say.
   */
  public static final int DEFAULT_MAX_POLICIES_PER_NAMESPACE = 20;
  public static final int DEFAULT_MAX_RULES_PER_POLICY = 50;
  static final int MAX_RULES_PER_POLICY = 100;
  static final int MAX_POLICIES_PER_NAMESPACE = 1000;
  private static final String NO_CLUSTER_POLICY = "NoClusterPolicy";

  private CleanupPolicies() {}

  /**
   * What the admin allows namespaced policies.
   *
   * @param minMaxAge the shortest maxAge or maxAgeAfterFinish a namespaced rule may set (every rule must set one)
   * @param allowTerminated whether namespaced rules may name terminal states (and so touch finished pods) at all
   * @param maxRemovalsPerHourPerNamespace removals by namespaced policies in one namespace over the last hour
   * @param maxPoliciesPerNamespace policies judged per namespace, oldest first; later ones are rejected unread
   * @param maxRulesPerPolicy rules one policy may hold; a policy with more is rejected unread
   * @param allowedNamespaces namespaces whose policies are considered; others are rejected
   */
  public record GuardRails(Duration minMaxAge, boolean allowTerminated, OptionalInt maxRemovalsPerHourPerNamespace,
      int maxPoliciesPerNamespace, int maxRulesPerPolicy, NamespaceFilter allowedNamespaces) {}

  /** The status a policy gets: accepted, or rejected with a reason (a CamelCase word) and a message. */
  public record Outcome(boolean accepted, String reason, String message) {
    static Outcome rejected(String reason, String message) {
      return new Outcome(false, reason, message);
    }
  }

  /** The guard rails in force (empty when the cluster policy is missing or invalid), and the cluster policy's status. */
  public record ClusterRails(Optional<GuardRails> rails, Outcome outcome) {}

  /** A PodCleanupPolicy as found in the cluster; {@code spec} may be null. */
  public record Source(String namespace, String name, JsonNode spec) {}

  /**
   * The judgement of one PodCleanupPolicy; an accepted one carries the profile it adds (its rules, maybe none), and
   * the cap it puts on its namespace's finished pods, if it sets one.
   */
  public record Verdict(Source source, Outcome outcome, Optional<Profile> profile, Optional<FinishedPodBudget> budget) {}

  /** Reads the spec of ClusterPodCleanupPolicy {@value #CLUSTER_POLICY_NAME}; empty: it does not exist. */
  public static ClusterRails clusterRails(Optional<JsonNode> spec) {
    if (spec.isEmpty()) {
      return new ClusterRails(Optional.empty(), Outcome.rejected(NO_CLUSTER_POLICY,
          "namespaced policies are off until the admin creates ClusterPodCleanupPolicy \"" + CLUSTER_POLICY_NAME + "\""));
    }
    try {
      GuardRails rails = guardRails(new ConfigNode(spec.get(), "spec"));
      String message = "guard rails in force: minMaxAge " + Durations.format(rails.minMaxAge()) + ", allowTerminated "
          + rails.allowTerminated()
          + (rails.maxRemovalsPerHourPerNamespace().isPresent()
              ? ", maxRemovalsPerHourPerNamespace " + rails.maxRemovalsPerHourPerNamespace().getAsInt() : "")
          + ", maxPoliciesPerNamespace " + rails.maxPoliciesPerNamespace() + ", maxRulesPerPolicy " + rails.maxRulesPerPolicy();
      return new ClusterRails(Optional.of(rails), new Outcome(true, "Accepted", message));
    } catch (PolicyException e) {
      return new ClusterRails(Optional.empty(), Outcome.rejected("InvalidSpec", e.getMessage()));
    }
  }

  private static GuardRails guardRails(ConfigNode spec) {
    spec.requireObjectOrAbsent(Set.of("minMaxAge", "allowTerminated", "maxRemovalsPerHourPerNamespace", "maxPoliciesPerNamespace",
        "maxRulesPerPolicy", "allowedNamespaces"));
    return new GuardRails(
        spec.optionalDuration("minMaxAge").orElse(DEFAULT_MIN_MAX_AGE),
        spec.bool("allowTerminated", false),
        spec.optionalInt("maxRemovalsPerHourPerNamespace", 0, Integer.MAX_VALUE),
        spec.optionalInt("maxPoliciesPerNamespace", 1, MAX_POLICIES_PER_NAMESPACE).orElse(DEFAULT_MAX_POLICIES_PER_NAMESPACE),
        spec.optionalInt("maxRulesPerPolicy", 1, MAX_RULES_PER_POLICY).orElse(DEFAULT_MAX_RULES_PER_POLICY),
        spec.has("allowedNamespaces") ? NativePolicyFormat.namespaces(spec.child("allowedNamespaces")) : NamespaceFilter.ALL);
  }

  /**
   * Judges every PodCleanupPolicy, given oldest first: in each namespace the first {@code maxPoliciesPerNamespace} as
   * {@link #judge}, the rest rejected unread, so a namespace's new policy never displaces one already in force. A
   * namespace has one finished-pod budget: that of its oldest accepted policy setting one; a newer one setting another
   * is rejected ({@code TooManyBudgets}).
   */
  public static List<Verdict> judgeAll(List<Source> oldestFirst, ClusterRails cluster) {
    return judgeAll(oldestFirst, cluster, policy -> judge(policy, cluster));
  }

  /** As {@link #judgeAll(List, ClusterRails)}, each policy judged alone by {@code judge} (e.g. {@link Judgements}). */
  static List<Verdict> judgeAll(List<Source> oldestFirst, ClusterRails cluster, Function<Source, Verdict> judge) {
    int maxPerNamespace = cluster.rails().map(GuardRails::maxPoliciesPerNamespace).orElse(Integer.MAX_VALUE);
    Map<String, Integer> seen = new HashMap<>();
    Map<String, String> budgetSetBy = new HashMap<>();
    List<Verdict> verdicts = new ArrayList<>(oldestFirst.size());
    for (Source policy : oldestFirst) {
      Verdict verdict = seen.merge(policy.namespace(), 1, Integer::sum) > maxPerNamespace
          ? rejected(policy, "TooManyPolicies", "namespace " + policy.namespace() + " has more than " + maxPerNamespace
              + " PodCleanupPolicy objects (the cluster's maxPoliciesPerNamespace); only the oldest are considered")
          : judge.apply(policy);
      if (verdict.budget().isPresent()) {
        String first = budgetSetBy.putIfAbsent(policy.namespace(), policy.name());
        if (first != null) {
          verdict = rejected(policy, "TooManyBudgets", "spec." + FinishedPodBudget.CLUSTER + ": namespace " + policy.namespace()
              + " has one already, in PodCleanupPolicy " + first + " (one per namespace: the oldest policy's counts)");
        }
      }
      verdicts.add(verdict);
    }
    return verdicts;
  }

  /** Judges one PodCleanupPolicy: the rule language first, then the guard rails; accepted whole or not at all. */
  public static Verdict judge(Source policy, ClusterRails cluster) {
    if (cluster.rails().isEmpty()) {
      Outcome why = cluster.outcome();
      return why.reason().equals(NO_CLUSTER_POLICY) ? rejected(policy, NO_CLUSTER_POLICY, why.message())
          : rejected(policy, "ClusterPolicyInvalid", "ClusterPodCleanupPolicy \"" + CLUSTER_POLICY_NAME + "\" is invalid: " + why.message());
    }
    GuardRails rails = cluster.rails().get();
    if (!rails.allowedNamespaces().matches(policy.namespace())) {
      return rejected(policy, "NamespaceNotAllowed",
          "namespace " + policy.namespace() + " is not in the allowedNamespaces of ClusterPodCleanupPolicy \"" + CLUSTER_POLICY_NAME + "\"");
    }
    int ruleCount = ruleCount(policy);
    if (ruleCount > rails.maxRulesPerPolicy()) {
      return rejected(policy, "TooManyRules", "spec.rules: " + ruleCount + " rules, more than the cluster's maxRulesPerPolicy "
          + rails.maxRulesPerPolicy());
    }
    ConfigNode spec = new ConfigNode(policy.spec(), "spec");
    List<Rule> rules;
    Optional<FinishedPodBudget> budget;
    try {
      rules = rules(policy, spec);
      budget = spec.has(FinishedPodBudget.CLUSTER) ? Optional.of(FinishedPodBudget.readNamespaced(spec.child(FinishedPodBudget.CLUSTER),
          profileName(policy), policy.namespace(), rails.minMaxAge())) : Optional.empty();
    } catch (PolicyException e) {
      return rejected(policy, "InvalidSpec", e.getMessage());
    }
    try {
      checkGuardRails(spec.list("rules"), rules, rails);
      if (budget.isPresent()) {
        checkGuardRails(spec.child(FinishedPodBudget.CLUSTER), budget.get(), rails);
      }
    } catch (PolicyException e) {
      return rejected(policy, "ExceedsGuardRails", e.getMessage());
    }
    // The rail holds for lifetimes written on pods too: whoever may annotate a pod cannot go below it.
    List<Rule> railed = rules.stream().map(r -> r.withTtlMinimum(rails.minMaxAge())).toList();
    Profile profile = NativePolicyFormat.rulesProfile(profileName(policy), railed, rails.maxRemovalsPerHourPerNamespace());
    String inForce = rules.size() + " rule(s)" + budget.map(b -> " and a finishedPodBudget of " + b.maxPods() + " pods").orElse("");
    return new Verdict(policy, new Outcome(true, "Accepted", inForce + " in force in namespace " + policy.namespace()),
        Optional.of(profile), budget);
  }

  /** Counted before anything is parsed, so an oversized policy costs no more than this. */
  private static int ruleCount(Source policy) {
    JsonNode rules = policy.spec() == null ? null : policy.spec().get("rules");
    return rules != null && rules.isArray() ? rules.size() : 0;
  }

  private static List<Rule> rules(Source policy, ConfigNode spec) {
    spec.requireObject(Set.of("rules", FinishedPodBudget.CLUSTER));
    List<ConfigNode> nodes = spec.list("rules");
    if (nodes.isEmpty() && !spec.has(FinishedPodBudget.CLUSTER)) {
      throw spec.child("rules").error("at least one rule is required, or a " + FinishedPodBudget.CLUSTER);
    }
    for (ConfigNode node : nodes) {
      if (node.has("namespaces")) {
        throw node.child("namespaces").error("not allowed in a PodCleanupPolicy: its rules apply to its own namespace only");
      }
    }
    NamespaceFilter own = new NamespaceFilter(List.of(policy.namespace()), List.of());
    return NativePolicyFormat.rules(nodes, own, policy.name() + "/");
  }

  private static void checkGuardRails(List<ConfigNode> nodes, List<Rule> rules, GuardRails rails) {
    String min = Durations.format(rails.minMaxAge());
    for (int i = 0; i < rules.size(); i++) {
      Rule rule = rules.get(i);
      ConfigNode node = nodes.get(i);
      if (rule.maxAge().isEmpty() && rule.maxAgeAfterFinish().isEmpty() && rule.ttlFrom().isEmpty()) {
        throw node.error("needs maxAge or maxAgeAfterFinish of at least " + min + " (the cluster's minMaxAge), or ttlFrom");
      }
      for (String field : List.of("maxAge", "maxAgeAfterFinish")) {
        Optional<Duration> age = field.equals("maxAge") ? rule.maxAge() : rule.maxAgeAfterFinish();
        if (age.isPresent() && age.get().compareTo(rails.minMaxAge()) < 0) {
          throw node.child(field).error(Durations.format(age.get()) + " is shorter than the cluster's minMaxAge " + min);
        }
      }
      if (rule.match().isPresent() && rule.match().get().cost() > PodMatch.MAX_NAMESPACED_COST) {
        throw node.child("match").error("estimated cost " + rule.match().get().cost() + " is over the limit " + PodMatch.MAX_NAMESPACED_COST
            + " for namespaced policies (over any pod the API server accepts: up to " + PodView.LABELS + " labels, "
            + PodView.CONTAINERS + " containers, 3 MiB strings; each comprehension up to " + PodMatch.MAX_ITERATIONS
            + " elements, nested ones multiplying; README \"CEL conditions\")");
      }
      if (!rails.allowTerminated()) {
        List<ConfigNode> states = node.list("states");
        for (int s = 0; s < rule.states().size(); s++) {
          if (rule.states().get(s).terminal()) {
            throw states.get(s).error("\"" + rule.states().get(s) + "\" is a terminal state, and the cluster does not allow"
                + " namespaced rules to remove finished pods (allowTerminated: false)");
          }
        }
      }
    }
  }

  /**
   * A tenant's budget removes finished pods, so it needs what a rule naming a terminal state needs: allowTerminated,
   * and a retention no shorter than minMaxAge (so it never removes a pod a rule the rails allow would keep).
   */
  private static void checkGuardRails(ConfigNode node, FinishedPodBudget budget, GuardRails rails) {
    if (!rails.allowTerminated()) {
      throw node.child("phases").error("a finishedPodBudget removes finished pods, and the cluster does not allow namespaced"
          + " policies to (allowTerminated: false)");
    }
    if (budget.minRetention().compareTo(rails.minMaxAge()) < 0) {
      throw node.child("minRetention").error(Durations.format(budget.minRetention()) + " is shorter than the cluster's minMaxAge "
          + Durations.format(rails.minMaxAge()));
    }
  }

  /**
   * The file policy with one profile per accepted namespaced policy, in namespace/name order after the file's own, and
   * after the file's finished-pod budget the namespaces' own, each held at least as long as the file's.
   */
  public static Policy compose(Policy file, List<Verdict> verdicts) {
    List<Profile> profiles = new ArrayList<>(file.profiles());
    List<FinishedPodBudget> budgets = new ArrayList<>(file.finishedPodBudgets());
    Duration clusterRetention = budgets.stream().map(FinishedPodBudget::minRetention).findFirst().orElse(Duration.ZERO);
    verdicts.stream()
        .filter(v -> v.profile().isPresent())
        .sorted(Comparator.comparing((Verdict v) -> v.source().namespace()).thenComparing(v -> v.source().name()))
        .forEach(v -> {
          profiles.add(v.profile().get());
          v.budget().ifPresent(b -> budgets.add(b.withMinRetentionAtLeast(clusterRetention)));
        });
    return new Policy(file.source(), file.dryRun(), file.limits(), file.fullPassInterval(), file.gracePeriodSeconds(), file.guard(),
        profiles, file.evictionRequests(), file.migrationJobs(), budgets, file.warnBefore());
  }

  static String profileName(Source policy) {
    return NAMESPACED + policy.namespace() + "/" + policy.name();
  }

  private static final String NAMESPACED = "PodCleanupPolicy ";

  /** The namespace of a team's PodCleanupPolicy (composed here); empty for the cluster's own profiles. */
  public static Optional<String> teamNamespace(Profile profile) {
    String name = profile.name();
    return name.startsWith(NAMESPACED) && name.indexOf('/') > NAMESPACED.length()
        ? Optional.of(name.substring(NAMESPACED.length(), name.indexOf('/'))) : Optional.empty();
  }

  private static Verdict rejected(Source policy, String reason, String message) {
    return new Verdict(policy, Outcome.rejected(reason, message), Optional.empty(), Optional.empty());
  }
}
