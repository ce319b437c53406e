package io.podsweeper.app;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.engine.AuditLog;
import io.podsweeper.engine.KillSwitch;
import io.podsweeper.engine.PolicyWatcher;
import io.podsweeper.engine.RecentDecisions;
import io.podsweeper.engine.Sweeper;
import io.podsweeper.http.ConnectionGuard;
import io.podsweeper.http.HttpApi;
import io.podsweeper.kube.ClusterCache;
import io.podsweeper.kube.ControlConfigMap;
import io.podsweeper.kube.EventRecorder;
import io.podsweeper.kube.EvictionRequests;
import io.podsweeper.kube.GuardWindowConfigMap;
import io.podsweeper.kube.KubeClients;
import io.podsweeper.kube.Leadership;
import io.podsweeper.kube.NamespacedPolicies;
import io.podsweeper.kube.NodeTaints;
import io.podsweeper.kube.PodNominations;
import io.podsweeper.kube.PodRemover;
import io.podsweeper.kube.Refusals;
import io.podsweeper.kube.RemovalEvents;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.migration.MigrationJobController;
import io.podsweeper.policy.Policy;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.removal.Result;
import io.podsweeper.safety.GuardWindowStore;
import io.prometheus.client.Collector;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code podsweeper run}, assembled: informers feed the cache, the cache feeds the sweeper, the sweeper sends
 * removals; the kill switch (control ConfigMap, admin API), leader election and policy hot reload steer it; HTTP
 * serves metrics, health and recent decisions. {@link #close} shuts down in the reverse order.
 */
public final class Service implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Service.class);

  /**
   * What {@code run} is started with, besides the policy.
   *
   * @param probePort serves /healthz and /readyz alone, for the kubelet: apart from the HTTP port's clients
   * @param policyFile watched for changes (hot reload); empty: the policy is fixed
   * @param adjust applied to every (re)loaded policy, e.g. --dry-run
   * @param control the kill switch's ConfigMap as namespace/name; empty: the switch lives in this process only
   * @param leaderElection lease namespace/name and identity; empty: this replica always removes
   * @param adminToken enables POST /api/v1/pause and /resume for this bearer token, which also reads the decisions
   * @param publicDecisions GET /api/v1/decisions for anyone who reaches the port, token or not
   * @param auditLog a file to append one JSON line per decision to, or {@code -} for stdout
   * @param eventsPerSecond Kubernetes Events about removals, at most this many per second; 0 for none
   * @param policyConfigMap the ConfigMap the policy file is mounted from, for the Event of a rejected edit; empty: none
   */
  public record Options(
      String httpHost,
      int httpPort,
      int probePort,
      long syncTimeoutSeconds,
      Optional<Path> policyFile,
      UnaryOperator<Policy> adjust,
      Duration reloadInterval,
      Optional<ObjectName> control,
      Optional<LeaderElection> leaderElection,
      Optional<String> adminToken,
      boolean publicDecisions,
      Optional<String> auditLog,
      double eventsPerSecond,
      Optional<ObjectName> policyConfigMap) {

    /** A namespaced object's namespace and name. */
    public record ObjectName(String namespace, String name) {}

    /**
     * @param advertiseHost the host (an IP: $POD_IP, as the manifests run it) at which the other replicas reach this
     *     one's HTTP port; empty: a follower cannot forward requests for the decisions to this replica when it leads
     */
    public record LeaderElection(String namespace, String lease, String identity, Optional<String> advertiseHost,
        Leadership.Timing timing) {
      public LeaderElection(String namespace, String lease, String identity, Leadership.Timing timing) {
        this(namespace, lease, identity, Optional.empty(), timing);
      }
    }

    public static final double DEFAULT_EVENTS_PER_SECOND = 5;

    /**
     * On loopback, with public decisions, the probes on any free port; no control ConfigMap, no leader election, no
     * admin API, no audit log.
     */
    public static Options local(int httpPort) {
      return new Options("127.0.0.1", httpPort, 0, 60, Optional.empty(), UnaryOperator.identity(), Duration.ofSeconds(2),
          Optional.empty(), Optional.empty(), Optional.empty(), true, Optional.empty(), DEFAULT_EVENTS_PER_SECOND, Optional.empty());
    }

    public Options withPolicyFile(Path file, UnaryOperator<Policy> adjusted, Duration every) {
      return new Options(httpHost, httpPort, probePort, syncTimeoutSeconds, Optional.of(file), adjusted, every, control, leaderElection,
          adminToken, publicDecisions, auditLog, eventsPerSecond, policyConfigMap);
    }

    public Options withControl(String namespace, String name) {
      return new Options(httpHost, httpPort, probePort, syncTimeoutSeconds, policyFile, adjust, reloadInterval,
          Optional.of(new ObjectName(namespace, name)), leaderElection, adminToken, publicDecisions, auditLog, eventsPerSecond, policyConfigMap);
    }

    public Options withLeaderElection(LeaderElection value) {
      return new Options(httpHost, httpPort, probePort, syncTimeoutSeconds, policyFile, adjust, reloadInterval, control, Optional.of(value),
          adminToken, publicDecisions, auditLog, eventsPerSecond, policyConfigMap);
    }

    public Options withAdminToken(String token) {
      return new Options(httpHost, httpPort, probePort, syncTimeoutSeconds, policyFile, adjust, reloadInterval, control, leaderElection,
          Optional.of(token), publicDecisions, auditLog, eventsPerSecond, policyConfigMap);
    }

    public Options withAuditLog(String target) {
      return new Options(httpHost, httpPort, probePort, syncTimeoutSeconds, policyFile, adjust, reloadInterval, control, leaderElection,
          adminToken, publicDecisions, Optional.of(target), eventsPerSecond, policyConfigMap);
    }

    public Options withPublicDecisions(boolean value) {
      return new Options(httpHost, httpPort, probePort, syncTimeoutSeconds, policyFile, adjust, reloadInterval, control, leaderElection,
          adminToken, value, auditLog, eventsPerSecond, policyConfigMap);
    }

    public Options withPolicyConfigMap(String namespace, String name) {
      return new Options(httpHost, httpPort, probePort, syncTimeoutSeconds, policyFile, adjust, reloadInterval, control, leaderElection,
          adminToken, publicDecisions, auditLog, eventsPerSecond, Optional.of(new ObjectName(namespace, name)));
    }
  }

  private final Metrics metrics = new Metrics();
  private final RecentDecisions recent = new RecentDecisions(500);
  private final ScheduledExecutorService background = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "service-background");
    t.setDaemon(true);
    return t;
  });
  /** Every client of the API server; the main one below for what has no settings of its own. */
  private final KubeClients clients;
  private final KubernetesClient client;
  private final ClusterCache cache;
  private final PodRemover remover;
  /** The EvictionRequest API (KEP-4563) if the cluster serves it: discovered as the service starts. */
  private volatile Optional<EvictionRequests> evictionRequests = Optional.empty();
  private final EventRecorder events;
  private final KillSwitch killSwitch;
  private final Sweeper sweeper;
  private final NamespacedPolicies namespacedPolicies;
  private final Options options;
  private final Optional<ControlConfigMap> controlMap;
  private final HttpApi http;
  private final Optional<RemovalEvents> removalEvents;
  private final Optional<AuditLog> auditLog;
  /** The given client configuration, with this replica's user agent: every client of the service is built from it. */
  private final Config clientConfig;
  private final Clock clock;
  /** The policy file's policy it started with, which the first reload is compared with. */
  private final Policy filePolicyAtStart;
  private volatile Leadership leadership;
  /** Koordinator's PodMigrationJobs, when the API server serves them; null otherwise. */
  private volatile MigrationJobController migrationJobs;
  private volatile boolean synced;
  /** Why the policy file could not be used at start; null once a valid one runs. Not ready meanwhile. */
  private volatile String policyProblem;
  /**
   * How many looks of {@link #reportCurrency} in a row found the cache not current; only the background thread reads
   * and writes it, like the four below.
   */
  private int notCurrentLooks;
  /** Whether this outage was said (a WARN): its end is said only then. */
  private boolean outageLogged;
  /** How many reads had been refused when the cache was last seen current: one refused since is why it is not. */
  private long refusalsWhileCurrent;
  /** The last refusal logged, 0 for none since the cache was current. */
  private long refusalLogged;
  /** What it said (answer and request), so that the same refusal retried every few seconds is said once. */
  private String refusalSaid = "";
  private volatile HttpApi.Ports ports;

  public Service(Config config, Policy policy, Clock clock, Options options) {
    this.options = options;
    this.clock = clock;
    this.filePolicyAtStart = policy;
    this.clientConfig = new ConfigBuilder(config).withUserAgent(userAgent(options.leaderElection())).build();
    this.clients = KubeClients.of(clientConfig);
    this.client = clients.main();
    this.cache = new ClusterCache(clients, metrics);
    this.remover = PodRemover.create(clients.unretried(Optional.empty()), this::gracePeriodInForce);
    this.events = new EventRecorder(client, replicaName(options.leaderElection()));
    this.controlMap = options.control().map(c -> new ControlConfigMap(clients, c.namespace(), c.name()));
    this.killSwitch = new KillSwitch(metrics, controlMap.<KillSwitch.Store>map(m -> m::write).orElse((paused, reason, over) -> true));
    // The guard's window is remembered beside the kill switch, so a restart or failover continues it.
    GuardWindowStore guardWindow = options.control()
        .<GuardWindowStore>map(c -> new GuardWindowConfigMap(client, c.namespace(), c.name() + "-guard"))
        .orElse(GuardWindowStore.NONE);
    this.sweeper = new Sweeper(policy, cache, this::send, metrics, clock, recent, killSwitch, this::guardTripped, guardWindow);
    sweeper.holdRoomWith(new PodNominations(remover, events));
    sweeper.holdNodesWith(new NodeTaints(remover, events, cache));
    if (options.eventsPerSecond() > 0) {
      removalEvents = Optional.of(new RemovalEvents(events, metrics, options.eventsPerSecond(), cache));
      sweeper.addListener(removalEvents.get());
      sweeper.warnAboutLifetimes(removalEvents.get()::warn);
      sweeper.warnBeforeRemovals(removalEvents.get()::notice);
    } else {
      removalEvents = Optional.empty();
    }
    try {
      auditLog = options.auditLog().isPresent() ? Optional.of(AuditLog.open(options.auditLog().get())) : Optional.empty();
    } catch (java.io.IOException e) {
      throw new io.podsweeper.policy.PolicyException("--audit-log", "cannot open " + options.auditLog().get() + ": " + e.getMessage());
    }
    auditLog.ifPresent(sweeper::addListener);
    this.namespacedPolicies = new NamespacedPolicies(clients, policy, sweeper::reload);
    sweeper.policiesCurrentWhile(namespacedPolicies);
    sweeper.reportThrottledTeams((namespace, why) -> namespacedPolicies.throttled(namespace, why, clock.instant()));
    sweeper.addListener(o -> {
      if (o.result() == Result.SUCCESS && !o.dryRun()) {
        namespacedPolicies.removed(o.decision().profile(), o.time());
      }
    });
    this.http = new HttpApi(metrics, () -> synced && policyProblem == null && sweeper.current() && killSwitch.watched(),
        () -> Optional.ofNullable(leadership).flatMap(Leadership::whyNotCampaigning), recent, this::replicaRole,
        within -> sweeper.evaluator().forecast(cache, clock.instant(), within),
        new HttpApi.Admin(options.adminToken(), options.publicDecisions(), () -> killSwitch.pause("paused through the admin API"),
            killSwitch::resume),
        ConnectionGuard.Limits.DEFAULT);
    metrics.registerScrapeTimeGauge(
        "podsweeper_terminated_pods",
        "Finished (Succeeded/Failed) pods per namespace and phase: the backlog PodGC's terminated-pod-gc-threshold counts.",
        this::terminatedPodSamples);
    metrics.registerScrapeTimeGauge("podsweeper_migration_jobs",
        "Koordinator PodMigrationJobs on the API server by phase, while it serves them (README \"Koordinator PodMigrationJobs\").",
        this::migrationJobSamples);
  }

  /** The grace period of the policy in force when a request is sent (the sweeper exists by then). */
  private OptionalLong gracePeriodInForce() {
    return sweeper.rules().policy().gracePeriodSeconds();
  }

  /**
   * The policy file was invalid at start: run removing nothing, not ready, until the file is fixed (a replica
   * rescheduled while an operator's edit is broken must not crash-loop, nor act on a guess). Call before
   * {@link #start}, with the service built on {@link Policy#removingNothing}.
   */
  public void waitForValidPolicy(String why) {
    policyProblem = why;
    metrics.policyReloads.labels("rejected").inc();
    LOG.error("policy rejected at start, removing nothing and not ready until it is fixed: {}", why);
  }

  public void start() throws Exception {
    // The first request opens the connection every later one shares (requests sent before it is open would open one each).
    remover.evictionApiVersion();
    // Then the pods' list: by far the longest wait of a start, the rest is set up while the server answers it. Nothing is
    // evaluated before sweeper.start() below, nor removed before the kill switch is watched.
    CompletableFuture<Void> cached = cache.start(sweeper);
    evictionRequests = EvictionRequests.discover(client, remover);
    evictionRequests.ifPresent(sweeper::requestEvictionsThrough);
    ports = http.start(options.httpHost(), options.httpPort(), options.probePort());
    LOG.info("HTTP on {}:{} (/metrics, /healthz, /readyz, /api/v1/decisions, /api/v1/forecast); probes on {}:{} (/healthz, /readyz)",
        options.httpHost(), ports.http(), options.httpHost(), ports.probes());
    controlMap.ifPresent(m -> {
      m.start(killSwitch::observed, killSwitch::storeDeleted);
      killSwitch.watchedWhile(m::isWatching);
    });
    // A follower until it wins the lease: the EvictionRequests' and PodMigrationJobs' watchers started below act at once.
    options.leaderElection().ifPresent(le -> {
      sweeper.setLeading(false);
      leadership = new Leadership(clients, le.namespace(), le.lease(), le.identity(),
          le.advertiseHost().map(host -> Leadership.address(host, ports.http())), le.timing());
      sweeper.fenceWith(leadership::holdsValidLease);
    });
    // The EvictionRequests this service made before a restart are taken over before any pod is evaluated: they count.
    CompletableFuture<Void> requestsListed = evictionRequests
        .map(r -> r.watch(client, sweeper::evictionRequestObserved, sweeper::adoptEvictionRequests))
        .orElse(CompletableFuture.completedFuture(null));
    try {
      cached.get(options.syncTimeoutSeconds(), TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException("informers did not sync within " + options.syncTimeoutSeconds() + "s", e);
    }
    try {
      requestsListed.get(options.syncTimeoutSeconds(), TimeUnit.SECONDS);
    } catch (TimeoutException | ExecutionException e) {
      throw new IllegalStateException("cannot list the EvictionRequests (" + EvictionRequests.PLURAL + ") within "
          + options.syncTimeoutSeconds() + "s: requests made before this start would not count against the limits; "
          + "grant list and watch on evictionrequests (manifests/rbac.yaml, or the chart with rbac.create)", e);
    }
    synced = true;
    LOG.info("informers synced: {} pods cached", cache.pods().size());
    background.scheduleWithFixedDelay(this::reportCurrency, CURRENCY_CHECK.toMillis(), CURRENCY_CHECK.toMillis(), TimeUnit.MILLISECONDS);
    startMigrationJobs(sweeper.rules().policy());
    if (leadership != null) {
      leadership.start(sweeper::setLeading, () -> sweeper.rules().policy().dryRun());
    } else {
      sweeper.setLeading(true);
    }
    sweeper.start();
    if (policyProblem != null) {
      policyRejected(policyProblem);
    }
    namespacedPolicies.start(options.syncTimeoutSeconds(), options.reloadInterval());
    options.policyFile().ifPresent(file -> {
      PolicyWatcher watcher = new PolicyWatcher(file, filePolicyAtStart, options.adjust(), policy -> {
        namespacedPolicies.filePolicyChanged(policy);
        if (policyProblem != null) {
          LOG.info("policy {} is valid now: removals start, ready", file);
          policyProblem = null;
        }
      }, this::policyRejected, metrics);
      long every = options.reloadInterval().toMillis();
      background.scheduleWithFixedDelay(watcher::check, every, every, TimeUnit.MILLISECONDS);
    });
  }

  /**
   * PodMigrationJobs are carried out when the API server serves them (Koordinator's CRDs are installed), and made for
   * evictions while the policy asks for them; a policy that asks in a cluster without them evicts directly, said once.
   */
  private void startMigrationJobs(Policy policy) {
    Optional<io.podsweeper.kube.MigrationJobs> api = io.podsweeper.kube.MigrationJobs.start(client, () -> {
      MigrationJobController c = migrationJobs;
      if (c != null) {
        c.changed();
      }
    }, job -> {
      MigrationJobController c = migrationJobs;
      if (c != null) {
        c.deleted(job);
      }
    });
    if (api.isEmpty()) {
      if (policy.migrationJobs().isPresent()) {
        LOG.warn("the policy asks for PodMigrationJobs, but the API server does not serve {} PodMigrationJob (Koordinator's CRDs are"
            + " not installed): evictions are sent directly", io.podsweeper.kube.MigrationJobs.API_VERSION);
      }
      return;
    }
    migrationJobs = new MigrationJobController(api.get(), sweeper.jobs(), cache, remover, clock);
    migrationJobs.start();
    LOG.info("PodMigrationJobs are served: carried out while the policy asks for them ({})",
        policy.migrationJobs().map(m -> "now: mode " + m.mode().wireName() + ", ttl " + m.ttl() + ", " + m.evictionPolicy().wireName())
            .orElse("now it does not"));
  }

  /** The gate's requests: through the PodMigrationJobs when there are any, else straight to the API server. */
  private RequestResult send(io.podsweeper.strategy.Decision decision, boolean dryRun) {
    MigrationJobController jobs = migrationJobs;
    return jobs == null ? remover.remove(decision, dryRun) : jobs.send(decision, dryRun);
  }

  /**
   * What every request of this process says it comes from, e.g. {@code podsweeper/0.1.0 (podsweeper-7d9f-x2x)}: with
   * several replicas, the API server's audit log then tells which one sent a removal.
   */
  private static String userAgent(Optional<Options.LeaderElection> leaderElection) {
    String version = Optional.ofNullable(Service.class.getPackage().getImplementationVersion()).orElse("dev");
    return "podsweeper/" + version + leaderElection.map(le -> " (" + le.identity() + ")").orElse("");
  }

  /**
   * This replica's name, for the Events it records (with two replicas, both record a rejected policy edit): its
   * leader-election identity, else the pod's name ($POD_NAME, as the manifests set it), else the host's.
   */
  private static String replicaName(Optional<Options.LeaderElection> leaderElection) {
    return leaderElection.map(Options.LeaderElection::identity).or(() -> Optional.ofNullable(System.getenv("POD_NAME")))
        .orElseGet(() -> {
          try {
            return java.net.InetAddress.getLocalHost().getHostName();
          } catch (java.net.UnknownHostException e) {
            return "unknown";
          }
        });
  }

  public int httpPort() {
    return ports.http();
  }

  /**
   * Under leader election, whether this replica leads and, if not, who does (the Lease's holder, read when asked),
   * where its HTTP port is (written on the Lease by the holder) and how to ask it by hand: a port-forward to the
   * leader's pod (identities are pod names, $POD_NAME, as the manifests run it).
   */
  private Optional<HttpApi.ReplicaRole> replicaRole() {
    return options.leaderElection().map(le -> {
      boolean leading = leadership != null && leadership.holdsValidLease();
      Optional<Leadership.Holder> holder = leading ? Optional.empty() : leaseHolder(le);
      Optional<String> leader = leading ? Optional.of(le.identity()) : holder.map(Leadership.Holder::identity);
      Optional<String> ask = leader.filter(l -> !leading).map(l -> "this replica follows and decides nothing; the leader's decisions: kubectl -n "
          + le.namespace() + " port-forward pod/" + l + " " + ports.http() + ", then GET /api/v1/decisions");
      return new HttpApi.ReplicaRole(le.identity(), leading, leader, holder.flatMap(Leadership.Holder::address), ask);
    });
  }

  /** Empty when nobody holds the Lease, or it cannot be read now (the reply then names no leader rather than fail). */
  private Optional<Leadership.Holder> leaseHolder(Options.LeaderElection le) {
    try {
      return Optional.ofNullable(client.leases().inNamespace(le.namespace()).withName(le.lease()).get()).flatMap(Leadership.Holder::of);
    } catch (KubernetesClientException e) {
      LOG.debug("cannot read Lease {}/{}: {}", le.namespace(), le.lease(), e.toString());
      return Optional.empty();
    }
  }

  /**
   * How often {@link #reportCurrency} looks. Removals do not wait for it (the gate asks the cache itself before every
   * request); only the log line and the informer gauges do, so every 5 s rather than every second: an idle service's
   * CPU is mostly such wake-ups (docs/benchmarks.md, sixth pass).
   */
  static final Duration CURRENCY_CHECK = Duration.ofSeconds(5);

  /**
   * One line when an outage holding removals has lasted two looks (5 to 10 s; a watch's routine renewal is no outage),
   * or at once when the API server refused a read, one when it ends: fabric8's reconnect attempts are not logged.
   */
  private void reportCurrency() {
    boolean controlWatched = killSwitch.watched();
    controlMap.ifPresent(m -> metrics.informerWatching.labels("configmaps").set(controlWatched ? 1 : 0));
    // About reaching the API server: a team's change waiting for its reconcile (a second at most) holds removals too,
    // but is no outage to report.
    boolean current = cache.isCurrent() && controlWatched && namespacedPolicies.isWatching();
    if (current) {
      if (outageLogged) {
        LOG.info(refusalLogged != 0 ? "API server {} grants the service's reads again and every watch resumed: removals resume"
            : "API server {} reachable again and every watch resumed: removals resume", clientConfig.getMasterUrl());
      }
      notCurrentLooks = 0;
      outageLogged = false;
      refusalLogged = 0;
      refusalSaid = "";
      refusalsWhileCurrent = clients.refusals().count();
      return;
    }
    notCurrentLooks++;
    Optional<Refusals.Refusal> refused = clients.refusals().lastAfter(Math.max(refusalsWhileCurrent, refusalLogged));
    if (refused.isPresent()) {
      // RBAC revoked or changed under a running replica: its watches end and cannot start again. Said once per refusal
      // of another request; the same one, retried by the informers every few seconds, is not said again.
      Refusals.Refusal r = refused.get();
      refusalLogged = r.sequence();
      if (!refusalSaid.equals(r.answer() + " " + r.request())) {
        refusalSaid = r.answer() + " " + r.request();
        outageLogged = true;
        LOG.warn("API server {} answered {} to {}: the cache is not current, holding removals; grant the service's reads again"
            + " (manifests/rbac.yaml, or the chart with rbac.create)", clientConfig.getMasterUrl(), r.answer(), r.request());
      }
    } else if (notCurrentLooks == 2 && !outageLogged) {
      // Not current at two looks in a row, 5 s apart: not a watch's routine renewal (removals were held meanwhile all
      // the same; the removal path asks the cache itself before every request).
      outageLogged = true;
      LOG.warn("API server {} unreachable or a watch broken: the cache is not current, holding removals", clientConfig.getMasterUrl());
    }
  }

  private void guardTripped(String why) {
    options.control().ifPresent(c -> events.recordOnConfigMap(c.namespace(), c.name(), "Warning", "PodSweeperGuardTripped", why));
  }

  /** On the ConfigMap whose edit was rejected, where its editor looks (kubectl describe configmap). */
  private void policyRejected(String why) {
    options.policyConfigMap().ifPresent(c -> events.recordOnConfigMap(c.namespace(), c.name(), "Warning", "PodSweeperPolicyRejected",
        "rejected, the last good policy keeps running: " + why));
  }

  private List<Collector.MetricFamilySamples.Sample> terminatedPodSamples() {
    Map<String, Integer> counts = new TreeMap<>();
    for (PodRecord pod : cache.pods()) {
      if (pod.terminated()) {
        counts.merge(pod.namespace() + "\n" + pod.phase(), 1, Integer::sum);
      }
    }
    List<Collector.MetricFamilySamples.Sample> samples = new ArrayList<>();
    counts.forEach((key, n) -> samples.add(new Collector.MetricFamilySamples.Sample(
        "podsweeper_terminated_pods", List.of("namespace", "phase"), List.of(key.split("\n")), n)));
    return samples;
  }

  private List<Collector.MetricFamilySamples.Sample> migrationJobSamples() {
    MigrationJobController jobs = migrationJobs;
    List<Collector.MetricFamilySamples.Sample> samples = new ArrayList<>();
    if (jobs != null) {
      jobs.jobsByPhase().forEach((phase, n) -> samples.add(new Collector.MetricFamilySamples.Sample(
          "podsweeper_migration_jobs", List.of("phase"), List.of(phase), n)));
    }
    return samples;
  }

  /** Stop deciding, let an in-flight request finish, step down, close informers and HTTP. */
  @Override
  public void close() {
    if (ports != null) {
      LOG.info("shutting down"); // else a start that failed before it served anything: its error says all there is
    }
    background.shutdownNow();
    if (migrationJobs != null) {
      migrationJobs.close();
    }
    sweeper.close();
    if (leadership != null) {
      leadership.close();
    }
    controlMap.ifPresent(ControlConfigMap::close);
    removalEvents.ifPresent(RemovalEvents::close);
    auditLog.ifPresent(AuditLog::close);
    namespacedPolicies.close();
    evictionRequests.ifPresent(EvictionRequests::close);
    cache.close();
    clients.close();
    http.close();
  }
}
