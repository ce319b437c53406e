package io.podsweeper.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.kube.KubeClients;
import io.podsweeper.kube.NamespacedPolicies;
import io.podsweeper.kube.SnapshotReader;
import io.podsweeper.policy.CleanupPolicies;
import io.podsweeper.policy.LowNodeLoadArgs;
import io.podsweeper.policy.NodeUtilizationArgs;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyException;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What {@code plan} and {@code explain} evaluate: a snapshot file with the file policy, or the live cluster (read only)
 * with the file policy composed with its PodCleanupPolicies exactly as {@code run} composes them.
 */
final class ClusterInput {
  @Option(
      names = "--snapshot",
      description = "Read the cluster from this file, what `kubectl get pods,nodes,namespaces,pdb,pvc -A -o yaml` prints (YAML or JSON),"
          + " instead of the live cluster.")
  Path snapshotFile;

  @Mixin ClusterOptions cluster;

  /**
   * @param policy the policy in force there
   * @param namespacedPolicies the PodCleanupPolicies judged on the way, accepted or not (none from a snapshot)
   * @param source what was read, for messages
   */
  record Read(ClusterSnapshot snapshot, Policy policy, List<CleanupPolicies.Verdict> namespacedPolicies, String source) {}

  Read read(Policy filePolicy) throws Exception {
    if (snapshotFile == null) {
      return live(filePolicy);
    }
    if (cluster.kubeconfig != null) {
      throw new PolicyException("--snapshot", "give --snapshot or --kubeconfig, not both");
    }
    return new Read(SnapshotReader.read(snapshotFile), filePolicy, List.of(), snapshotFile.toString());
  }

  private Read live(Policy filePolicy) throws Exception {
    io.fabric8.kubernetes.client.Config config = cluster.config();
    try (KubeClients clients = KubeClients.of(config)) {
      KubernetesClient client = clients.main();
      List<CleanupPolicies.Verdict> verdicts = NamespacedPolicies.judgeOnce(client);
      Policy policy = CleanupPolicies.compose(filePolicy, verdicts);
      // Measured usage only for a policy that reads it: as in run, no other policy asks for (or needs the right to) it.
      boolean measuredUsage = policy.profiles().stream().flatMap(p -> p.balance().stream())
          .anyMatch(s -> s instanceof LowNodeLoadArgs || (s instanceof NodeUtilizationArgs a && a.measuredUsage()));
      return new Read(SnapshotReader.fromCluster(client, measuredUsage), policy, verdicts, "the cluster");
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      // One line naming the server, the credentials or the missing permission, not a client stack trace.
      throw CommandFailure.fromCluster(config.getMasterUrl(), e, CommandFailure.Reader.PERSON);
    }
  }
}
