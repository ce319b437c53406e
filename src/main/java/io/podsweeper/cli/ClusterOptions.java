package io.podsweeper.cli;

import io.fabric8.kubernetes.client.Config;
import io.podsweeper.kube.KubeSerialization;
import io.podsweeper.policy.PolicyException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --kubeconfig}, shared by the commands that talk to a cluster: one way to find the credentials. */
final class ClusterOptions {
  @Option(names = "--kubeconfig", description = "Kubeconfig file; default: in-cluster service account, $KUBECONFIG or ~/.kube/config.")
  Path kubeconfig;

  Config config() {
    if (kubeconfig == null) {
      return Config.autoConfigure(null);
    }
    try {
      return KubeSerialization.kubeconfig(Files.readString(kubeconfig));
    } catch (IOException e) {
      throw new PolicyException("--kubeconfig", "cannot read " + kubeconfig + ": " + e.getMessage());
    }
  }
}
