package io.podsweeper.cli;

import io.fabric8.kubernetes.client.Config;
import io.podsweeper.engine.Service;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "run", description = "Run the long-lived service against a cluster (informers, deadlines, removals, HTTP).")
final class RunCommand implements Callable<Integer> {
  @Option(names = "--policy", required = true, description = "Policy file (YAML or JSON).")
  Path policyFile;

  @Option(names = "--kubeconfig", description = "Kubeconfig file; default: in-cluster service account, $KUBECONFIG or ~/.kube/config.")
  Path kubeconfig;

  @Option(names = "--dry-run", description = "Decide, log and count, but remove nothing (overrides the policy's dryRun).")
  boolean dryRun;

  @Option(names = "--http-port", defaultValue = "8080", description = "Port for /metrics, /healthz, /readyz and /api/v1/decisions (default: ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(names = "--http-host", defaultValue = "0.0.0.0", description = "Address to listen on (default: ${DEFAULT-VALUE}).")
  String httpHost;

  @Option(names = "--log-format", defaultValue = "text", description = "text or json (one JSON object per line).")
  LogFormat logFormat;

  @Option(names = "--sync-timeout", defaultValue = "300", description = "Seconds to wait for the informers' first sync (default: ${DEFAULT-VALUE}).")
  long syncTimeoutSeconds;

  @Override
  public Integer call() throws Exception {
    logFormat.apply();
    if (httpPort < 0 || httpPort > 65535) {
      throw new PolicyException("--http-port", "must be between 0 and 65535, got " + httpPort);
    }
    Policy policy = PolicyLoader.load(policyFile);
    if (dryRun) {
      policy = policy.withDryRun(true);
    }
    Config config = kubeconfig != null ? Config.fromKubeconfig(read(kubeconfig)) : Config.autoConfigure(null);
    CountDownLatch stopped = new CountDownLatch(1);
    Service service = new Service(config, policy, Clock.systemUTC());
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      service.close();
      stopped.countDown();
    }, "shutdown"));
    service.start(new Service.Options(httpHost, httpPort, syncTimeoutSeconds));
    stopped.await();
    return 0;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new PolicyException("--kubeconfig", "cannot read " + file + ": " + e.getMessage());
    }
  }
}
