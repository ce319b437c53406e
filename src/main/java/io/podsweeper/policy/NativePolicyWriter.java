package io.podsweeper.policy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Writes any policy as Podsweeper's own format ({@code podsweeper convert}): the own rules as {@code rules}, every
 * other profile in descheduler/v1alpha2 syntax under {@code profiles}. Reading the output gives the same model.
 */
public final class NativePolicyWriter {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private NativePolicyWriter() {}

  /** The one Prometheus server a policy's strategies query (a policy names at most one). */
  private static Optional<PrometheusQuery.Server> prometheusServer(Policy policy) {
    return policy.profiles().stream().flatMap(p -> p.balance().stream())
        .flatMap(s -> s instanceof NodeUtilizationArgs a ? a.prometheus().stream() : Stream.empty())
        .map(PrometheusQuery::server).findFirst();
  }

  public static String write(Policy policy) {
    ObjectNode root = JSON.objectNode();
    root.put("apiVersion", NativePolicyFormat.API_VERSION);
    root.put("kind", NativePolicyFormat.KIND);
    root.put("dryRun", policy.dryRun());
    root.put("fullPassInterval", exact(policy.fullPassInterval()));
    ObjectNode limits = root.putObject("limits");
    policy.limits().maxPerNode().ifPresent(v -> limits.put("maxPerNode", v));
    policy.limits().maxPerNamespace().ifPresent(v -> limits.put("maxPerNamespace", v));
    policy.limits().maxTotal().ifPresent(v -> limits.put("maxTotal", v));
    limits.put("perSecond", policy.limits().perSecond());
    policy.limits().burst().ifPresent(v -> limits.put("burst", v));
    policy.limits().maxInFlightPerOwner().ifPresent(v -> limits.put("maxInFlightPerOwner", v));
    policy.limits().maxUnavailablePerOwner().ifPresent(v -> limits.put("maxUnavailablePerOwner", v));
    policy.gracePeriodSeconds().ifPresent(g -> root.put("gracePeriodSeconds", g));
    if (!policy.warnBefore().isZero()) {
      root.put("warnBefore", Durations.format(policy.warnBefore()));
    }
    if (policy.evictionRequests() != EvictionRequestMode.OptIn) {
      root.put("evictionRequests", policy.evictionRequests().name());
    }
    policy.migrationJobs().ifPresent(m -> {
      ObjectNode jobs = root.putObject("migrationJobs").put("mode", m.mode().wireName()).put("ttl", exact(m.ttl()))
          .put("evictionPolicy", m.evictionPolicy().wireName());
      m.deleteOptions().ifPresent(d -> {
        d.write(jobs.putObject("deleteOptions"));
      });
    });
    policy.finishedPodBudgets().stream().filter(b -> b.namespace().isEmpty()).forEach(b -> {
      ObjectNode budget = root.putObject(FinishedPodBudget.CLUSTER).put("maxPods", b.maxPods());
      b.maxPodsPerNamespace().ifPresent(v -> budget.put("maxPodsPerNamespace", v));
      budget.put("minRetention", exact(b.minRetention()));
      b.phases().stream().sorted().forEach(p -> budget.withArray("phases").add(p.wireName()));
    });
    Guard guard = policy.guard();
    ObjectNode g = root.putObject("guard");
    g.put("maxNamespaceShare", guard.maxNamespaceShare());
    g.put("maxClusterShare", guard.maxClusterShare());
    guard.maxRemovals().ifPresent(v -> g.put("maxRemovals", v));
    g.put("minEvictions", guard.minEvictions());
    g.put("minClusterEvictions", guard.minClusterEvictions());
    g.put("window", exact(guard.window()));
    ArrayNode profiles = JSON.arrayNode();
    for (Profile profile : policy.profiles()) {
      if (!profile.readyNodesOnly()) {
        ArrayNode rules = root.putArray("rules");
        profile.deschedule().forEach(s -> ((PodLifeTimeArgs) s).rules().forEach(r -> rules.add(nativeRule(r))));
      } else {
        profile.nodeSelector().ifPresent(s -> root.put("nodeSelector", s.text()));
        profiles.add(profile(profile));
      }
    }
    prometheusServer(policy).ifPresent(server -> {
      ObjectNode prometheus = root.putArray("metricsProviders").addObject().put("source", "Prometheus").putObject("prometheus");
      prometheus.put("url", server.url().toString());
      server.authToken().ifPresent(t -> prometheus.putObject("authToken").putObject("secretReference")
          .put("namespace", t.namespace()).put("name", t.name()));
    });
    if (!profiles.isEmpty()) {
      root.set("profiles", profiles);
    }
    try {
      return YAMLMapper.builder().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
          .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES).build().writeValueAsString(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private static ObjectNode nativeRule(Rule rule) {
    ObjectNode o = JSON.objectNode();
    o.put("name", rule.name());
    if (!rule.namespaces().equals(NamespaceFilter.ALL)) {
      o.set("namespaces", namespaces(rule.namespaces()));
    }
    putSelector(o, "namespaceSelector", rule.namespaceSelector());
    putSelector(o, "podSelector", rule.podSelector());
    if (!rule.states().isEmpty()) {
      rule.states().forEach(s -> o.withArray("states").add(s.wireName()));
    }
    rule.maxAge().ifPresent(a -> o.put("maxAge", exact(a)));
    rule.maxAgeAfterFinish().ifPresent(a -> o.put("maxAgeAfterFinish", exact(a)));
    rule.retention().ifPresent(r -> o.put("keepLast", r.keep()).put("keepPer", r.perNamespace() ? "namespace" : "owner"));
    rule.ttlFrom().ifPresent(t -> t.sources().stream().sorted().forEach(s -> o.withArray("ttlFrom").add(s.wireName())));
    rule.match().ifPresent(m -> o.put("match", m.source()));
    putFlag(o, "includingInitContainers", rule.includingInitContainers());
    rule.endedBy().stream().sorted().forEach(e -> o.withArray("endedBy").add(e.name()));
    for (RuleProtection p : RuleProtection.values()) {
      if (!rule.protections().contains(p)) {
        o.withArray("evict").add(p.name());
      }
    }
    return o;
  }

  private static ObjectNode profile(Profile profile) {
    ObjectNode p = JSON.objectNode();
    p.put("name", profile.name());
    ArrayNode configs = p.putArray("pluginConfig");
    ObjectNode evictor = configs.addObject();
    evictor.put("name", DeschedulerPlugins.DEFAULT_EVICTOR);
    evictor.set("args", evictorArgs(profile.evictor()));
    ObjectNode plugins = p.putObject("plugins");
    addPlugins(plugins, "deschedule", profile.deschedule(), configs);
    addPlugins(plugins, "balance", profile.balance(), configs);
    return p;
  }

  private static void addPlugins(ObjectNode plugins, String point, java.util.List<StrategyArgs> strategies, ArrayNode configs) {
    if (strategies.isEmpty()) {
      return;
    }
    ArrayNode enabled = plugins.putObject(point).putArray("enabled");
    for (StrategyArgs s : strategies) {
      enabled.add(s.strategyName());
      ObjectNode config = configs.addObject();
      config.put("name", s.strategyName());
      config.set("args", strategyArgs(s));
    }
  }

  private static ObjectNode evictorArgs(EvictorArgs e) {
    ObjectNode o = JSON.objectNode();
    Set<Protection> disabled = EnumSet.copyOf(Protection.DEFAULT_ENABLED);
    disabled.removeAll(e.protections());
    Set<Protection> extra = EnumSet.noneOf(Protection.class);
    extra.addAll(e.protections());
    extra.retainAll(Protection.PODSWEEPER_EXTRA);
    ObjectNode pp = o.putObject("podProtections");
    disabled.forEach(p -> pp.withArray("defaultDisabled").add(p.name()));
    extra.forEach(p -> pp.withArray("extraEnabled").add(p.name()));
    if (!e.protectedStorageClasses().isEmpty()) {
      ArrayNode classes = pp.putObject("config").putObject("PodsWithPVC").putArray("protectedStorageClasses");
      e.protectedStorageClasses().forEach(c -> classes.addObject().put("name", c));
    }
    if (!e.upstreamBarePodRule()) {
      o.put("evictAllBarePods", true);
    }
    e.priorityThreshold().ifPresent(v -> o.putObject("priorityThreshold").put("value", v));
    e.priorityThresholdName().ifPresent(n -> o.putObject("priorityThreshold").put("name", n));
    o.put("nodeFit", e.nodeFit());
    if (!e.nodeSelector().isEmpty()) {
      o.put("nodeSelector", e.nodeSelector().text());
    }
    putSelector(o, "labelSelector", e.labelSelector());
    putSelector(o, "namespaceLabelSelector", e.namespaceLabelSelector());
    if (e.minReplicas() != 0) {
      o.put("minReplicas", e.minReplicas());
    }
    e.minPodAge().ifPresent(a -> o.put("minPodAge", exact(a)));
    if (e.noEvictionPolicy() != EvictorArgs.NoEvictionPolicy.Unset) {
      o.put("noEvictionPolicy", e.noEvictionPolicy().name());
    }
    return o;
  }

  private static ObjectNode strategyArgs(StrategyArgs s) {
    ObjectNode o = JSON.objectNode();
    if (s instanceof PodLifeTimeArgs a) {
      Rule r = a.rules().get(0);
      r.maxAge().ifPresent(m -> o.put("maxPodLifeTimeSeconds", m.toSeconds()));
      r.states().forEach(st -> o.withArray("states").add(st.wireName()));
      for (ConditionFilter c : r.conditions()) {
        ObjectNode f = o.withArray("conditions").addObject();
        c.type().ifPresent(v -> f.put("type", v));
        c.status().ifPresent(v -> f.put("status", v));
        c.reason().ifPresent(v -> f.put("reason", v));
        c.minTimeSinceLastTransition().ifPresent(v -> f.put("minTimeSinceLastTransitionSeconds", v.toSeconds()));
      }
      putInts(o, "exitCodes", r.exitCodes());
      if (!r.ownerKindsInclude().isEmpty() || !r.ownerKindsExclude().isEmpty()) {
        ObjectNode owners = o.putObject("ownerKinds");
        putStrings(owners, "include", r.ownerKindsInclude());
        putStrings(owners, "exclude", r.ownerKindsExclude());
      }
      putNamespaces(o, r.namespaces());
      putSelector(o, "labelSelector", r.podSelector());
      putFlag(o, "includingInitContainers", r.includingInitContainers());
      putFlag(o, "includingEphemeralContainers", r.includingEphemeralContainers());
    } else if (s instanceof RemoveFailedPodsArgs a) {
      putNamespaces(o, a.namespaces());
      putSelector(o, "labelSelector", a.labelSelector());
      putStrings(o, "excludeOwnerKinds", a.excludeOwnerKinds());
      o.put("minPodLifetimeSeconds", a.minPodLifetime().toSeconds());
      putStrings(o, "reasons", a.reasons());
      putInts(o, "exitCodes", a.exitCodes());
      putFlag(o, "includingInitContainers", a.includingInitContainers());
    } else if (s instanceof NodeTaintsArgs a) {
      putNamespaces(o, a.namespaces());
      putSelector(o, "labelSelector", a.labelSelector());
      putFlag(o, "includePreferNoSchedule", a.includePreferNoSchedule());
      a.excludedTaints().forEach(t -> o.withArray("excludedTaints").add(t));
      a.includedTaints().forEach(t -> o.withArray("includedTaints").add(t));
    } else if (s instanceof NodeAffinityArgs a) {
      putNamespaces(o, a.namespaces());
      putSelector(o, "labelSelector", a.labelSelector());
      a.nodeAffinityType().forEach(t -> o.withArray("nodeAffinityType").add(t));
    } else if (s instanceof InterPodAntiAffinityArgs a) {
      putNamespaces(o, a.namespaces());
      putSelector(o, "labelSelector", a.labelSelector());
    } else if (s instanceof TopologySpreadArgs a) {
      putNamespaces(o, a.namespaces());
      putSelector(o, "labelSelector", a.labelSelector());
      putStrings(o, "constraints", a.constraints());
      o.put("topologyBalanceNodeFit", a.topologyBalanceNodeFit());
    } else if (s instanceof RemoveDuplicatesArgs a) {
      putNamespaces(o, a.namespaces());
      putStrings(o, "excludeOwnerKinds", a.excludeOwnerKinds());
    } else if (s instanceof NodeUtilizationArgs a) {
      putPercents(o.putObject("thresholds"), a.thresholds());
      if (!a.high()) {
        putPercents(o.putObject("targetThresholds"), a.targetThresholds());
        putFlag(o, "useDeviationThresholds", a.useDeviationThresholds());
        a.nodeEvictionLimit().ifPresent(n -> o.putObject("evictionLimits").put("node", n));
        if (a.measuredUsage()) {
          o.putObject("metricsUtilization").put("source", "KubernetesMetrics");
        }
        a.prometheus().ifPresent(q -> o.putObject("metricsUtilization").put("source", "Prometheus").putObject("prometheus")
            .put("query", q.query()));
      }
      if (a.numberOfNodes() != 0) {
        o.put("numberOfNodes", a.numberOfNodes());
      }
      if (!a.excludedNamespaces().isEmpty()) {
        ArrayNode exclude = o.putObject("evictableNamespaces").putArray("exclude");
        a.excludedNamespaces().forEach(exclude::add);
      }
      if (a.onlyThresholdingResources()) {
        o.withArray("evictionModes").add("OnlyThresholdingResources");
      }
    } else if (s instanceof LowNodeLoadArgs a) {
      lowNodeLoad(o, a);
    } else if (s instanceof MakeRoomArgs a) {
      makeRoom(o, a);
    } else {
      TooManyRestartsArgs a = (TooManyRestartsArgs) s;
      putNamespaces(o, a.namespaces());
      putSelector(o, "labelSelector", a.labelSelector());
      o.put("podRestartThreshold", a.threshold());
      putFlag(o, "includingInitContainers", a.includingInitContainers());
      putStrings(o, "states", a.states());
    }
    return o;
  }

  /** Every argument, the defaults too, so the file says what runs. */
  private static void makeRoom(ObjectNode o, MakeRoomArgs a) {
    o.put("pendingFor", exact(a.pendingFor()));
    putNamespaces(o, a.namespaces());
    putSelector(o, "labelSelector", a.labelSelector());
    o.put("maxMovesPerPlan", a.maxMovesPerPlan());
    o.put("maxPlans", a.maxPlans());
    a.freeNodes().ifPresent(f -> {
      ObjectNode free = o.putObject("freeNodes");
      putPercents(free.putObject("thresholds"), f.thresholds());
      free.put("maxNodes", f.maxNodes()).put("maxMovesPerNode", f.maxMovesPerNode()).put("keepEmptyFor", exact(f.keepEmptyFor()));
    });
    o.put("planTimeout", exact(a.planTimeout()));
  }

  /** Koordinator's names; the defaults are written too, so the file says what runs. */
  private static void lowNodeLoad(ObjectNode o, LowNodeLoadArgs a) {
    putFlag(o, "paused", a.paused());
    if (a.numberOfNodes() != 0) {
      o.put("numberOfNodes", a.numberOfNodes());
    }
    o.put("nodeMetricExpirationSeconds", a.nodeMetricExpiration().toSeconds());
    if (!a.namespaces().equals(NamespaceFilter.ALL)) {
      o.set("evictableNamespaces", namespaces(a.namespaces()));
    }
    putSelector(o, "nodeSelector", a.nodeSelector());
    a.podSelectors().forEach(selector -> putSelector(o.withArray("podSelectors").addObject(), "selector", selector));
    o.put("nodeFit", a.nodeFit());
    putFlag(o, "useDeviationThresholds", a.useDeviationThresholds());
    putPercents(o.putObject("lowThresholds"), a.lowThresholds());
    putPercents(o.putObject("highThresholds"), a.highThresholds());
    if (!a.prodLowThresholds().isEmpty()) {
      putPercents(o.putObject("prodLowThresholds"), a.prodLowThresholds());
      putPercents(o.putObject("prodHighThresholds"), a.prodHighThresholds());
    }
    ObjectNode weights = o.putObject("resourceWeights");
    new TreeSet<>(a.resourceWeights().keySet()).forEach(r -> weights.put(r, a.resourceWeights().get(r)));
    o.putObject("anomalyCondition").put("consecutiveAbnormalities", a.consecutiveAbnormalities());
    o.put("detectorCacheTimeout", exact(a.detectorCacheTimeout()));
  }

  private static void putPercents(ObjectNode o, java.util.Map<String, Double> percents) {
    new TreeSet<>(percents.keySet()).forEach(k -> {
      double v = percents.get(k);
      if (v == Math.rint(v)) {
        o.put(k, (long) v);
      } else {
        o.put(k, v);
      }
    });
  }

  private static ObjectNode namespaces(NamespaceFilter filter) {
    ObjectNode o = JSON.objectNode();
    filter.include().forEach(n -> o.withArray("include").add(n));
    filter.exclude().forEach(n -> o.withArray("exclude").add(n));
    return o;
  }

  private static void putNamespaces(ObjectNode o, NamespaceFilter filter) {
    if (!filter.equals(NamespaceFilter.ALL)) {
      o.set("namespaces", namespaces(filter));
    }
  }

  private static void putSelector(ObjectNode o, String field, LabelSelector selector) {
    if (selector.isEmpty()) {
      return;
    }
    ObjectNode s = o.putObject(field);
    if (!selector.matchLabels().isEmpty()) {
      ObjectNode labels = s.putObject("matchLabels");
      new TreeSet<>(selector.matchLabels().keySet()).forEach(k -> labels.put(k, selector.matchLabels().get(k)));
    }
    for (LabelSelector.Requirement r : selector.matchExpressions()) {
      ObjectNode e = s.withArray("matchExpressions").addObject();
      e.put("key", r.key());
      e.put("operator", r.operator().name());
      r.values().stream().sorted().forEach(v -> e.withArray("values").add(v));
    }
  }

  private static void putStrings(ObjectNode o, String field, Collection<String> values) {
    if (!values.isEmpty()) {
      new TreeSet<>(values).forEach(v -> o.withArray(field).add(v));
    }
  }

  private static void putInts(ObjectNode o, String field, Collection<Integer> values) {
    if (!values.isEmpty()) {
      new TreeSet<>(values).forEach(v -> o.withArray(field).add(v));
    }
  }

  private static void putFlag(ObjectNode o, String field, boolean value) {
    if (value) {
      o.put(field, true);
    }
  }

  /** A duration that reads back exactly: whole seconds, or milliseconds when it has a fraction. */
  private static String exact(Duration d) {
    return d.getNano() == 0 ? d.toSeconds() + "s" : d.getNano() % 1_000_000 == 0 ? d.toMillis() + "ms" : d.toNanos() + "ns";
  }
}
