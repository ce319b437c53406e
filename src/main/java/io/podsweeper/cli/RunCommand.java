package io.podsweeper.cli;

import io.fabric8.kubernetes.client.Config;
import io.podsweeper.app.Service;
import io.podsweeper.http.HttpApi;
import io.podsweeper.kube.Leadership;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "run", description = "Run the long-lived service against a cluster (informers, deadlines, removals, HTTP).")
final class RunCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);
  /** The policy ConfigMap of manifests/deployment.yaml. */
  private static final String DEFAULT_POLICY_CONFIGMAP = "podsweeper-policy";

  @Option(names = "--policy", required = true, description = "Policy file (YAML or JSON); reloaded when it changes.")
  Path policyFile;

  @Mixin ClusterOptions cluster;

  @Option(names = "--wait-for-valid-policy", description = "With an invalid policy file at start, stay up removing nothing and not ready until the file is fixed, instead of exiting 2 (for a mounted ConfigMap: a rescheduled replica must not crash-loop on an operator's broken edit).")
  boolean waitForValidPolicy;

  @Option(names = "--dry-run", description = "Decide, log and count, but remove nothing (overrides the policy's dryRun).")
  boolean dryRun;

  @Option(names = "--http-port", defaultValue = "8080", description = "Port for /metrics, /healthz, /readyz and /api/v1 (default: ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(names = "--probe-port", defaultValue = "8081", description = "Port for /healthz and /readyz alone, for the kubelet's probes: clients of the HTTP port cannot hold its connections (default: ${DEFAULT-VALUE}).")
  int probePort;

  @Option(names = "--http-host", defaultValue = "0.0.0.0", description = "Address to listen on; 127.0.0.1 outside a cluster (default: ${DEFAULT-VALUE}).")
  String httpHost;

  @Option(names = "--log-format", defaultValue = "text", description = "text or json (one JSON object per line).")
  LogFormat logFormat;

  @Option(names = "--sync-timeout", defaultValue = "300", description = "Seconds to wait for the informers' first sync (default: ${DEFAULT-VALUE}).")
  long syncTimeoutSeconds;

  @Option(names = "--policy-reload-interval", defaultValue = "10", description = "Seconds between checks of the policy file for changes, and for PodCleanupPolicy CRDs installed after start (default: ${DEFAULT-VALUE}).")
  long reloadSeconds;

  @Option(names = "--namespace", description = "The service's own namespace, for the control ConfigMap, the leader Lease and Events; default: $POD_NAMESPACE, else the kubeconfig context's namespace, else (in a pod) the service account's.")
  String namespace;

  @Option(names = "--control-configmap", defaultValue = "podsweeper-control", description = "ConfigMap holding the kill switch (data.paused); empty to keep the switch in-process (default: ${DEFAULT-VALUE}).")
  String controlConfigMap;

  @Option(names = "--policy-configmap", description = "The ConfigMap the policy file is mounted from, in the service's namespace: a rejected edit is a Warning Event on it; default: "
      + DEFAULT_POLICY_CONFIGMAP + " when running in a pod, else none ('' for none).")
  String policyConfigMap;

  @Option(names = "--leader-elect", description = "Only the holder of a Lease removes pods (run 2 or more replicas).")
  boolean leaderElect;

  @Option(names = "--leader-elect-lease", defaultValue = "podsweeper", description = "Lease name (default: ${DEFAULT-VALUE}).")
  String lease;

  @Option(names = "--leader-elect-identity", description = "This replica's identity; default: $POD_NAME, else host name and a random suffix.")
  String identity;

  @Option(names = "--leader-elect-advertise-address", description = "The address (an IP) at which the other replicas reach this one's HTTP port, written on the Lease while it leads, so a follower forwards GET /api/v1/decisions to the leader; default: $POD_IP, else none (a follower then says how to reach the leader by hand).")
  String advertiseAddress;

  @Option(names = "--leader-elect-lease-duration", description = "How long a Lease holds without renewal, in whole seconds; a follower waits this long before taking over (default: ${DEFAULT-VALUE}).")
  String leaseDuration = Durations.format(Leadership.Timing.DEFAULT.leaseDuration());

  @Option(names = "--leader-elect-renew-deadline", description = "How long the leader keeps trying to renew before it steps down; shorter than the lease duration (default: ${DEFAULT-VALUE}).")
  String renewDeadline = Durations.format(Leadership.Timing.DEFAULT.renewDeadline());

  @Option(names = "--leader-elect-retry-period", description = "How long between attempts to acquire or renew the Lease (default: ${DEFAULT-VALUE}).")
  String retryPeriod = Durations.format(Leadership.Timing.DEFAULT.retryPeriod());

  @Option(names = "--admin-token-file", description = "File holding a bearer token; enables POST /api/v1/pause and /api/v1/resume, and reads GET /api/v1/decisions.")
  Path adminTokenFile;

  @Option(names = "--public-decisions", description = "Serve GET /api/v1/decisions (pod names, UIDs, owners, nodes) to anyone who reaches the port, without the admin token.")
  boolean publicDecisions;

  @Option(names = "--audit-log", description = "Append every decision and outcome as a JSON line to this file (- for stdout).")
  String auditLog;

  @Option(names = "--events-per-second", defaultValue = "5", description = "Kubernetes Events about removals, at most this many per second; 0 for none (default: ${DEFAULT-VALUE}).")
  double eventsPerSecond;

  @Override
  public Integer call() throws Exception {
    logFormat.apply();
    AotCache.unused(ManagementFactory.getRuntimeMXBean().getInputArguments(), System.getProperty("java.vm.info", ""))
        .ifPresent(cache -> LOG.warn("the AOT cache {} is not in use (missing, or made by another JVM, with other JVM flags such as "
            + "-XX:+UseCompactObjectHeaders, or from another jar): every start loads, links and profiles its classes again, "
            + "about a second more; run with -Xlog:aot to see why", cache));
    if (httpPort < 0 || httpPort > 65535) {
      throw new PolicyException("--http-port", "must be between 0 and 65535, got " + httpPort);
    }
    if (probePort < 0 || probePort > 65535) {
      throw new PolicyException("--probe-port", "must be between 0 and 65535, got " + probePort);
    }
    if (probePort == httpPort && probePort != 0) {
      throw new PolicyException("--probe-port", "must differ from --http-port (" + httpPort + "): the probes have a listener of their own");
    }
    if (reloadSeconds < 1) {
      throw new PolicyException("--policy-reload-interval", "must be at least 1 second, got " + reloadSeconds);
    }
    Leadership.Timing timing = leaderElectionTiming();
    Optional<String> policyProblem = Optional.empty();
    Policy loaded;
    try {
      loaded = PolicyLoader.load(policyFile);
    } catch (PolicyException e) {
      if (!waitForValidPolicy || !Files.isReadable(policyFile)) {
        throw e;
      }
      policyProblem = Optional.of(e.getMessage());
      loaded = Policy.removingNothing(policyFile.toString());
    }
    Config config = cluster.config();
    Optional<OwnNamespace> own = findOwnNamespace(config);
    Optional<String> ownNamespace = own.map(OwnNamespace::name);
    if (leaderElect && ownNamespace.isEmpty()) {
      throw new PolicyException("--leader-elect", "needs the service's namespace: set --namespace, $POD_NAMESPACE or a namespace in the kubeconfig context");
    }
    // Without its namespace the kill switch would be silently local: an operator's pause would not reach this process.
    boolean killSwitchOff = !controlConfigMap.isEmpty() && ownNamespace.isEmpty();
    if (killSwitchOff && !dryRun && !loaded.dryRun()) {
      throw new PolicyException("--namespace", "no namespace for the kill switch (configmap " + controlConfigMap
          + "): set --namespace, $POD_NAMESPACE or a namespace in the kubeconfig context; or --dry-run; or --control-configmap '' to remove without one");
    }
    if (killSwitchOff) {
      LOG.warn("the kill switch is OFF: no namespace for configmap {} (--namespace, $POD_NAMESPACE, kubeconfig context); "
          + "dry-run stays on whatever the policy says, until a restart with a namespace", controlConfigMap);
    }
    if (!controlConfigMap.isEmpty()) {
      own.ifPresent(ns -> LOG.info("the kill switch is configmap {}/{} (namespace from {})", ns.name(), controlConfigMap, ns.from()));
    }
    UnaryOperator<Policy> adjust = p -> dryRun || killSwitchOff ? p.withDryRun(true) : p;
    Policy policy = adjust.apply(loaded);
    Optional<String> adminToken = Optional.ofNullable(adminTokenFile).map(f -> read(f, "--admin-token-file").trim());
    if (adminToken.isPresent() && adminToken.get().length() < 16) {
      throw new PolicyException("--admin-token-file", "the token must be at least 16 characters");
    }
    if (eventsPerSecond < 0) {
      throw new PolicyException("--events-per-second", "must be 0 (no Events) or more, got " + eventsPerSecond);
    }
    Service.Options options = new Service.Options(httpHost, httpPort, probePort, syncTimeoutSeconds, Optional.of(policyFile), adjust,
        Duration.ofSeconds(reloadSeconds),
        controlConfigMap.isEmpty() ? Optional.empty() : ownNamespace.map(ns -> new Service.Options.ObjectName(ns, controlConfigMap)),
        leaderElect ? Optional.of(new Service.Options.LeaderElection(ownNamespace.get(), lease, identity(),
            Optional.ofNullable(advertiseAddress).or(() -> Optional.ofNullable(System.getenv("POD_IP"))).filter(a -> !a.isBlank()), timing))
            : Optional.empty(),
        adminToken, publicDecisions, Optional.ofNullable(auditLog), eventsPerSecond,
        policyConfigMap().flatMap(name -> ownNamespace.map(ns -> new Service.Options.ObjectName(ns, name))));
    CountDownLatch stopped = new CountDownLatch(1);
    Service service;
    try {
      service = new Service(config, policy, Clock.systemUTC(), options);
    } catch (RuntimeException e) {
      throw failure(e, config);
    }
    policyProblem.ifPresent(service::waitForValidPolicy);
    Thread shutdown = new Thread(() -> {
      service.close();
      stopped.countDown();
    }, "shutdown");
    Runtime.getRuntime().addShutdownHook(shutdown);
    try {
      service.start();
    } catch (Exception e) {
      Runtime.getRuntime().removeShutdownHook(shutdown);
      service.close();
      throw failure(e, config);
    }
    stopped.await();
    return 0;
  }

  /** The service's own namespace, and where it was found: a log line says which kill switch this process obeys. */
  private record OwnNamespace(String name, String from) {}

  /** --namespace, else $POD_NAMESPACE, else the kubeconfig's current context, else (in a pod) the service account's. */
  private Optional<OwnNamespace> findOwnNamespace(Config config) {
    if (namespace != null && !namespace.isBlank()) {
      return Optional.of(new OwnNamespace(namespace, "--namespace"));
    }
    String pod = System.getenv("POD_NAMESPACE");
    if (pod != null && !pod.isBlank()) {
      return Optional.of(new OwnNamespace(pod, "$POD_NAMESPACE"));
    }
    String configured = config.getNamespace();
    if (configured == null || configured.isBlank()) {
      return Optional.empty();
    }
    boolean fromContext = config.getCurrentContext() != null && config.getCurrentContext().getContext() != null
        && configured.equals(config.getCurrentContext().getContext().getNamespace());
    return Optional.of(new OwnNamespace(configured, fromContext
        ? "the kubeconfig context " + config.getCurrentContext().getName() : "the service account's namespace"));
  }

  /**
   * The flag; else, in a pod (told by $KUBERNETES_SERVICE_HOST, as client-go's in-cluster check does), the
   * Deployment's ConfigMap; else none: outside a pod the policy is a plain file, with no ConfigMap to point at.
   */
  private Optional<String> policyConfigMap() {
    String inPod = System.getenv("KUBERNETES_SERVICE_HOST") != null ? DEFAULT_POLICY_CONFIGMAP : null;
    return Optional.ofNullable(policyConfigMap).or(() -> Optional.ofNullable(inPod)).filter(name -> !name.isEmpty());
  }

  /** Why the service could not start, naming the flag or the server to check. */
  private Exception failure(Exception e, Config config) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof HttpApi.ListenFailure listen) {
        return new CommandFailure("cannot listen on " + listen.getMessage() + " — choose another "
            + (listen.probes() ? "--probe-port" : "--http-port") + " or --http-host", e);
      }
    }
    return CommandFailure.fromCluster(config.getMasterUrl(), e, CommandFailure.Reader.SERVICE);
  }

  /** The three lease timings, as fabric8's elector needs them (upstream's descheduler asks the same of its flags). */
  private Leadership.Timing leaderElectionTiming() {
    Duration lease = duration("--leader-elect-lease-duration", leaseDuration);
    Duration renew = duration("--leader-elect-renew-deadline", renewDeadline);
    Duration retry = duration("--leader-elect-retry-period", retryPeriod);
    if (lease.toMillis() % 1000 != 0 || lease.compareTo(Duration.ofSeconds(2)) < 0) {
      throw new PolicyException("--leader-elect-lease-duration",
          "must be whole seconds and at least 2s (a Lease holds whole seconds; its leader stops acting at least 1s before it runs out), got "
              + leaseDuration);
    }
    if (renew.compareTo(lease) >= 0) {
      throw new PolicyException("--leader-elect-renew-deadline",
          "must be shorter than --leader-elect-lease-duration " + leaseDuration + ", got " + renewDeadline);
    }
    if (retry.toMillis() * Leadership.Timing.RETRY_SPREAD >= renew.toMillis()) {
      throw new PolicyException("--leader-elect-retry-period", "must be shorter than --leader-elect-renew-deadline " + renewDeadline
          + " divided by " + Leadership.Timing.RETRY_SPREAD + " (with its jitter the elector waits up to that many retry periods), got "
          + retryPeriod);
    }
    return new Leadership.Timing(lease, renew, retry);
  }

  private static Duration duration(String flag, String text) {
    return Durations.parse(text).orElseThrow(() -> new PolicyException(flag, "must be a positive duration such as 15s or 1m30s, got \"" + text + "\""));
  }

  private String identity() throws IOException {
    if (identity != null) {
      return identity;
    }
    String pod = System.getenv("POD_NAME");
    return pod != null ? pod : InetAddress.getLocalHost().getHostName() + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static String read(Path file, String flag) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new PolicyException(flag, "cannot read " + file + ": " + e.getMessage());
    }
  }
}
