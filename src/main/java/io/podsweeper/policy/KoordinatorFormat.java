package io.podsweeper.policy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Koordinator's {@code descheduler/v1alpha2 DeschedulerConfiguration}: profiles whose plugins are lists of
 * {@code {name}}, with the MigrationController as evictor and filter. Its evictability filters become the
 * profile's evictor, its migration limits the removal limits, and {@code evictQPS} the rate. As in koord-descheduler,
 * a profile whose evict plugin is the MigrationController (the default) turns evictions into PodMigrationJobs, with
 * its {@code defaultJobMode}, {@code defaultJobTTL}, {@code evictionPolicy} and {@code defaultDeleteOptions}. Arguments of the migration machinery
 * Podsweeper does not have (arbitration's own queue, object limiters) are accepted and listed by {@code validate};
 * see README "Migration".
 */
final class KoordinatorFormat {
  static final String API_VERSION = "descheduler/v1alpha2";
  static final String KIND = "DeschedulerConfiguration";
  static final String MIGRATION_CONTROLLER = "MigrationController";
  /** Koordinator's maxMigratingPerNode when the MigrationController's args do not set it. */
  static final int DEFAULT_MAX_MIGRATING_PER_NODE = 2;

  /** MigrationController arguments that have an effect here. */
  private static final Set<String> HONOURED = Set.of("apiVersion", "kind", "dryRun", "evictFailedBarePods", "evictAllBarePods",
      "evictLocalStoragePods", "evictSystemCriticalPods", "ignorePvcPods", "priorityThreshold", "labelSelector", "namespaces",
      "nodeFit", "nodeSelector", "maxMigratingGlobally", "maxMigratingPerNode", "maxMigratingPerNamespace", "evictQPS", "evictBurst",
      "maxMigratingPerWorkload", "maxUnavailablePerWorkload", "evictionPolicy", "defaultJobMode", "defaultJobTTL",
      "defaultDeleteOptions", "skipCheckExpectedReplicas");
  /** MigrationController arguments of machinery Podsweeper does not have: accepted, without effect. */
  static final Set<String> ACCEPTED_WITHOUT_EFFECT = Set.of("objectLimiters", "maxConcurrentReconciles", "schedulerNames", "arbitrationArgs", "skipEvictionGates");

  private KoordinatorFormat() {}

  static Policy read(ConfigNode root, String source) {
    root.requireObject(Set.of("apiVersion", "kind", "leaderElection", "clientConnection", "debugging", "deschedulingInterval",
        "dryRun", "nodeSelector", "maxNoOfPodsToEvictPerNode", "maxNoOfPodsToEvictPerNamespace", "maxNoOfPodsToEvictTotal",
        "profiles", "healthzBindAddress", "metricsBindAddress", "enableContentionProfiling", "enableProfiling"));
    Optional<LabelSelector> nodeSelector = root.has("nodeSelector") ? Optional.of(Selectors.read(root, "nodeSelector")) : Optional.empty();
    Limits limits = DeschedulerPolicyFormat.limits(root, Limits.DEFAULT_PER_SECOND);
    boolean dryRun = root.bool("dryRun", false);
    List<Profile> profiles = new ArrayList<>();
    List<Optional<MigrationJobs>> jobs = new ArrayList<>();
    for (ConfigNode p : root.list("profiles")) {
      p.requireObject(Set.of("name", "plugins", "pluginConfig"));
      String name = p.requiredString("name");
      Map<String, ConfigNode> configs = new HashMap<>();
      for (ConfigNode c : p.list("pluginConfig")) {
        c.requireObject(Set.of("name", "args"));
        configs.put(c.requiredString("name"), c.child("args"));
      }
      ConfigNode migration = configs.getOrDefault(MIGRATION_CONTROLLER, p.child("pluginConfig").child(MIGRATION_CONTROLLER));
      migration.requireObjectOrAbsent(union(HONOURED, ACCEPTED_WITHOUT_EFFECT));
      dryRun |= migration.bool("dryRun", false);
      limits = tighter(limits, migration);
      List<StrategyArgs> deschedule = new ArrayList<>();
      List<StrategyArgs> balance = new ArrayList<>();
      jobs.add(migrationEvictor(p) ? Optional.of(MigrationJobs.read(migration, "defaultJobMode", "defaultJobTTL", "evictionPolicy", "defaultDeleteOptions"))
          : Optional.empty());
      if (!jobs.get(0).equals(jobs.get(jobs.size() - 1))) {
        throw p.child("plugins").error("every profile needs the same evict plugin and job settings (the MigrationController makes"
            + " PodMigrationJobs, the DefaultEvictor evicts directly)");
      }
      if (p.has("plugins")) {
        ConfigNode plugins = p.child("plugins").requireObject(Set.of("deschedule", "balance", "evict", "filter"));
        for (String point : List.of("deschedule", "balance", "evict", "filter")) {
          if (!plugins.has(point)) {
            continue;
          }
          ConfigNode set = plugins.child(point).requireObject(Set.of("enabled", "disabled"));
          for (ConfigNode item : set.list("enabled")) {
            item.requireObject(Set.of("name", "weight"));
            String plugin = item.requiredString("name");
            if (point.equals("evict") || point.equals("filter")) {
              if (!plugin.equals(MIGRATION_CONTROLLER) && !plugin.equals(DeschedulerPlugins.DEFAULT_EVICTOR)) {
                throw item.child("name").error("unknown " + point + " plugin \"" + plugin + "\" (known: MigrationController, DefaultEvictor)");
              }
              continue;
            }
            DeschedulerPolicyFormat.checkExtensionPoint(item.child("name"), point, plugin);
            if (DeschedulerPlugins.PODSWEEPER_ONLY.contains(plugin)) {
              throw item.child("name").error(plugin + " is Podsweeper's own plugin, not Koordinator's: use it in a PodSweeperPolicy"
                  + " (podsweeper.io/v1alpha1)");
            }
            ConfigNode args = configs.get(plugin);
            if (args == null) {
              throw item.child("name").error("plugin \"" + plugin + "\" has no pluginConfig entry");
            }
            (point.equals("balance") ? balance : deschedule)
                .add(withEvictorNamespaces(DeschedulerPlugins.strategy(plugin, args, name, Optional.empty()), migration));
          }
          for (ConfigNode item : set.list("disabled")) {
            item.requireObject(Set.of("name", "weight"));
          }
        }
      }
      profiles.add(new Profile(name, evictor(migration, configs.get(DeschedulerPlugins.DEFAULT_EVICTOR), migrationEvictor(p)), deschedule,
          balance, true, nodeSelector));
    }
    if (profiles.isEmpty()) {
      throw root.child("profiles").error("at least one profile is required");
    }
    return new Policy(source, dryRun, limits,
        Policy.fullPassInterval(root, "deschedulingInterval"), java.util.OptionalLong.empty(), Guard.DEFAULTS, profiles,
        EvictionRequestMode.OptIn, jobs.get(0));
  }

  /**
   * Whether the profile's evict plugin is the MigrationController, as koord-descheduler merges plugin sets: it is
   * the default unless disabled (by name or {@code "*"}), and enabling it by name brings it back.
   */
  private static boolean migrationEvictor(ConfigNode profile) {
    ConfigNode evict = profile.child("plugins").child("evict");
    List<String> enabled = evict.list("enabled").stream().map(e -> e.requiredString("name")).toList();
    List<String> disabled = evict.list("disabled").stream().map(e -> e.requiredString("name")).toList();
    return enabled.contains(MIGRATION_CONTROLLER) || !(disabled.contains(MIGRATION_CONTROLLER) || disabled.contains("*"));
  }

  /**
   * The MigrationController's filters are the DefaultEvictor's deprecated flags, with the same meaning; Koordinator
   * hands its {@code nodeSelector} (a selector string) to the DefaultEvictor too, which limits the nodes nodeFit considers.
   * A profile's own DefaultEvictor args, if any, take the place of those flags. Koordinator's own filters come on top
   * whenever the MigrationController is the profile's evict plugin, as its filter chain always holds them.
   */
  private static EvictorArgs evictor(ConfigNode migration, ConfigNode defaultEvictor, boolean migrationEvicts) {
    EvictorArgs e;
    if (defaultEvictor != null) {
      e = DeschedulerPlugins.defaultEvictor(defaultEvictor);
    } else {
      ObjectNode args = JsonNodeFactory.instance.objectNode();
      for (String field : List.of("evictFailedBarePods", "evictLocalStoragePods", "evictSystemCriticalPods", "ignorePvcPods",
          "priorityThreshold", "labelSelector", "nodeFit", "nodeSelector")) {
        if (migration.has(field)) {
          args.set(field, migration.child(field).raw());
        }
      }
      e = DeschedulerPlugins.defaultEvictor(new ConfigNode(args, migration.path()));
    }
    if (!migrationEvicts) {
      return e;
    }
    // A pod of the maximum eviction cost is never evicted, nor, unless skipCheckExpectedReplicas, the single replica
    // of a workload (the evict annotation lifts both, as Koordinator's non-retryable filters).
    Set<Protection> protections = new HashSet<>(e.protections());
    protections.add(Protection.PodsWithMaxEvictionCost);
    if (!migration.bool("skipCheckExpectedReplicas", false)) {
      protections.add(Protection.PodsOfSingleReplicaWorkloads);
    }
    return new EvictorArgs(protections, e.upstreamBarePodRule() && !migration.bool("evictAllBarePods", false), e.protectedStorageClasses(),
        e.priorityThreshold(), e.priorityThresholdName(), e.nodeFit(), e.nodeSelector(), e.labelSelector(), e.namespaceLabelSelector(),
        e.minReplicas(), e.minPodAge(), e.noEvictionPolicy());
  }

  /** The evictor's namespaces filter applies to every strategy; folded into each strategy's own filter. */
  private static StrategyArgs withEvictorNamespaces(StrategyArgs strategy, ConfigNode migration) {
    if (!migration.has("namespaces")) {
      return strategy;
    }
    NamespaceFilter evictorNs = DeschedulerPlugins.namespaces(migration);
    NamespaceFilter own;
    if (strategy instanceof PodLifeTimeArgs a) {
      own = a.rules().get(0).namespaces();
    } else if (strategy instanceof RemoveFailedPodsArgs a) {
      own = a.namespaces();
    } else if (strategy instanceof TooManyRestartsArgs a) {
      own = a.namespaces();
    } else if (strategy instanceof LowNodeLoadArgs a) {
      own = a.namespaces();
    } else {
      throw migration.child("namespaces").error("cannot be combined with " + strategy.strategyName()
          + "; set the plugin's own namespaces instead");
    }
    if (!own.equals(NamespaceFilter.ALL)) {
      throw migration.child("namespaces").error("cannot be combined with " + strategy.strategyName() + "'s own namespaces");
    }
    if (strategy instanceof PodLifeTimeArgs a) {
      Rule r = a.rules().get(0);
      return new PodLifeTimeArgs(List.of(new Rule(r.name(), evictorNs, r.namespaceSelector(), r.podSelector(), r.states(), r.maxAge(),
          r.maxAgeAfterFinish(), r.conditions(), r.exitCodes(), r.ownerKindsInclude(), r.ownerKindsExclude(),
          r.includingInitContainers(), r.includingEphemeralContainers(), r.retention(), r.protections())));
    }
    if (strategy instanceof RemoveFailedPodsArgs a) {
      return new RemoveFailedPodsArgs(evictorNs, a.labelSelector(), a.excludeOwnerKinds(), a.minPodLifetime(), a.reasons(),
          a.exitCodes(), a.includingInitContainers());
    }
    if (strategy instanceof LowNodeLoadArgs a) {
      return a.withNamespaces(evictorNs);
    }
    TooManyRestartsArgs a = (TooManyRestartsArgs) strategy;
    return new TooManyRestartsArgs(evictorNs, a.labelSelector(), a.threshold(), a.includingInitContainers(), a.states());
  }

  /** The MigrationController's caps tighten the top-level ones; evictQPS and evictBurst set the rate. */
  private static Limits tighter(Limits limits, ConfigNode migration) {
    double perSecond = limits.perSecond();
    if (migration.has("evictQPS")) {
      ConfigNode qps = migration.child("evictQPS");
      try {
        perSecond = qps.raw().isNumber() ? qps.raw().doubleValue() : Double.parseDouble(qps.string());
      } catch (NumberFormatException e) {
        throw qps.error("must be a number, got \"" + qps.string() + "\"");
      }
      if (!(perSecond >= Limits.MIN_PER_SECOND && perSecond <= Limits.MAX_PER_SECOND)) {
        throw qps.error("must be between " + Limits.MIN_PER_SECOND + " and " + Limits.MAX_PER_SECOND + ", got " + qps.string());
      }
    }
    return new Limits(min(limits.maxPerNode(), migrationCap(migration, "maxMigratingPerNode", OptionalInt.of(DEFAULT_MAX_MIGRATING_PER_NODE))),
        min(limits.maxPerNamespace(), migrationCap(migration, "maxMigratingPerNamespace", OptionalInt.empty())),
        min(limits.maxTotal(), migrationCap(migration, "maxMigratingGlobally", OptionalInt.empty())), perSecond,
        perWorkload(migration, "maxMigratingPerWorkload"), perWorkload(migration, "maxUnavailablePerWorkload"),
        // Koordinator's evictBurst: 1 when unset (SetDefaults_MigrationControllerArgs), and 0 is 1 (GetLimiterBurst).
        OptionalInt.of(Math.max(1, migration.optionalInt("evictBurst", 0, Integer.MAX_VALUE).orElse(1))));
  }

  /**
   * A maxMigrating* cap as Koordinator reads it: absent, its default (SetDefaults_MigrationControllerArgs: 2 per node,
   * none otherwise); zero or negative, no cap (its filters skip the check), where Podsweeper's 0 would stop every eviction.
   */
  private static OptionalInt migrationCap(ConfigNode migration, String field, OptionalInt absent) {
    if (!migration.has(field)) {
      return absent;
    }
    OptionalInt cap = migration.optionalInt(field, Integer.MIN_VALUE, Integer.MAX_VALUE);
    return cap.getAsInt() > 0 ? cap : OptionalInt.empty();
  }

  /**
   * A per-workload cap as Koordinator's util.GetMaxUnavailable reads it, so far as Podsweeper can without the workload's
   * expected replicas. Unset, Koordinator allows 1 for up to 3 replicas, 2 for 4 to 10 and 10% above: Podsweeper takes
   * the smallest of them, 1, never allowing more than Koordinator for a workload it migrates at all. A whole number is taken as it is, except that
   * Koordinator raises 0 to 1. Percentages of the replicas are refused.
   */
  private static OptionalInt perWorkload(ConfigNode migration, String field) {
    if (!migration.has(field)) {
      return OptionalInt.of(1);
    }
    if (migration.child(field).raw().isTextual()) {
      throw migration.child(field).error("only a whole number is supported here, not \"" + migration.child(field).string() + "\"");
    }
    return OptionalInt.of(Math.max(1, migration.optionalInt(field, 0, Integer.MAX_VALUE).getAsInt()));
  }

  private static OptionalInt min(OptionalInt a, OptionalInt b) {
    if (a.isEmpty()) {
      return b;
    }
    return b.isEmpty() ? a : OptionalInt.of(Math.min(a.getAsInt(), b.getAsInt()));
  }

  private static Set<String> union(Set<String> a, Set<String> b) {
    Set<String> all = new LinkedHashSet<>(a);
    all.addAll(b);
    return all;
  }
}
