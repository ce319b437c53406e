package io.podsweeper.metrics;

import io.prometheus.client.Collector;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Counter;
import io.prometheus.client.Gauge;
import io.prometheus.client.Histogram;
import io.prometheus.client.hotspot.DefaultExports;
import java.util.function.Supplier;

/**
 * Every Prometheus series the service exposes (documented in README.md, "Metrics"), on a registry of its own so
 * tests stay isolated. Pod names and UIDs never become labels; namespaces and nodes do, as in the descheduler.
 */
public final class Metrics {
  private final CollectorRegistry registry = new CollectorRegistry(true);

  /**
   * Our own removal counter: one sample per result, strategy, namespace, action and rule (every label a bounded set:
   * rules are the policy's). A held removal (dry-run, paused, limited) counts once per pod state, not once per pass.
   */
  public final Counter removals = Counter.build()
      .name("podsweeper_removals_total")
      .help("Removal decisions by outcome: success, dry-run, pdb-refused, conflict, gone, limited, paused, background, error.")
      .labelNames("result", "strategy", "namespace", "action", "rule")
      .register(registry);

  /** The upstream descheduler's series, so existing dashboards and alerts keep working. */
  public final Counter deschedulerEvicted = Counter.build()
      .name("descheduler_pods_evicted")
      .help("Pods removed, with the labels of the upstream descheduler's counter (compatibility series).")
      .labelNames("result", "strategy", "profile", "namespace", "node")
      .register(registry);

  /** Upstream's full cycle, v0.34+ name: here a full pass over every cached pod, node-aware strategies included. */
  public final Histogram deschedulerLoopDuration = Histogram.build()
      .name("descheduler_loop_duration_seconds")
      .help("Time taken to complete a full descheduling cycle (compatibility series: a full pass over every cached pod).")
      .buckets(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500)
      .register(registry);

  /**
   * Upstream's per-plugin time in a cycle, v0.34+ name: the node-aware strategies, each time the full pass runs them.
   * The pod-by-pod ones (PodLifeTime, RemovePodsHavingTooManyRestarts, RemoveFailedPods, Podsweeper's rules) act on
   * each pod's deadline, not in a cycle, so they have no sample here.
   */
  public final Histogram deschedulerStrategyDuration = Histogram.build()
      .name("descheduler_strategy_duration_seconds")
      .help("Time taken to complete each strategy of the descheduling operation (compatibility series: node-aware strategies).")
      .labelNames("strategy", "profile")
      .buckets(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100)
      .register(registry);

  public final Histogram decisionToRequest = Histogram.build()
      .name("podsweeper_decision_to_request_seconds")
      .help("From the moment a pod became due to the moment its removal request was sent.")
      .buckets(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300)
      .register(registry);

  public final Histogram requestDuration = Histogram.build()
      .name("podsweeper_removal_request_duration_seconds")
      .help("Duration of removal requests (delete or eviction) to the API server, by action.")
      .labelNames("action")
      .buckets(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
      .register(registry);

  public final Counter apiErrors = Counter.build()
      .name("podsweeper_api_errors_total")
      .help("Failed API requests by operation and HTTP status code (0 when no answer came).")
      .labelNames("operation", "code")
      .register(registry);

  /**
   * Pods whose judging threw (a value nobody foresaw): each fails alone, left where it is and judged again with backoff,
   * never a pass, a reload or another pod. {@code stage}: evaluate (an event, a deadline, a pass), balance (a node-aware
   * strategy).
   */
  public final Counter evaluationErrors = Counter.build()
      .name("podsweeper_evaluation_errors_total")
      .help("Pods whose evaluation threw, by namespace and stage; each is left alone and judged again with backoff.")
      .labelNames("namespace", "stage")
      .register(registry);

  public final Counter teamRulesSeconds = Counter.build()
      .name("podsweeper_team_rules_cpu_seconds_total")
      .help("CPU time the teams' PodCleanupPolicies took on the evaluation thread, by namespace.")
      .labelNames("namespace")
      .register(registry);

  public final Counter teamRulesThrottled = Counter.build()
      .name("podsweeper_team_rules_throttled_total")
      .help("Evaluations of a namespace's PodCleanupPolicies put off to the next interval: its share of the evaluation thread was used up.")
      .labelNames("namespace")
      .register(registry);

  public final Gauge guardWindowUnreadable = Gauge.build()
      .name("podsweeper_guard_window_unreadable")
      .help("1 while the blast-radius guard's remembered window cannot be read: it counts as full, and what it covers is held.")
      .register(registry);

  public final Counter pdbRefusals = Counter.build()
      .name("podsweeper_pdb_refusals_total")
      .help("Evictions refused with 429 (a PodDisruptionBudget, or API throttling); retried later with backoff.")
      .labelNames("namespace")
      .register(registry);

  public final Gauge pendingDeadlines = Gauge.build()
      .name("podsweeper_pending_deadlines")
      .help("Pods with a lifetime deadline in the future, each with a timer.")
      .register(registry);

  public final Gauge queuedRemovals = Gauge.build()
      .name("podsweeper_queued_removals")
      .help("Due pods waiting for the rate limiter or the executor.")
      .register(registry);

  public final Gauge cacheObjects = Gauge.build()
      .name("podsweeper_informer_cache_objects")
      .help("Objects in the informer caches, by resource.")
      .labelNames("resource")
      .register(registry);

  public final Gauge informerWatching = Gauge.build()
      .name("podsweeper_informer_watching")
      .help("1 while the informer for a resource has synced and is watching; removals wait while any is 0.")
      .labelNames("resource")
      .register(registry);

  public final Histogram passDuration = Histogram.build()
      .name("podsweeper_full_pass_duration_seconds")
      .help("Duration of a full evaluation pass over every cached pod.")
      .buckets(0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
      .register(registry);

  public final Gauge dryRun = Gauge.build()
      .name("podsweeper_dry_run")
      .help("1 when removals are only logged and counted (dry-run), 0 when they are sent.")
      .register(registry);

  public final Gauge paused = Gauge.build()
      .name("podsweeper_paused")
      .help("1 while the kill switch stops every removal (control ConfigMap, admin API, or a tripped guard).")
      .register(registry);

  public final Gauge guardTripped = Gauge.build()
      .name("podsweeper_guard_tripped")
      .help("1 after the blast-radius guard refused a removal, until an operator resumes.")
      .register(registry);

  public final Gauge leader = Gauge.build()
      .name("podsweeper_leader")
      .help("1 while this replica holds the leader lease (only the leader removes pods).")
      .register(registry);

  public final Counter policyReloads = Counter.build()
      .name("podsweeper_policy_reloads_total")
      .help("Policy file changes seen while running, by result: applied or rejected (the last good policy keeps running).")
      .labelNames("result")
      .register(registry);

  public final Counter balancePasses = Counter.build()
      .name("podsweeper_balance_passes_total")
      .help("Passes of the node-aware strategies, by result: run, or skipped (fewer than two Ready nodes in the node set).")
      .labelNames("result")
      .register(registry);

  public final Counter roomPlansStarted = Counter.build()
      .name("podsweeper_room_plans_started_total")
      .help("MakeRoom plans the live service started to carry out (the pending pod nominated to the plan's node).")
      .register(registry);

  public final Counter roomPlansCompleted = Counter.build()
      .name("podsweeper_room_plans_completed_total")
      .help("MakeRoom plans carried out to the end: the pending pod bound to the plan's node.")
      .register(registry);

  public final Counter roomPlansAbandoned = Counter.build()
      .name("podsweeper_room_plans_abandoned_total")
      .help("MakeRoom plans given up, by reason (pending-pod-gone, scheduled-elsewhere, node-gone, no-longer-fits, eviction-refused, timed-out, policy-changed, leadership-lost).")
      .labelNames("reason")
      .register(registry);

  public final Counter eventsDropped = Counter.build()
      .name("podsweeper_events_dropped_total")
      .help("Kubernetes Events about removals not sent because of their rate limit (the log and audit log have them all).")
      .register(registry);

  public final Counter removalWarnings = Counter.build()
      .name("podsweeper_removal_warnings_total")
      .help("Warnings before a removal (the policy's warnBefore), by kind: scheduled (a Normal Event PodSweeperRemovalScheduled, once per pod and deadline) or canceled (PodSweeperRemovalCanceled: the pod is no longer to go then).")
      .labelNames("kind")
      .register(registry);
  public final Counter invalidLifetimes = Counter.build()
      .name("podsweeper_invalid_lifetimes_total")
      .help("Per-pod lifetimes (ttlFrom keys, e.g. podsweeper.io/ttl) that do not parse, by key: once per pod and value; each is a Warning Event on the pod and is ignored.")
      .labelNames("key")
      .register(registry);

  public final Gauge httpConnectionsOpen = Gauge.build()
      .name("podsweeper_http_connections_open")
      .help("Connections open per listener: http (metrics, API; at most 256, 16 per client address), probes (/healthz, /readyz; at most 32, 8 per client address).")
      .labelNames("listener")
      .register(registry);

  public final Counter httpConnectionsRejected = Counter.build()
      .name("podsweeper_http_connections_rejected_total")
      .help("Connections closed at once: the listener was full (reason full) or the client address had its share open (reason client).")
      .labelNames("listener", "reason")
      .register(registry);

  public Metrics() {
    DefaultExports.register(registry);
    Gauge.build().name("podsweeper_build_info").help("Build information; always 1.").labelNames("version")
        .register(registry).labels(version()).set(1);
    // Upstream's labels, for dashboards that show them: Podsweeper's version; no Go, and the jar carries no git data.
    String version = version();
    Gauge.build().name("descheduler_build_info").help("Build info (compatibility series): Podsweeper's version; always 1.")
        .labelNames("GoVersion", "AppVersion", "DeschedulerVersion", "GitBranch", "GitSha1")
        .register(registry).labels("", version.replaceFirst("^(\\d+\\.\\d+).*", "$1"), version, "", "").set(1);
  }

  /** A full pass took {@code seconds}: ours, and upstream's cycle. */
  public void fullPass(double seconds) {
    passDuration.observe(seconds);
    deschedulerLoopDuration.observe(seconds);
  }

  /** Runs one strategy of a pass, timed as upstream times its plugins. */
  public void timeStrategy(String profile, String strategy, Runnable run) {
    long started = System.nanoTime();
    try {
      run.run();
    } finally {
      deschedulerStrategyDuration.labels(strategy, profile).observe((System.nanoTime() - started) / 1e9);
    }
  }

  /** A gauge computed at scrape time (e.g. terminated pods per namespace and phase, read from the cache). */
  public void registerScrapeTimeGauge(String name, String help, Supplier<java.util.List<Collector.MetricFamilySamples.Sample>> samples) {
    registerScrapeTimeFamilies(() -> java.util.List.of(new Collector.MetricFamilySamples(name, Collector.Type.GAUGE, help, samples.get())));
  }

  /** Several series computed together at scrape time, from one reading (e.g. the finished-pod budget's use). */
  public void registerScrapeTimeFamilies(Supplier<java.util.List<Collector.MetricFamilySamples>> families) {
    new Collector() {
      @Override
      public java.util.List<MetricFamilySamples> collect() {
        return families.get();
      }
    }.register(registry);
  }

  public CollectorRegistry registry() {
    return registry;
  }

  private static String version() {
    String v = Metrics.class.getPackage().getImplementationVersion();
    return v != null ? v : "dev";
  }
}
