package io.podsweeper.cli;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.policy.LowNodeLoadArgs;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.strategy.PolicyEvaluator;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
    name = "explain",
    description = "Why and when a pod will be removed, or why never: matching rules, protections, the verdict. Same logic as run.")
final class ExplainCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "NAMESPACE/POD", description = "The pod.")
  String pod;

  @Option(names = "--policy", required = true, description = "Policy file (YAML or JSON).")
  Path policyFile;

  @Option(names = "--snapshot", description = "Read the cluster from this snapshot file instead of a live cluster.")
  Path snapshotFile;

  @Mixin ClusterOptions cluster;

  @Option(names = "--now", description = "Evaluate as of this instant (RFC 3339); default: now.")
  String now;

  @Override
  public Integer call() throws Exception {
    Instant at = PlanCommand.instant(now);
    int slash = pod.indexOf('/');
    if (slash <= 0 || slash == pod.length() - 1) {
      throw new PolicyException("NAMESPACE/POD", "expected namespace/name, got \"" + pod + "\"");
    }
    Policy policy = PolicyLoader.load(policyFile);
    PolicyEvaluator evaluator = new PolicyEvaluator(policy);
    // Measured usage only for a policy that reads it: as in run, no other policy asks for (or needs the right to) it.
    boolean measuredUsage = policy.profiles().stream().flatMap(p -> p.balance().stream()).anyMatch(LowNodeLoadArgs.class::isInstance);
    ClusterSnapshot snapshot = snapshotFile != null ? SnapshotReader.read(snapshotFile) : live(measuredUsage);
    PodRecord record = snapshot.pods().stream().filter(p -> p.key().equals(pod)).findFirst()
        .orElseThrow(() -> new PolicyException(pod, "no such pod in " + (snapshotFile != null ? snapshotFile : "the cluster")));
    PrintWriter out = spec.commandLine().getOut();
    out.println("pod " + record.key() + " (uid " + record.uid() + ", " + record.phase()
        + (record.scheduled() ? " on " + record.nodeName() : ", no node") + ") at " + at);
    evaluator.explain(record, snapshot, at).forEach(out::println);
    out.flush();
    return 0;
  }

  private ClusterSnapshot live(boolean measuredUsage) throws Exception {
    Config config = cluster.config();
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
      return SnapshotReader.fromCluster(client, measuredUsage);
    } catch (KubernetesClientException e) {
      throw CommandFailure.fromCluster(config.getMasterUrl(), e);
    }
  }
}
