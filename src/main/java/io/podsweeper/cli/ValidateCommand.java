package io.podsweeper.cli;

import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "validate", description = "Check a policy file; says OK or exactly what is wrong (exit 2).")
final class ValidateCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--policy", required = true, description = "Policy file (YAML or JSON).")
  Path policyFile;

  @Override
  public Integer call() {
    Policy policy = PolicyLoader.load(policyFile);
    long strategies = policy.profiles().stream().mapToLong(p -> p.deschedule().size() + p.balance().size()).sum();
    spec.commandLine().getOut().printf("OK: %s, %d profile(s), %d strateg%s%s%n", policyFile, policy.profiles().size(),
        strategies, strategies == 1 ? "y" : "ies", policy.dryRun() ? ", dry-run" : "");
    return 0;
  }
}
