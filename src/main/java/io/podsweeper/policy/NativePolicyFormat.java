package io.podsweeper.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Pattern;

/** Podsweeper's own policy format, {@code podsweeper.io/v1alpha1 PodSweeperPolicy}; see docs/configuration.md. */
final class NativePolicyFormat {
  static final String API_VERSION = "podsweeper.io/v1alpha1";
  static final String KIND = "PodSweeperPolicy";

  private static final Pattern RULE_NAME = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern NAMESPACE_GLOB = Pattern.compile("[a-z0-9*?]([-a-z0-9*?]{0,61}[a-z0-9*?])?");

  private NativePolicyFormat() {}

  static Policy read(ConfigNode root, String source) {
    root.requireObject(Set.of("apiVersion", "kind", "metadata", "dryRun", "fullPassInterval", "limits", "gracePeriodSeconds", "rules",
        "nodeSelector", "profiles", "guard", "metricsProviders", "evictionRequests", "migrationJobs",
        FinishedPodBudget.CLUSTER, "warnBefore"));
    boolean dryRun = root.bool("dryRun", false);
    Duration fullPass = Policy.fullPassInterval(root, "fullPassInterval");
    Limits limits = root.has("limits") ? limits(root.child("limits")) : Limits.DEFAULTS;
    List<ConfigNode> ruleNodes = root.list("rules");
    List<FinishedPodBudget> budgets = root.has(FinishedPodBudget.CLUSTER)
        ? List.of(FinishedPodBudget.readCluster(root.child(FinishedPodBudget.CLUSTER))) : List.of();
    if (ruleNodes.isEmpty() && root.list("profiles").isEmpty() && budgets.isEmpty()) {
      throw root.child("rules").error("at least one rule (or profile) is required, or a finishedPodBudget");
    }
    List<Rule> rules = rules(ruleNodes, NamespaceFilter.ALL, "");
    List<Profile> profiles = new ArrayList<>();
    if (!rules.isEmpty()) {
      profiles.add(rulesProfile(Profile.NATIVE_RULES, rules, OptionalInt.empty()));
    }
    // Upstream-style profiles, in descheduler/v1alpha2 syntax: what `podsweeper convert` writes.
    Optional<LabelSelector> nodeSelector = root.has("nodeSelector")
        ? Optional.of(Selectors.parse(root.child("nodeSelector"), root.child("nodeSelector").string())) : Optional.empty();
    Optional<PrometheusQuery.Server> prometheus = DeschedulerPlugins.metricsProviders(root);
    for (ConfigNode p : root.list("profiles")) {
      Profile profile = DeschedulerPolicyFormat.profile(p, nodeSelector, true, prometheus);
      if (profiles.stream().anyMatch(existing -> existing.name().equals(profile.name()))) {
        throw p.child("name").error("duplicate profile name \"" + profile.name() + "\"");
      }
      profiles.add(profile);
    }
    return new Policy(source, dryRun, limits, fullPass, root.optionalLong("gracePeriodSeconds", 0, 86_400 * 365),
        root.has("guard") ? guard(root.child("guard")) : Guard.DEFAULTS, profiles, evictionRequests(root),
        root.has("migrationJobs") ? Optional.of(MigrationJobs.read(root.child("migrationJobs"))) : Optional.empty(), budgets,
        Policy.warnBefore(root, "warnBefore"));
  }

  /** {@code evictionRequests: OptIn | All}: which evictions go as EvictionRequests where the cluster serves the API. */
  private static EvictionRequestMode evictionRequests(ConfigNode root) {
    if (!root.has("evictionRequests")) {
      return EvictionRequestMode.OptIn;
    }
    ConfigNode node = root.child("evictionRequests");
    return EvictionRequestMode.parse(node.string())
        .orElseThrow(() -> node.error("unknown value \"" + node.string() + "\" (one of " + EvictionRequestMode.allowedNames() + ")"));
  }

  /**
   * A list of rules in the native rule language, with unique names. {@code defaultNamespaces} is the scope of a
   * rule without {@code namespaces} (a PodCleanupPolicy passes its own namespace and forbids the field);
   * {@code namePrefix} goes before each validated name, so decisions say which policy a rule came from.
   */
  static List<Rule> rules(List<ConfigNode> ruleNodes, NamespaceFilter defaultNamespaces, String namePrefix) {
    List<Rule> rules = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (ConfigNode node : ruleNodes) {
      Rule rule = rule(node, defaultNamespaces, namePrefix);
      if (!names.add(rule.name())) {
        throw node.child("name").error("duplicate rule name \"" + rule.name().substring(namePrefix.length()) + "\"");
      }
      rules.add(rule);
    }
    return rules;
  }

  /**
   * Native rules form a profile of their own: every pod seen (unscheduled ones too), no upstream evictor (each rule
   * carries its own protections).
   */
  static Profile rulesProfile(String name, List<Rule> rules, OptionalInt maxRemovalsPerHourPerNamespace) {
    return new Profile(name, EvictorArgs.NONE, List.of(new PodLifeTimeArgs(rules)), List.of(), false, Optional.empty(),
        maxRemovalsPerHourPerNamespace);
  }

  private static Guard guard(ConfigNode node) {
    node.requireObject(Set.of("maxNamespaceShare", "maxClusterShare", "maxRemovals", "minEvictions", "minClusterEvictions", "window"));
    Guard d = Guard.DEFAULTS;
    return new Guard(
        node.optionalNumber("maxNamespaceShare", 0, 1).orElse(d.maxNamespaceShare()),
        node.optionalNumber("maxClusterShare", 0, 1).orElse(d.maxClusterShare()),
        node.optionalInt("maxRemovals", 1, Integer.MAX_VALUE),
        node.optionalInt("minEvictions", 0, 1_000_000).orElse(d.minEvictions()),
        node.optionalInt("minClusterEvictions", 0, 1_000_000).orElse(d.minClusterEvictions()),
        node.optionalDuration("window").orElse(d.window()));
  }

  private static Limits limits(ConfigNode node) {
    node.requireObject(Set.of("maxPerNode", "maxPerNamespace", "maxTotal", "perSecond", "maxInFlightPerOwner", "maxUnavailablePerOwner", "burst"));
    return new Limits(
        node.optionalInt("maxPerNode", 0, Integer.MAX_VALUE),
        node.optionalInt("maxPerNamespace", 0, Integer.MAX_VALUE),
        node.optionalInt("maxTotal", 0, Integer.MAX_VALUE),
        node.optionalNumberBetween("perSecond", Limits.MIN_PER_SECOND, Limits.MAX_PER_SECOND).orElse(Limits.DEFAULT_PER_SECOND),
        node.optionalInt("maxInFlightPerOwner", 1, Integer.MAX_VALUE),
        node.optionalInt("maxUnavailablePerOwner", 0, Integer.MAX_VALUE),
        // As perSecond: a bucket that refilled while idle lets this many requests out at once.
        node.optionalInt("burst", 1, (int) Limits.MAX_PER_SECOND));
  }

  private static Rule rule(ConfigNode node, NamespaceFilter defaultNamespaces, String namePrefix) {
    node.requireObject(
        Set.of("name", "namespaces", "namespaceSelector", "podSelector", "states", "maxAge", "maxAgeAfterFinish", "keepLast", "keepPer",
            "evict", "ttlFrom", "match", "includingInitContainers", "endedBy"));
    String name = node.requiredString("name");
    if (!RULE_NAME.matcher(name).matches()) {
      throw node.child("name").error("invalid rule name \"" + name + "\" (lower-case letters, digits and '-')");
    }
    NamespaceFilter namespaces = node.has("namespaces") ? namespaces(node.child("namespaces")) : defaultNamespaces;
    List<PodState> states = states(node);
    Optional<Duration> maxAge = node.optionalDuration("maxAge");
    Optional<Duration> maxAgeAfterFinish = node.optionalDuration("maxAgeAfterFinish");
    Optional<Rule.TtlFrom> ttlFrom = ttlFrom(node);
    if (states.isEmpty() && maxAge.isEmpty() && maxAgeAfterFinish.isEmpty() && ttlFrom.isEmpty()) {
      throw node.error("a rule needs maxAge, maxAgeAfterFinish, states or ttlFrom; without them it would remove every pod it selects");
    }
    Optional<Rule.Retention> retention = retention(node, states);
    if (maxAgeAfterFinish.isPresent()) {
      if (states.isEmpty()) {
        throw node.child("maxAgeAfterFinish")
            .error("can match nothing: only finished pods have an age since finishing, and a rule opts in to them"
                + " only by naming a terminal state (e.g. states: [Succeeded, Failed])");
      }
      for (int i = 0; i < states.size(); i++) {
        if (!states.get(i).terminal()) {
          throw node.list("states").get(i)
              .error("\"" + states.get(i) + "\" is not a finished state, but maxAgeAfterFinish applies"
                  + " only to finished pods; put it in a rule of its own with maxAge");
        }
      }
    }
    return new Rule(namePrefix + name, namespaces, Selectors.read(node, "namespaceSelector"), Selectors.read(node, "podSelector"), states,
        maxAge, maxAgeAfterFinish, List.of(), Set.of(), Set.of(), Set.of(), node.bool("includingInitContainers", false), false, retention,
        protections(node), ttlFrom, node.has("match") ? Optional.of(PodMatch.compile(node.child("match"), name)) : Optional.empty(),
        endedBy(node, states));
  }

  /**
   * {@code endedBy: [KubeletEviction, NodeShutdown, ...]}: the pod must show one of these as why it ended. Only a finished
   * pod has ended, and a rule opts in to finished pods only by naming a finished state, so the rule must name one.
   */
  private static Set<EndedBy> endedBy(ConfigNode node, List<PodState> states) {
    Set<EndedBy> endedBy = EnumSet.noneOf(EndedBy.class);
    for (ConfigNode item : node.list("endedBy")) {
      String name = item.string();
      EndedBy value = EndedBy.parse(name).orElseThrow(() -> item.error("unknown ending \"" + name + "\" (one of " + EndedBy.allowedNames() + ")"));
      if (!endedBy.add(value)) {
        throw item.error("duplicate ending \"" + name + "\"");
      }
    }
    if (node.has("endedBy") && endedBy.isEmpty()) {
      throw node.child("endedBy").error("name at least one of " + EndedBy.allowedNames() + ", or leave endedBy out");
    }
    if (!endedBy.isEmpty() && states.stream().noneMatch(PodState::terminal)) {
      throw node.child("endedBy").error("can match nothing: only a finished pod has ended, and a rule opts in to finished pods"
          + " only by naming a finished state (e.g. states: [Failed])");
    }
    return endedBy;
  }

  /**
   * {@code ttlFrom: [podsweeper.io, janitor, kyverno]}: the pod's own lifetime, from these keys, is the rule's age; so
   * it goes with no age and no count of its own.
   */
  private static Optional<Rule.TtlFrom> ttlFrom(ConfigNode node) {
    if (!node.has("ttlFrom")) {
      return Optional.empty();
    }
    List<ConfigNode> items = node.list("ttlFrom");
    if (items.isEmpty()) {
      throw node.child("ttlFrom").error("name at least one of " + TtlSource.allowedNames() + ", or leave ttlFrom out");
    }
    Set<TtlSource> sources = EnumSet.noneOf(TtlSource.class);
    for (ConfigNode item : items) {
      String name = item.string();
      TtlSource source = TtlSource.parse(name)
          .orElseThrow(() -> item.error("unknown TTL source \"" + name + "\" (one of " + TtlSource.allowedNames() + ")"));
      if (!sources.add(source)) {
        throw item.error("duplicate TTL source \"" + name + "\"");
      }
    }
    for (String field : List.of("maxAge", "maxAgeAfterFinish", "keepLast")) {
      if (node.has(field)) {
        throw node.child(field).error("does not go with ttlFrom: the lifetime written on the pod is the rule's age;"
            + " put " + field + " in a rule of its own");
      }
    }
    return Optional.of(new Rule.TtlFrom(sources, Duration.ZERO));
  }

  /** Every {@link RuleProtection} but those the rule's {@code evict} list opts in to evicting. */
  private static Set<RuleProtection> protections(ConfigNode node) {
    Set<RuleProtection> protections = EnumSet.allOf(RuleProtection.class);
    for (ConfigNode item : node.list("evict")) {
      String name = item.string();
      RuleProtection lifted = RuleProtection.parse(name).orElseThrow(() -> item.error("unknown protection \"" + name + "\" (one of "
          + RuleProtection.allowedNames() + "; mirror and static pods are never evicted)"));
      if (!protections.remove(lifted)) {
        throw item.error("duplicate protection \"" + name + "\"");
      }
    }
    return protections;
  }

  /** {@code keepLast: N} (and {@code keepPer: owner|namespace}): retention by count, for finished pods only. */
  private static Optional<Rule.Retention> retention(ConfigNode node, List<PodState> states) {
    if (!node.has("keepLast")) {
      if (node.has("keepPer")) {
        throw node.child("keepPer").error("goes with keepLast");
      }
      return Optional.empty();
    }
    int keep = node.optionalInt("keepLast", 0, 1_000_000).getAsInt();
    if (states.isEmpty() || !states.stream().allMatch(PodState::terminal)) {
      throw node.child("keepLast").error("applies to finished pods only: give states that only finished pods have"
          + " (e.g. states: [Succeeded] or [Failed])");
    }
    String per = node.optionalString("keepPer").orElse("owner");
    if (!per.equals("owner") && !per.equals("namespace")) {
      throw node.child("keepPer").error("must be owner or namespace, got \"" + per + "\"");
    }
    return Optional.of(new Rule.Retention(keep, per.equals("namespace")));
  }

  private static List<PodState> states(ConfigNode node) {
    List<PodState> states = new ArrayList<>();
    for (ConfigNode item : node.list("states")) {
      String name = item.string();
      PodState state =
          PodState.parse(name)
              .orElseThrow(() -> item.error("unknown state \"" + name + "\" (one of " + PodState.allowedNames() + ")"));
      if (states.contains(state)) {
        throw item.error("duplicate state \"" + name + "\"");
      }
      states.add(state);
    }
    return states;
  }

  static NamespaceFilter namespaces(ConfigNode node) {
    node.requireObject(Set.of("include", "exclude"));
    List<String> include = globs(node, "include");
    List<String> exclude = globs(node, "exclude");
    if (include.isEmpty() && exclude.isEmpty()) {
      throw node.error("give include and/or exclude namespace patterns, or leave namespaces out");
    }
    NamespaceFilter filter = new NamespaceFilter(include, exclude);
    if (exclude.contains("*")) {
      throw node.child("exclude").error("can match nothing: \"*\" excludes every namespace");
    }
    for (int i = 0; i < include.size(); i++) {
      String glob = include.get(i);
      if (exclude.stream().anyMatch(e -> NamespaceFilter.globCovers(e, glob))) {
        throw node.list("include").get(i).error("\"" + glob + "\" can match nothing: it is excluded as well");
      }
    }
    return filter;
  }

  private static List<String> globs(ConfigNode node, String field) {
    List<ConfigNode> items = node.list(field);
    List<String> globs = new ArrayList<>();
    for (ConfigNode item : items) {
      String glob = item.string();
      if (!NAMESPACE_GLOB.matcher(glob).matches()) {
        throw item.error("invalid namespace pattern \"" + glob + "\" (namespace characters with * and ? globs)");
      }
      globs.add(glob);
    }
    return globs;
  }
}
