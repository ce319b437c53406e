package io.podsweeper.cli;

import io.podsweeper.cluster.PodRecord;
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

  @Mixin ClusterInput cluster;

  @Option(names = "--now", description = "Evaluate as of this instant (RFC 3339); default: now.")
  String now;

  @Override
  public Integer call() throws Exception {
    Instant at = PlanCommand.instant(now);
    int slash = pod.indexOf('/');
    if (slash <= 0 || slash == pod.length() - 1) {
      throw new PolicyException("NAMESPACE/POD", "expected namespace/name, got \"" + pod + "\"");
    }
    ClusterInput.Read input = cluster.read(PolicyLoader.load(policyFile));
    PodRecord record = input.snapshot().pods().stream().filter(p -> p.key().equals(pod)).findFirst()
        .orElseThrow(() -> new PolicyException(pod, "no such pod in " + input.source()));
    PrintWriter out = spec.commandLine().getOut();
    out.println("pod " + record.key() + " (uid " + record.uid() + ", " + record.phase()
        + (record.scheduled() ? " on " + record.nodeName() : ", no node") + ") at " + at);
    // An accepted PodCleanupPolicy is a profile below; a rejected one of the pod's namespace would otherwise go unmentioned.
    input.namespacedPolicies().stream()
        .filter(v -> v.source().namespace().equals(record.namespace()) && !v.outcome().accepted())
        .forEach(v -> out.println("PodCleanupPolicy " + v.source().namespace() + "/" + v.source().name() + ": rejected ("
            + v.outcome().reason() + "), not in force: " + v.outcome().message()));
    new PolicyEvaluator(input.policy()).explain(record, input.snapshot(), at).forEach(out::println);
    out.flush();
    return 0;
  }
}
