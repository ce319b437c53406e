package io.podsweeper.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * A policy as an operator reads it: its rules by name ({@code validate} counts them), and what a reload changed (the
 * log line of a reload says that, not how many profiles there are).
 *
 * <p>A rule is what a decision names in its {@code rule}: each PodLifeTime rule by its name, and each other strategy
 * of a profile as {@code profile/Strategy} (its decisions name the profile).
 */
public final class PolicySummary {
  private PolicySummary() {}

  /** Every rule of the policy by its name, with its settings, in the policy's order. */
  public static Map<String, Object> rules(Policy policy) {
    Map<String, Object> rules = new LinkedHashMap<>();
    for (Profile profile : policy.profiles()) {
      List<StrategyArgs> strategies = new ArrayList<>(profile.deschedule());
      strategies.addAll(profile.balance());
      for (StrategyArgs strategy : strategies) {
        if (strategy instanceof PodLifeTimeArgs lifetime) {
          String prefix = profile.name().equals(Profile.NATIVE_RULES) ? "" : profile.name() + "/";
          lifetime.rules().forEach(rule -> rules.put(prefix + rule.name(), List.of(rule, profile.evictor())));
        } else {
          rules.put(profile.name() + "/" + strategy.strategyName(), List.of(strategy, profile.evictor(), profile.readyNodesOnly(),
              profile.nodeSelector(), profile.maxRemovalsPerHourPerNamespace()));
        }
      }
    }
    return rules;
  }

  /**
   * A rule that selects running pods by their age alone, with a maxAge under this, is one {@code validate} and
   * {@code plan} warn about: it would remove every running pod of the namespaces it covers, continuously (the live
   * service's blast-radius guard stops that, but the warning belongs before).
   */
  public static final Duration BROAD_MAX_AGE = Duration.ofDays(1);

  /**
   * What a person should look at before running the policy: each rule that selects every running pod of the namespaces
   * it covers (states empty or naming Running; no podSelector, conditions, exitCodes, ownerKinds include, match or
   * per-pod lifetimes; a maxAge under {@link #BROAD_MAX_AGE}).
   */
  public static List<String> warnings(Policy policy) {
    List<String> warnings = new ArrayList<>();
    for (Profile profile : policy.profiles()) {
      for (StrategyArgs strategy : profile.deschedule()) {
        if (strategy instanceof PodLifeTimeArgs lifetime) {
          String prefix = profile.name().equals(Profile.NATIVE_RULES) ? "" : profile.name() + "/";
          lifetime.rules().stream().filter(PolicySummary::selectsEveryRunningPod).forEach(rule -> warnings.add("rule " + prefix + rule.name()
              + " selects every running pod of " + scope(rule) + " once it is older than " + Durations.format(rule.maxAge().get())
              + ": it has no podSelector, conditions, exitCodes, ownerKinds, match or ttlFrom to narrow it (the service's blast-radius"
              + " guard would stop it); narrow it, or give it a maxAge of at least " + Durations.format(BROAD_MAX_AGE)
              + " if every pod is meant"));
        }
      }
    }
    return warnings;
  }

  private static boolean selectsEveryRunningPod(Rule rule) {
    return (rule.states().isEmpty() || rule.states().contains(PodState.RUNNING))
        && rule.maxAge().filter(age -> age.compareTo(BROAD_MAX_AGE) < 0).isPresent()
        && rule.podSelector().isEmpty() && rule.conditions().isEmpty() && rule.exitCodes().isEmpty()
        && rule.ownerKindsInclude().isEmpty() && rule.match().isEmpty() && rule.ttlFrom().isEmpty();
  }

  private static String scope(Rule rule) {
    String namespaces = rule.namespaces().include().isEmpty() ? "every namespace" : "namespace(s) " + String.join(", ", rule.namespaces().include());
    return namespaces + (rule.namespaceSelector().isEmpty() ? "" : " its namespaceSelector selects");
  }

  /**
   * What changed from {@code before} to {@code after}, one item each, e.g. {@code dry-run off}, {@code rule crashloop
   * added}, {@code limits: perSecond 10.0 -> 2.0}; empty when nothing that acts changed (a comment, the file's format).
   */
  public static List<String> changes(Policy before, Policy after) {
    List<String> changes = new ArrayList<>();
    if (before.dryRun() != after.dryRun()) {
      changes.add(after.dryRun() ? "dry-run on" : "dry-run off");
    }
    Map<String, Object> was = rules(before);
    Map<String, Object> now = rules(after);
    now.forEach((name, settings) -> {
      if (!was.containsKey(name)) {
        changes.add("rule " + name + " added");
      } else if (!was.get(name).equals(settings)) {
        changes.add("rule " + name + " changed");
      }
    });
    was.keySet().stream().filter(name -> !now.containsKey(name)).forEach(name -> changes.add("rule " + name + " removed"));
    limits(before.limits(), after.limits(), changes);
    changed("fullPassInterval", Durations.format(before.fullPassInterval()), Durations.format(after.fullPassInterval()), changes);
    changed("gracePeriodSeconds", text(before.gracePeriodSeconds()), text(after.gracePeriodSeconds()), changes);
    if (!before.guard().equals(after.guard())) {
      changes.add("guard changed");
    }
    changed("evictionRequests", before.evictionRequests().toString(), after.evictionRequests().toString(), changes);
    if (!before.migrationJobs().equals(after.migrationJobs())) {
      changes.add("migrationJobs changed");
    }
    if (!before.finishedPodBudgets().equals(after.finishedPodBudgets())) {
      changes.add("finished-pod budgets changed");
    }
    return changes;
  }

  private static void limits(Limits before, Limits after, List<String> changes) {
    List<String> limits = new ArrayList<>();
    changed("maxPerNode", text(before.maxPerNode()), text(after.maxPerNode()), limits);
    changed("maxPerNamespace", text(before.maxPerNamespace()), text(after.maxPerNamespace()), limits);
    changed("maxTotal", text(before.maxTotal()), text(after.maxTotal()), limits);
    changed("perSecond", String.valueOf(before.perSecond()), String.valueOf(after.perSecond()), limits);
    changed("maxInFlightPerOwner", text(before.maxInFlightPerOwner()), text(after.maxInFlightPerOwner()), limits);
    changed("maxUnavailablePerOwner", text(before.maxUnavailablePerOwner()), text(after.maxUnavailablePerOwner()), limits);
    changed("burst", text(before.burst()), text(after.burst()), limits);
    if (!limits.isEmpty()) {
      changes.add("limits: " + String.join(", ", limits));
    }
  }

  private static void changed(String field, String before, String after, List<String> changes) {
    if (!Objects.equals(before, after)) {
      changes.add(field + " " + before + " -> " + after);
    }
  }

  private static String text(OptionalInt value) {
    return value.isPresent() ? String.valueOf(value.getAsInt()) : "none";
  }

  private static String text(OptionalLong value) {
    return value.isPresent() ? String.valueOf(value.getAsLong()) : "none";
  }
}
