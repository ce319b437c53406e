package io.podsweeper.policy;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The upstream descheduler's plugin arguments (v0.36), read strictly (unknown arguments are errors, as upstream's
 * strict codec makes them) and validated as upstream validates them. Shared by every format that embeds them.
 */
public final class DeschedulerPlugins {
  public static final String DEFAULT_EVICTOR = "DefaultEvictor";
  /** Deschedule plugins Podsweeper runs. */
  public static final Set<String> DESCHEDULE = Set.of("PodLifeTime", "RemoveFailedPods", "RemovePodsHavingTooManyRestarts",
      NodeTaintsArgs.NAME, NodeAffinityArgs.NAME, InterPodAntiAffinityArgs.NAME);
  /** Balance plugins Podsweeper runs. */
  public static final Set<String> BALANCE = Set.of(RemoveDuplicatesArgs.NAME, NodeUtilizationArgs.LOW, NodeUtilizationArgs.HIGH,
      TopologySpreadArgs.NAME, LowNodeLoadArgs.NAME, MakeRoomArgs.NAME);
  /** Koordinator's own plugins: not upstream's, so a descheduler/v1alpha2 DeschedulerPolicy must not name them. */
  public static final Set<String> KOORDINATOR_ONLY = Set.of(LowNodeLoadArgs.NAME);
  /** Podsweeper's own plugins: only a PodSweeperPolicy may name them. */
  public static final Set<String> PODSWEEPER_ONLY = Set.of(MakeRoomArgs.NAME);
  private static final double MIN_PERCENT = 0;
  private static final double MAX_PERCENT = 100;

  private DeschedulerPlugins() {}

  /** The args of a deschedule or balance plugin; {@code args} may be a missing node (no args given). */
  /**
   * @param prometheus the policy's Prometheus {@code metricsProviders} entry, for LowNodeUtilization's
   *     {@code metricsUtilization.source: Prometheus}
   */
  public static StrategyArgs strategy(String plugin, ConfigNode given, String profile, Optional<PrometheusQuery.Server> prometheus) {
    ConfigNode args = DESCHEDULE.contains(plugin) || BALANCE.contains(plugin) ? typeMeta(plugin, given) : given;
    return switch (plugin) {
      case "PodLifeTime" -> new PodLifeTimeArgs(List.of(podLifeTime(args, profile)));
      case "RemoveFailedPods" -> removeFailedPods(args);
      case "RemovePodsHavingTooManyRestarts" -> tooManyRestarts(args);
      case NodeTaintsArgs.NAME -> nodeTaints(args);
      case NodeAffinityArgs.NAME -> nodeAffinity(args);
      case InterPodAntiAffinityArgs.NAME -> interPodAntiAffinity(args);
      case RemoveDuplicatesArgs.NAME -> removeDuplicates(args);
      case NodeUtilizationArgs.LOW -> lowNodeUtilization(args, prometheus);
      case NodeUtilizationArgs.HIGH -> highNodeUtilization(args);
      case TopologySpreadArgs.NAME -> topologySpread(args);
      case LowNodeLoadArgs.NAME -> lowNodeLoad(args);
      case MakeRoomArgs.NAME -> makeRoom(args);
      default -> throw args.error("unknown plugin \"" + plugin + "\"");
    };
  }

  /**
   * Every args type inlines TypeMeta, so args may say their {@code apiVersion} and {@code kind}; a kind given must be
   * the plugin's own args kind ({@code PodLifeTime}: {@code PodLifeTimeArgs}). Returns the args without the two.
   */
  private static ConfigNode typeMeta(String plugin, ConfigNode args) {
    if (args.has("apiVersion")) {
      args.child("apiVersion").string();
    }
    if (args.has("kind")) {
      String kind = args.child("kind").string();
      if (!kind.equals(plugin + "Args")) {
        throw args.child("kind").error("must be " + plugin + "Args (the kind of " + plugin + "'s args), got \"" + kind + "\"");
      }
    }
    return args.without(Set.of("apiVersion", "kind"));
  }

  static Rule podLifeTime(ConfigNode args, String profile) {
    args.requireObjectOrAbsent(Set.of("maxPodLifeTimeSeconds", "states", "conditions", "exitCodes", "ownerKinds", "namespaces",
        "labelSelector", "includingInitContainers", "includingEphemeralContainers"));
    OptionalLong maxSeconds = args.optionalLong("maxPodLifeTimeSeconds", 0, 100L * 365 * 86_400);
    List<PodState> states = new ArrayList<>();
    for (ConfigNode item : args.list("states")) {
      PodState state = podLifeTimeState(item);
      if (!states.contains(state)) {
        states.add(state);
      }
    }
    List<ConditionFilter> conditions = args.mapList("conditions", c -> {
      c.requireObject(Set.of("type", "status", "reason", "minTimeSinceLastTransitionSeconds"));
      ConditionFilter f = new ConditionFilter(c.optionalString("type"), c.optionalString("status"), c.optionalString("reason"),
          longSeconds(c, "minTimeSinceLastTransitionSeconds"));
      if (f.type().isEmpty() && f.status().isEmpty() && f.reason().isEmpty() && f.minTimeSinceLastTransition().isEmpty()) {
        throw c.error("a condition filter needs at least one of type, status, reason, minTimeSinceLastTransitionSeconds");
      }
      return f;
    });
    Set<Integer> exitCodes = exitCodes(args);
    if (maxSeconds.isEmpty() && states.isEmpty() && conditions.isEmpty() && exitCodes.isEmpty()) {
      throw args.error("PodLifeTime needs at least one of maxPodLifeTimeSeconds, states, conditions, exitCodes");
    }
    Set<String> ownerInclude = Set.of();
    Set<String> ownerExclude = Set.of();
    if (args.has("ownerKinds")) {
      ConfigNode owners = args.child("ownerKinds").requireObject(Set.of("include", "exclude"));
      ownerInclude = new LinkedHashSet<>(owners.stringList("include"));
      ownerExclude = new LinkedHashSet<>(owners.stringList("exclude"));
      if (!ownerInclude.isEmpty() && !ownerExclude.isEmpty()) {
        throw owners.error("only one of include/exclude ownerKinds can be set");
      }
    }
    // Upstream truncates the age to whole seconds and wants it strictly greater than the value: N.9 s is not older
    // than N. Strictly older than N+1 s minus a nanosecond says exactly that.
    return new Rule(profile, namespaces(args), LabelSelector.EVERYTHING, Selectors.read(args, "labelSelector"), states,
        maxSeconds.isPresent() ? Optional.of(Duration.ofSeconds(maxSeconds.getAsLong() + 1).minusNanos(1)) : Optional.empty(),
        Optional.empty(),
        conditions, exitCodes, ownerInclude, ownerExclude, args.bool("includingInitContainers", false),
        args.bool("includingEphemeralContainers", false), Optional.empty(), Set.of());
  }

  /** One of PodLifeTime's {@code states}. */
  static PodState podLifeTimeState(ConfigNode item) {
    String name = item.string();
    return PodState.parse(name)
        .orElseThrow(() -> item.error("states must be one of [" + PodState.allowedNames() + "], got \"" + name + "\""));
  }

  static RemoveFailedPodsArgs removeFailedPods(ConfigNode args) {
    args.requireObjectOrAbsent(Set.of("namespaces", "labelSelector", "excludeOwnerKinds", "minPodLifetimeSeconds", "reasons",
        "exitCodes", "includingInitContainers"));
    OptionalLong minSeconds = args.optionalLong("minPodLifetimeSeconds", 0, 100L * 365 * 86_400);
    return new RemoveFailedPodsArgs(namespaces(args), Selectors.read(args, "labelSelector"),
        new LinkedHashSet<>(args.stringList("excludeOwnerKinds")),
        minSeconds.isPresent() ? Duration.ofSeconds(minSeconds.getAsLong()) : RemoveFailedPodsArgs.DEFAULT_MIN_POD_LIFETIME,
        new LinkedHashSet<>(args.stringList("reasons")), exitCodes(args), args.bool("includingInitContainers", false));
  }

  static TooManyRestartsArgs tooManyRestarts(ConfigNode args) {
    args.requireObjectOrAbsent(Set.of("namespaces", "labelSelector", "podRestartThreshold", "includingInitContainers", "states"));
    OptionalInt threshold = args.optionalInt("podRestartThreshold", Integer.MIN_VALUE, Integer.MAX_VALUE);
    if (threshold.isEmpty() || threshold.getAsInt() < 1) {
      throw args.child("podRestartThreshold").error("invalid PodsHavingTooManyRestarts threshold: must be at least 1");
    }
    Set<String> states = new LinkedHashSet<>();
    for (ConfigNode item : args.list("states")) {
      String s = item.string();
      if (!s.equals("Running") && !s.equals("CrashLoopBackOff")) {
        throw item.error("states must be one of [CrashLoopBackOff Running], got \"" + s + "\"");
      }
      states.add(s);
    }
    return new TooManyRestartsArgs(namespaces(args), Selectors.read(args, "labelSelector"), threshold.getAsInt(),
        args.bool("includingInitContainers", false), states);
  }

  static NodeTaintsArgs nodeTaints(ConfigNode args) {
    args.requireObjectOrAbsent(Set.of("namespaces", "labelSelector", "includePreferNoSchedule", "excludedTaints", "includedTaints"));
    List<String> excluded = args.stringList("excludedTaints");
    List<String> included = args.stringList("includedTaints");
    if (!excluded.isEmpty() && !included.isEmpty()) {
      throw args.error("either includedTaints or excludedTaints can be set, but not both");
    }
    return new NodeTaintsArgs(namespaces(args), Selectors.read(args, "labelSelector"), args.bool("includePreferNoSchedule", false),
        excluded, included);
  }

  static NodeAffinityArgs nodeAffinity(ConfigNode args) {
    args.requireObjectOrAbsent(Set.of("namespaces", "labelSelector", "nodeAffinityType"));
    List<String> types = args.stringList("nodeAffinityType");
    if (types.isEmpty()) {
      throw args.child("nodeAffinityType").error("nodeAffinityType needs to be set");
    }
    // Upstream accepts other values and only logs them as invalid at run time; a policy that can never act is an error here.
    for (String type : types) {
      if (!type.equals(NodeAffinityArgs.REQUIRED) && !type.equals(NodeAffinityArgs.PREFERRED)) {
        throw args.child("nodeAffinityType").error("invalid nodeAffinityType \"" + type + "\" (one of "
            + NodeAffinityArgs.REQUIRED + ", " + NodeAffinityArgs.PREFERRED + ")");
      }
    }
    return new NodeAffinityArgs(namespaces(args), Selectors.read(args, "labelSelector"), types);
  }

  static InterPodAntiAffinityArgs interPodAntiAffinity(ConfigNode args) {
    args.requireObjectOrAbsent(Set.of("namespaces", "labelSelector"));
    return new InterPodAntiAffinityArgs(namespaces(args), Selectors.read(args, "labelSelector"));
  }

  static RemoveDuplicatesArgs removeDuplicates(ConfigNode args) {
    args.requireObjectOrAbsent(Set.of("namespaces", "excludeOwnerKinds"));
    return new RemoveDuplicatesArgs(namespaces(args), new LinkedHashSet<>(args.stringList("excludeOwnerKinds")));
  }

  static NodeUtilizationArgs lowNodeUtilization(ConfigNode args, Optional<PrometheusQuery.Server> prometheus) {
    args.requireObjectOrAbsent(Set.of("thresholds", "targetThresholds", "useDeviationThresholds", "numberOfNodes",
        "evictableNamespaces", "evictionLimits", "metricsUtilization"));
    Optional<String> query = prometheusQuery(args);
    boolean measured = query.isEmpty() && metricsUtilization(args);
    boolean deviation = args.bool("useDeviationThresholds", false);
    Map<String, Double> low = thresholds(args, "thresholds");
    Map<String, Double> target = thresholds(args, "targetThresholds");
    if (!low.keySet().equals(target.keySet())) {
      throw args.error("thresholds and targetThresholds configured different resources");
    }
    Optional<PrometheusQuery> queried = Optional.empty();
    if (query.isPresent()) {
      // As upstream: the query yields one number per node, so it is the only resource thresholds may name.
      for (String field : List.of("thresholds", "targetThresholds")) {
        if (!args.child(field).fieldNames().equals(List.of(PrometheusQuery.METRIC_RESOURCE))) {
          throw args.child(field).error(field + " are expected to specify a single instance of \"" + PrometheusQuery.METRIC_RESOURCE
              + "\" resource with source: Prometheus, got " + args.child(field).fieldNames() + " instead");
        }
      }
      PrometheusQuery.Server server = prometheus.orElseThrow(() -> args.child("metricsUtilization").child("source").error(
          "source Prometheus needs the policy's metricsProviders entry with source: Prometheus and the server's url"));
      queried = Optional.of(new PrometheusQuery(server, query.get()));
    }
    for (Map.Entry<String, Double> e : low.entrySet()) {
      if (!deviation && e.getValue() > target.get(e.getKey())) {
        throw args.child("thresholds").error("thresholds' " + e.getKey() + " percentage is greater than targetThresholds'");
      }
    }
    OptionalInt nodeLimit = OptionalInt.empty();
    if (args.has("evictionLimits")) {
      ConfigNode limits = args.child("evictionLimits").requireObject(Set.of("node"));
      nodeLimit = limits.optionalInt("node", 0, Integer.MAX_VALUE);
    }
    return new NodeUtilizationArgs(false, low, target, deviation, numberOfNodes(args), evictableNamespaces(args), false, nodeLimit,
        measured, queried);
  }

  /**
   * LowNodeUtilization's {@code metricsUtilization}, validated as upstream: true for metrics-server usage
   * ({@code source: KubernetesMetrics}, or the deprecated {@code metricsServer: true}), false for requests.
   */
  private static boolean metricsUtilization(ConfigNode args) {
    if (!args.has("metricsUtilization")) {
      return false;
    }
    ConfigNode metrics = args.child("metricsUtilization").requireObject(Set.of("metricsServer", "source", "prometheus"));
    String source = metrics.optionalString("source").orElse("");
    boolean metricsServer = metrics.bool("metricsServer", false);
    switch (source) {
      case "KubernetesMetrics" -> {
        if (metricsServer) {
          throw metrics.error("it is not allowed to set both \"KubernetesMetrics\" source and metricsServer");
        }
        if (metrics.has("prometheus")) {
          throw metrics.child("prometheus")
              .error("prometheus configuration is not allowed to set when source is set to \"KubernetesMetrics\"");
        }
        return true;
      }
      case "Prometheus" -> {
        ConfigNode prometheus = metrics.child("prometheus");
        if (!metrics.has("prometheus") || prometheus.requireObject(Set.of("query")).optionalString("query").orElse("").isEmpty()) {
          throw metrics.error("prometheus query is required when metrics source is set to \"Prometheus\"");
        }
        return false;
      }
      case "" -> {
        if (metrics.has("prometheus")) {
          throw metrics.child("prometheus").error("only with source: Prometheus");
        }
        return metricsServer;
      }
      default -> throw metrics.child("source").error("unknown metrics source \"" + source + "\" (KubernetesMetrics or Prometheus)");
    }
  }

  /** The query of {@code metricsUtilization.source: Prometheus} (validated with the rest by {@link #metricsUtilization}). */
  private static Optional<String> prometheusQuery(ConfigNode args) {
    ConfigNode metrics = args.child("metricsUtilization");
    if (!args.has("metricsUtilization") || !metrics.optionalString("source").orElse("").equals("Prometheus")) {
      return Optional.empty();
    }
    metricsUtilization(args);
    return metrics.child("prometheus").optionalString("query");
  }

  /**
   * The policy's {@code metricsProviders}, validated as upstream: each source at most once; KubernetesMetrics not
   * with the deprecated {@code metricsCollector.enabled}; Prometheus with a parsable absolute url and, when an
   * {@code authToken} is given, its Secret's namespace and name. Returns the Prometheus entry's server.
   */
  public static Optional<PrometheusQuery.Server> metricsProviders(ConfigNode root) {
    if (root.has("metricsCollector")) {
      // Upstream's MetricsCollector has this one field.
      root.child("metricsCollector").requireObject(Set.of("enabled")).bool("enabled", false);
    }
    Set<String> sources = new HashSet<>();
    Optional<PrometheusQuery.Server> prometheus = Optional.empty();
    for (ConfigNode provider : root.list("metricsProviders")) {
      provider.requireObject(Set.of("source", "prometheus"));
      String source = provider.requiredString("source");
      if (!sources.add(source)) {
        throw provider.child("source").error("metric provider \"" + source + "\" is already configured, each source can be configured only once");
      }
      switch (source) {
        case "KubernetesMetrics" -> {
          if (root.has("metricsCollector") && root.child("metricsCollector").bool("enabled", false)) {
            throw provider.error("it is not allowed to combine metrics provider when metrics collector is enabled");
          }
          if (provider.has("prometheus")) {
            throw provider.child("prometheus").error("only with source: Prometheus");
          }
        }
        case "Prometheus" -> prometheus = Optional.of(prometheusServer(provider));
        default -> throw provider.child("source").error("unknown metrics source \"" + source + "\" (KubernetesMetrics or Prometheus)");
      }
    }
    return prometheus;
  }

  private static PrometheusQuery.Server prometheusServer(ConfigNode provider) {
    if (!provider.has("prometheus")) {
      throw provider.error("prometheus configuration is required when prometheus source is enabled");
    }
    ConfigNode prometheus = provider.child("prometheus").requireObject(Set.of("url", "authToken"));
    String url = prometheus.optionalString("url").orElse("");
    if (url.isEmpty()) {
      throw prometheus.error("prometheus URL is required when prometheus is enabled");
    }
    URI uri;
    try {
      uri = new URI(url);
    } catch (URISyntaxException e) {
      throw prometheus.child("url").error("error parsing prometheus URL: " + e.getMessage());
    }
    if (!uri.isAbsolute() || !List.of("http", "https").contains(uri.getScheme()) || uri.getHost() == null) {
      throw prometheus.child("url").error("must be an http or https URL with a host, e.g. https://prometheus.monitoring:9090");
    }
    Optional<PrometheusQuery.SecretRef> token = Optional.empty();
    if (prometheus.has("authToken")) {
      ConfigNode authToken = prometheus.child("authToken").requireObject(Set.of("secretReference"));
      if (!authToken.has("secretReference")) {
        throw authToken.error("prometheus authToken secret is expected to be set when authToken field is");
      }
      ConfigNode secret = authToken.child("secretReference").requireObject(Set.of("namespace", "name"));
      String namespace = secret.optionalString("namespace").orElse("");
      String name = secret.optionalString("name").orElse("");
      if (namespace.isEmpty() || name.isEmpty()) {
        throw secret.error("prometheus authToken secret reference does not set both namespace and name");
      }
      token = Optional.of(new PrometheusQuery.SecretRef(namespace, name));
    }
    return new PrometheusQuery.Server(uri, token);
  }

  static NodeUtilizationArgs highNodeUtilization(ConfigNode args) {
    args.requireObjectOrAbsent(Set.of("thresholds", "numberOfNodes", "evictableNamespaces", "evictionModes"));
    Map<String, Double> low = thresholds(args, "thresholds");
    boolean onlyThresholding = false;
    for (ConfigNode mode : args.list("evictionModes")) {
      if (!mode.string().equals("OnlyThresholdingResources")) {
        throw mode.error("invalid eviction mode \"" + mode.string() + "\" (only OnlyThresholdingResources)");
      }
      onlyThresholding = true;
    }
    return new NodeUtilizationArgs(true, low, Map.of(), false, numberOfNodes(args), evictableNamespaces(args), onlyThresholding,
        OptionalInt.empty(), false, Optional.empty());
  }

  static TopologySpreadArgs topologySpread(ConfigNode args) {
    args.requireObjectOrAbsent(Set.of("namespaces", "labelSelector", "constraints", "topologyBalanceNodeFit"));
    Set<String> constraints = new LinkedHashSet<>();
    for (ConfigNode item : args.list("constraints")) {
      String value = item.string();
      if (!value.equals(TopologySpreadArgs.HARD) && !value.equals(TopologySpreadArgs.SOFT)) {
        throw item.error("constraint \"" + value + "\" is not one of [" + TopologySpreadArgs.HARD + " " + TopologySpreadArgs.SOFT + "]");
      }
      constraints.add(value);
    }
    // Upstream's default: hard constraints only.
    if (constraints.isEmpty()) {
      constraints.add(TopologySpreadArgs.HARD);
    }
    return new TopologySpreadArgs(namespaces(args), Selectors.read(args, "labelSelector"), constraints,
        args.bool("topologyBalanceNodeFit", true));
  }

  /** How long a node MakeRoom emptied stays tainted for a scale-down: a positive Go duration, at most a day. */
  private static Duration keepEmptyFor(ConfigNode free) {
    Duration keep = free.optionalGoDuration("keepEmptyFor").orElse(MakeRoomArgs.FreeNodes.DEFAULT_KEEP_EMPTY_FOR);
    if (keep.isZero() || keep.compareTo(MakeRoomArgs.FreeNodes.MAX_KEEP_EMPTY_FOR) > 0) {
      throw free.child("keepEmptyFor").error("must be more than 0s and at most 24h: the emptied node stays tainted that long, "
          + "for a scale-down to take it");
    }
    return keep;
  }

  /** MakeRoom's args, with their defaults (docs/configuration.md "MakeRoom"). */
  static MakeRoomArgs makeRoom(ConfigNode args) {
    args.requireObjectOrAbsent(Set.of("pendingFor", "namespaces", "labelSelector", "maxMovesPerPlan", "maxPlans", "freeNodes", "planTimeout"));
    Duration pendingFor = args.optionalGoDuration("pendingFor").orElse(MakeRoomArgs.DEFAULT_PENDING_FOR);
    Optional<MakeRoomArgs.FreeNodes> freeNodes = Optional.empty();
    if (args.has("freeNodes")) {
      ConfigNode free = args.child("freeNodes").requireObject(Set.of("thresholds", "maxNodes", "maxMovesPerNode", "keepEmptyFor"));
      Map<String, Double> thresholds = thresholds(free, "thresholds");
      thresholds.keySet().forEach(resource -> resourceName(free.child("thresholds").child(resource), resource));
      freeNodes = Optional.of(new MakeRoomArgs.FreeNodes(thresholds,
          free.optionalInt("maxNodes", 1, MakeRoomArgs.MAX_PLANS).orElse(MakeRoomArgs.FreeNodes.DEFAULT_MAX_NODES),
          free.optionalInt("maxMovesPerNode", 1, MakeRoomArgs.FreeNodes.MAX_MOVES_PER_NODE)
              .orElse(MakeRoomArgs.FreeNodes.DEFAULT_MAX_MOVES_PER_NODE),
          keepEmptyFor(free)));
    }
    Duration planTimeout = args.optionalGoDuration("planTimeout").orElse(MakeRoomArgs.DEFAULT_PLAN_TIMEOUT);
    if (planTimeout.isZero()) {
      throw args.child("planTimeout").error("must be more than 0s: a plan needs time to be carried out");
    }
    return new MakeRoomArgs(pendingFor, namespaces(args), Selectors.read(args, "labelSelector"),
        args.optionalInt("maxMovesPerPlan", 1, MakeRoomArgs.MAX_MOVES_PER_PLAN).orElse(MakeRoomArgs.DEFAULT_MAX_MOVES_PER_PLAN),
        args.optionalInt("maxPlans", 1, MakeRoomArgs.MAX_PLANS).orElse(MakeRoomArgs.DEFAULT_MAX_PLANS), freeNodes, planTimeout);
  }

  /**
   * Koordinator's LowNodeLoadArgs, with its defaults. Arguments of machinery Podsweeper does not have are errors
   * that name them, never ignored: each would change which pods go.
   */
  static LowNodeLoadArgs lowNodeLoad(ConfigNode args) {
    args.requireObjectOrAbsent(Set.of("paused", "dryRun", "numberOfNodes", "nodeMetricExpirationSeconds",
        "evictableNamespaces", "nodeSelector", "podSelectors", "nodeFit", "useDeviationThresholds", "lowThresholds", "highThresholds",
        "prodLowThresholds", "prodHighThresholds", "resourceWeights", "anomalyCondition", "detectorCacheTimeout", "nodePools"));
    if (args.has("nodePools")) {
      throw args.child("nodePools").error("not supported: give each node pool a profile of its own, with LowNodeLoad's nodeSelector");
    }
    if (args.bool("dryRun", false)) {
      throw args.child("dryRun").error("not supported per plugin: set dryRun at the top level (it holds for the whole policy)");
    }
    boolean deviation = args.bool("useDeviationThresholds", false);
    Map<String, Double> low = loadThresholds(args, "lowThresholds", "highThresholds", deviation);
    Map<String, Double> high = thresholds(args, "highThresholds");
    Map<String, Double> prodLow = Map.of();
    Map<String, Double> prodHigh = Map.of();
    if (args.has("prodLowThresholds") || args.has("prodHighThresholds")) {
      prodLow = loadThresholds(args, "prodLowThresholds", "prodHighThresholds", deviation);
      prodHigh = thresholds(args, "prodHighThresholds");
      for (String resource : prodHigh.keySet()) {
        // Koordinator's validation: Prod pods alone may not be allowed more than the whole node.
        if (!deviation && high.containsKey(resource) && prodHigh.get(resource) > high.get(resource)) {
          throw args.child("prodHighThresholds").child(resource).error("prodHighThresholds' " + resource
              + " percentage is greater than highThresholds'");
        }
      }
    }
    // As Koordinator's defaulting: weight 1 for cpu, memory and every thresholded resource unless given.
    Map<String, Long> weights = new java.util.TreeMap<>(Map.of("cpu", 1L, "memory", 1L));
    for (String resource : low.keySet()) {
      weights.put(resource, 1L);
    }
    for (String resource : prodLow.keySet()) {
      weights.put(resource, 1L);
    }
    if (args.has("resourceWeights")) {
      ConfigNode w = args.child("resourceWeights");
      w.requireObject(Set.copyOf(w.fieldNames()));
      for (String resource : w.fieldNames()) {
        resourceName(w.child(resource), resource);
        weights.put(resource, (long) w.child(resource).intValue(1, 1_000_000));
      }
    }
    int consecutive = LowNodeLoadArgs.DEFAULT_CONSECUTIVE_ABNORMALITIES;
    if (args.has("anomalyCondition")) {
      ConfigNode anomaly = args.child("anomalyCondition").requireObject(Set.of("consecutiveAbnormalities", "consecutiveNormalities", "timeout"));
      for (String field : List.of("consecutiveNormalities", "timeout")) {
        if (anomaly.has(field)) {
          throw anomaly.child(field).error("not supported: a node is acted on in the pass its count passes consecutiveAbnormalities,"
              + " and counted from zero again after; leave it out");
        }
      }
      // As Koordinator's defaulting: 0 means the default.
      int given = anomaly.optionalInt("consecutiveAbnormalities", 0, 1_000_000).orElse(0);
      consecutive = given == 0 ? consecutive : given;
    }
    List<LabelSelector> podSelectors = new ArrayList<>();
    for (ConfigNode selector : args.list("podSelectors")) {
      selector.requireObject(Set.of("name", "selector"));
      // As Koordinator: an entry without a selector selects nothing extra, it is skipped.
      if (selector.has("selector")) {
        podSelectors.add(Selectors.read(selector, "selector"));
      }
    }
    if (podSelectors.contains(LabelSelector.EVERYTHING)) {
      // One selector that matches every pod: the same as none.
      podSelectors.clear();
    }
    return new LowNodeLoadArgs(args.bool("paused", false), numberOfNodes(args),
        Duration.ofSeconds(args.optionalLong("nodeMetricExpirationSeconds", 1, 100L * 365 * 86_400)
            .orElse(LowNodeLoadArgs.DEFAULT_EXPIRATION.toSeconds())),
        namespaces(args, "evictableNamespaces"), Selectors.read(args, "nodeSelector"), podSelectors, args.bool("nodeFit", true), low, high,
        prodLow, prodHigh, deviation, weights, consecutive,
        args.optionalDuration("detectorCacheTimeout").orElse(LowNodeLoadArgs.DEFAULT_DETECTOR_CACHE_TIMEOUT));
  }

  /**
   * LowNodeLoad's {@code lowField} thresholds, checked against {@code highField}'s: the same resources, each a
   * resource LowNodeLoad can know ({@link #resourceName}), low at most high unless they are deviations.
   */
  private static Map<String, Double> loadThresholds(ConfigNode args, String lowField, String highField, boolean deviation) {
    Map<String, Double> low = thresholds(args, lowField);
    Map<String, Double> high = thresholds(args, highField);
    if (!low.keySet().equals(high.keySet())) {
      throw args.error(lowField + " and " + highField + " configured different resources");
    }
    for (String resource : low.keySet()) {
      resourceName(args.child(lowField).child(resource), resource);
      if (!deviation && low.get(resource) > high.get(resource)) {
        throw args.child(lowField).error(lowField + "' " + resource + " percentage is greater than " + highField + "'");
      }
    }
    return low;
  }

  /**
   * A resource a measurement can hold: cpu, memory, ephemeral-storage, pods (counted, not measured), or an extended
   * resource, which is always domain-qualified ({@code example.com/foo}). Anything else is a typo that would make every
   * node unknown.
   */
  private static void resourceName(ConfigNode at, String resource) {
    if (!Set.of("cpu", "memory", "ephemeral-storage", LowNodeLoadArgs.PODS).contains(resource)
        && !resource.matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")) {
      throw at.error("unknown resource \"" + resource + "\" (cpu, memory, ephemeral-storage, pods, or an extended resource like"
          + " example.com/foo)");
    }
  }

  /** A resource -> percent map: not empty, every value in [0, 100]. */
  private static Map<String, Double> thresholds(ConfigNode args, String field) {
    Map<String, Double> out = new java.util.TreeMap<>();
    ConfigNode node = args.child(field);
    if (args.has(field)) {
      if (node.raw() == null || !node.raw().isObject()) {
        throw node.error("must be an object of resource: percent");
      }
      for (String resource : node.fieldNames()) {
        ConfigNode value = node.child(resource);
        if (!value.raw().isNumber()) {
          throw value.error("must be a number (percent)");
        }
        double percent = value.raw().doubleValue();
        if (percent < MIN_PERCENT || percent > MAX_PERCENT) {
          throw value.error(field + " config is not valid: " + resource + " threshold not in [0, 100] range");
        }
        out.put(resource, percent);
      }
    }
    if (out.isEmpty()) {
      throw node.error(field + " config is not valid: no resource threshold is configured");
    }
    return out;
  }

  private static int numberOfNodes(ConfigNode args) {
    return args.optionalInt("numberOfNodes", 0, Integer.MAX_VALUE).orElse(0);
  }

  /** {@code evictableNamespaces}: only {@code exclude}, as upstream. */
  private static List<String> evictableNamespaces(ConfigNode args) {
    if (!args.has("evictableNamespaces")) {
      return List.of();
    }
    ConfigNode ns = args.child("evictableNamespaces").requireObject(Set.of("include", "exclude"));
    if (!ns.stringList("include").isEmpty()) {
      throw ns.child("include").error("only Exclude namespaces can be set, inclusion is not supported");
    }
    return ns.stringList("exclude");
  }

  /** DefaultEvictor args, as upstream has them; a missing node gives the defaults. */
  public static EvictorArgs defaultEvictor(ConfigNode args) {
    return defaultEvictor(args, false);
  }

  /**
   * DefaultEvictor args. With {@code podsweeperExtensions}, also {@code evictAllBarePods} (Koordinator's flag: no
   * bare-pod rule at all), which only Podsweeper's own format may carry.
   */
  public static EvictorArgs defaultEvictor(ConfigNode given, boolean podsweeperExtensions) {
    ConfigNode args = typeMeta(DEFAULT_EVICTOR, given);
    Set<String> known = new java.util.HashSet<>(Set.of("podProtections", "evictLocalStoragePods", "evictDaemonSetPods",
        "evictSystemCriticalPods", "evictFailedBarePods", "ignorePvcPods", "ignorePodsWithoutPDB", "priorityThreshold", "nodeFit",
        "nodeSelector", "labelSelector", "namespaceLabelSelector", "minReplicas", "minPodAge", "noEvictionPolicy"));
    if (podsweeperExtensions) {
      known.add("evictAllBarePods");
    }
    args.requireObjectOrAbsent(known);
    Set<Protection> protections = EnumSet.copyOf(Protection.DEFAULT_ENABLED);
    List<String> storageClasses = new ArrayList<>();
    boolean listsUsed = false;
    if (args.has("podProtections")) {
      ConfigNode pp = args.child("podProtections").requireObject(Set.of("defaultDisabled", "extraEnabled", "config"));
      for (Protection p : protectionList(pp, "defaultDisabled", Protection.DEFAULT_ENABLED)) {
        protections.remove(p);
        listsUsed = true;
      }
      for (Protection p : protectionList(pp, "extraEnabled", podsweeperExtensions ? Protection.PODSWEEPER_EXTRA : Protection.EXTRA)) {
        protections.add(p);
        listsUsed = true;
      }
      if (pp.has("config")) {
        ConfigNode config = pp.child("config").requireObject(Set.of("PodsWithPVC"));
        if (config.has("PodsWithPVC")) {
          ConfigNode pvc = config.child("PodsWithPVC").requireObject(Set.of("protectedStorageClasses"));
          for (ConfigNode sc : pvc.list("protectedStorageClasses")) {
            sc.requireObject(Set.of("name"));
            storageClasses.add(sc.requiredString("name"));
          }
        }
      }
    }
    String[][] deprecated = {
      {"evictLocalStoragePods", "PodsWithLocalStorage", "off"}, {"evictDaemonSetPods", "DaemonSetPods", "off"},
      {"evictSystemCriticalPods", "SystemCriticalPods", "off"}, {"evictFailedBarePods", "FailedBarePods", "off"},
      {"ignorePvcPods", "PodsWithPVC", "on"}, {"ignorePodsWithoutPDB", "PodsWithoutPDB", "on"}};
    for (String[] flag : deprecated) {
      if (args.bool(flag[0], false)) {
        if (listsUsed) {
          throw args.child(flag[0]).error("cannot be combined with podProtections; use podProtections only");
        }
        Protection p = Protection.valueOf(flag[1]);
        if (flag[2].equals("off")) {
          protections.remove(p);
        } else {
          protections.add(p);
        }
      }
    }
    OptionalInt thresholdValue = OptionalInt.empty();
    Optional<String> thresholdName = Optional.empty();
    if (args.has("priorityThreshold")) {
      ConfigNode pt = args.child("priorityThreshold").requireObject(Set.of("value", "name"));
      thresholdValue = pt.optionalInt("value", Integer.MIN_VALUE, EvictorArgs.SYSTEM_CRITICAL_PRIORITY);
      thresholdName = pt.optionalString("name");
      if (thresholdValue.isPresent() && thresholdName.isPresent()) {
        throw pt.error("only one of priorityThreshold fields can be set");
      }
    }
    LabelSelector nodeSelector = args.has("nodeSelector")
        ? Selectors.parse(args.child("nodeSelector"), args.child("nodeSelector").string()) : LabelSelector.EVERYTHING;
    OptionalInt minReplicas = args.optionalInt("minReplicas", 0, 1_000_000);
    Optional<Duration> minPodAge = args.optionalGoDuration("minPodAge");
    EvictorArgs.NoEvictionPolicy noEviction = EvictorArgs.NoEvictionPolicy.Unset;
    if (args.has("noEvictionPolicy")) {
      String value = args.child("noEvictionPolicy").string();
      noEviction = switch (value) {
        case "" -> EvictorArgs.NoEvictionPolicy.Unset;
        case "Preferred" -> EvictorArgs.NoEvictionPolicy.Preferred;
        case "Mandatory" -> EvictorArgs.NoEvictionPolicy.Mandatory;
        default -> throw args.child("noEvictionPolicy").error("must be Preferred or Mandatory, got \"" + value + "\"");
      };
    }
    return new EvictorArgs(protections, !args.bool("evictAllBarePods", false), storageClasses, thresholdValue, thresholdName, args.bool("nodeFit", false), nodeSelector,
        Selectors.read(args, "labelSelector"), Selectors.read(args, "namespaceLabelSelector"), minReplicas.orElse(0), minPodAge,
        noEviction);
  }

  /** A list of protections, each of {@code allowed} and at most once, as upstream's validation requires. */
  private static Set<Protection> protectionList(ConfigNode podProtections, String field, Set<Protection> allowed) {
    Set<Protection> listed = EnumSet.noneOf(Protection.class);
    for (ConfigNode item : podProtections.list(field)) {
      if (!listed.add(protection(item, allowed))) {
        throw item.error("duplicate protection \"" + item.string() + "\" in " + field);
      }
    }
    return listed;
  }

  private static Protection protection(ConfigNode item, Set<Protection> allowed) {
    String name = item.string();
    return Protection.parse(name).filter(allowed::contains).orElseThrow(() -> item.error("unknown protection \"" + name
        + "\" (one of " + String.join(", ", allowed.stream().map(Enum::name).sorted().toList()) + ")"));
  }

  /** Upstream's {@code namespaces: {include, exclude}}: exact names, only one of the two. */
  static NamespaceFilter namespaces(ConfigNode args) {
    return namespaces(args, "namespaces");
  }

  /** A {@code {include, exclude}} field of exact names, only one of the two. */
  private static NamespaceFilter namespaces(ConfigNode args, String field) {
    if (!args.has(field)) {
      return NamespaceFilter.ALL;
    }
    ConfigNode ns = args.child(field).requireObject(Set.of("include", "exclude"));
    List<String> include = ns.stringList("include");
    List<String> exclude = ns.stringList("exclude");
    if (!include.isEmpty() && !exclude.isEmpty()) {
      throw ns.error("only one of Include/Exclude namespaces can be set");
    }
    for (String name : java.util.stream.Stream.concat(include.stream(), exclude.stream()).toList()) {
      if (name.contains("*") || name.contains("?")) {
        throw ns.error("namespace \"" + name + "\": upstream namespaces are exact names, not patterns");
      }
    }
    return new NamespaceFilter(include, exclude);
  }

  private static Set<Integer> exitCodes(ConfigNode args) {
    Set<Integer> codes = new LinkedHashSet<>();
    for (ConfigNode item : args.list("exitCodes")) {
      codes.add(item.intValue(Integer.MIN_VALUE, Integer.MAX_VALUE));
    }
    return codes;
  }

  private static Optional<Duration> longSeconds(ConfigNode node, String field) {
    OptionalLong v = node.optionalLong(field, 0, 100L * 365 * 86_400);
    return v.isPresent() ? Optional.of(Duration.ofSeconds(v.getAsLong())) : Optional.empty();
  }
}
