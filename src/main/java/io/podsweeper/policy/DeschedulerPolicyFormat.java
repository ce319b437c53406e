package io.podsweeper.policy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The upstream descheduler's {@code descheduler/v1alpha2 DeschedulerPolicy}: profiles with plugins per extension
 * point and their pluginConfig. Unlike upstream, unknown top-level fields are errors too: a misspelt limit must
 * not be silently ignored.
 */
final class DeschedulerPolicyFormat {
  static final String API_VERSION = "descheduler/v1alpha2";
  static final String KIND = "DeschedulerPolicy";
  private static final Set<String> EXTENSION_POINTS =
      Set.of("presort", "sort", "deschedule", "balance", "filter", "preevictionfilter", "preEvictionFilter");

  private DeschedulerPolicyFormat() {}

  static Policy read(ConfigNode root, String source) {
    root.requireObject(Set.of("apiVersion", "kind", "profiles", "nodeSelector", "maxNoOfPodsToEvictPerNode",
        "maxNoOfPodsToEvictPerNamespace", "maxNoOfPodsToEvictTotal", "evictionFailureEventNotification", "gracePeriodSeconds",
        "metricsCollector", "metricsProviders"));
    Optional<PrometheusQuery.Server> prometheus = DeschedulerPlugins.metricsProviders(root);
    Optional<LabelSelector> nodeSelector = root.has("nodeSelector")
        ? Optional.of(Selectors.parse(root.child("nodeSelector"), root.child("nodeSelector").string())) : Optional.empty();
    Limits limits = limits(root, Limits.DEFAULT_PER_SECOND);
    root.bool("evictionFailureEventNotification", false);
    List<Profile> profiles = new ArrayList<>();
    Set<String> names = new LinkedHashSet<>();
    for (ConfigNode p : root.list("profiles")) {
      Profile profile = profile(p, nodeSelector, false, prometheus);
      if (!names.add(profile.name())) {
        throw p.child("name").error("duplicate profile name \"" + profile.name() + "\"");
      }
      profiles.add(profile);
    }
    if (profiles.isEmpty()) {
      throw root.child("profiles").error("at least one profile is required");
    }
    return new Policy(source, false, limits, Policy.DEFAULT_FULL_PASS_INTERVAL,
        root.optionalLong("gracePeriodSeconds", 0, 86_400L * 365), Guard.DEFAULTS, profiles);
  }

  /** The three upstream limits (per node, per namespace, in total per cycle). */
  static Limits limits(ConfigNode root, double perSecond) {
    return new Limits(root.optionalInt("maxNoOfPodsToEvictPerNode", 0, Integer.MAX_VALUE),
        root.optionalInt("maxNoOfPodsToEvictPerNamespace", 0, Integer.MAX_VALUE),
        root.optionalInt("maxNoOfPodsToEvictTotal", 0, Integer.MAX_VALUE), perSecond);
  }

  /**
   * One profile; {@code podsweeperExtensions} admits the evictor arguments only Podsweeper's own format has.
   *
   * @param prometheus the policy's Prometheus metrics provider, for strategies reading usage from it
   */
  static Profile profile(ConfigNode p, Optional<LabelSelector> nodeSelector, boolean podsweeperExtensions,
      Optional<PrometheusQuery.Server> prometheus) {
    p.requireObject(Set.of("name", "pluginConfig", "plugins"));
    String name = p.requiredString("name");
    Map<String, ConfigNode> configs = new HashMap<>();
    for (ConfigNode c : p.list("pluginConfig")) {
      c.requireObject(Set.of("name", "args"));
      String plugin = c.requiredString("name");
      if (!DeschedulerPlugins.DESCHEDULE.contains(plugin) && !DeschedulerPlugins.BALANCE.contains(plugin)
          && !plugin.equals(DeschedulerPlugins.DEFAULT_EVICTOR)) {
        throw c.child("name").error(unknownPlugin(plugin));
      }
      requireUpstream(c.child("name"), plugin, podsweeperExtensions);
      if (configs.put(plugin, c.child("args")) != null) {
        throw c.child("name").error("duplicate pluginConfig for \"" + plugin + "\"");
      }
    }
    EvictorArgs evictor = DeschedulerPlugins.defaultEvictor(
        configs.getOrDefault(DeschedulerPlugins.DEFAULT_EVICTOR, p.child("pluginConfig").child("DefaultEvictor")), podsweeperExtensions);
    List<StrategyArgs> deschedule = new ArrayList<>();
    List<StrategyArgs> balance = new ArrayList<>();
    if (p.has("plugins")) {
      ConfigNode plugins = p.child("plugins").requireObject(EXTENSION_POINTS);
      for (String point : EXTENSION_POINTS) {
        if (!plugins.has(point)) {
          continue;
        }
        ConfigNode set = plugins.child(point).requireObject(Set.of("enabled", "disabled"));
        for (ConfigNode item : set.list("enabled")) {
          String plugin = item.string();
          requireUpstream(item, plugin, podsweeperExtensions);
          (point.equals("balance") ? balance : deschedule).addAll(enabled(point, plugin, item, configs, name, prometheus));
        }
        set.stringList("disabled");
      }
    }
    return new Profile(name, evictor, deschedule, balance, true, nodeSelector);
  }

  /**
   * Koordinator's own plugins are not upstream's: only Podsweeper's own format (or Koordinator's) may name them; and
   * Podsweeper's own only its own format.
   */
  private static void requireUpstream(ConfigNode at, String plugin, boolean podsweeperExtensions) {
    if (!podsweeperExtensions && DeschedulerPlugins.KOORDINATOR_ONLY.contains(plugin)) {
      throw at.error(plugin + " is Koordinator's plugin, not the descheduler's: use it in a Koordinator DeschedulerConfiguration"
          + " or a PodSweeperPolicy");
    }
    if (!podsweeperExtensions && DeschedulerPlugins.PODSWEEPER_ONLY.contains(plugin)) {
      throw at.error(plugin + " is Podsweeper's own plugin, not the descheduler's: use it in a PodSweeperPolicy (podsweeper.io/v1alpha1)");
    }
  }

  /** What enabling {@code plugin} at {@code point} adds: a strategy, or nothing for the evictor's own points. */
  private static List<StrategyArgs> enabled(String point, String plugin, ConfigNode at, Map<String, ConfigNode> configs, String profile,
      Optional<PrometheusQuery.Server> prometheus) {
    boolean evictorPoint = point.equals("filter") || point.equalsIgnoreCase("preevictionfilter");
    if (evictorPoint) {
      if (!plugin.equals(DeschedulerPlugins.DEFAULT_EVICTOR)) {
        throw at.error(unknownPlugin(plugin) + "; only DefaultEvictor filters");
      }
      return List.of();
    }
    if (point.equals("presort") || point.equals("sort")) {
      throw at.error("no plugin implements " + point + " (upstream parses but never runs it)");
    }
    checkExtensionPoint(at, point, plugin);
    ConfigNode args = configs.get(plugin);
    if (args == null) {
      throw at.error("plugin \"" + plugin + "\" has no pluginConfig entry (upstream requires one, args may be empty)");
    }
    return List.of(DeschedulerPlugins.strategy(plugin, args, profile, prometheus));
  }

  /** A strategy plugin must be known and enabled at the extension point it implements, as upstream requires. */
  static void checkExtensionPoint(ConfigNode at, String point, String plugin) {
    boolean deschedule = DeschedulerPlugins.DESCHEDULE.contains(plugin);
    if (!deschedule && !DeschedulerPlugins.BALANCE.contains(plugin)) {
      throw at.error(unknownPlugin(plugin));
    }
    if (point.equals("balance") && deschedule) {
      throw at.error(plugin + " is a deschedule plugin, not a balance plugin");
    }
    if (point.equals("deschedule") && !deschedule) {
      throw at.error(plugin + " is a balance plugin, not a deschedule plugin");
    }
  }

  /** Names the descheduler's plugins, and Koordinator's apart: a typo of either gets the list it meant. */
  static String unknownPlugin(String plugin) {
    String known = String.join(", ", java.util.stream.Stream.concat(DeschedulerPlugins.DESCHEDULE.stream(),
        DeschedulerPlugins.BALANCE.stream()).filter(p -> !DeschedulerPlugins.KOORDINATOR_ONLY.contains(p)
            && !DeschedulerPlugins.PODSWEEPER_ONLY.contains(p)).sorted().toList());
    return "unknown plugin \"" + plugin + "\" (known: DefaultEvictor, " + known + "; Koordinator's: "
        + String.join(", ", new java.util.TreeSet<>(DeschedulerPlugins.KOORDINATOR_ONLY)) + "; Podsweeper's: "
        + String.join(", ", new java.util.TreeSet<>(DeschedulerPlugins.PODSWEEPER_ONLY)) + ")";
  }
}
