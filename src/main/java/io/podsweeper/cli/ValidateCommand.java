package io.podsweeper.cli;

import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.policy.PolicySummary;
import java.io.PrintWriter;
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
    int rules = PolicySummary.rules(policy).size();
    PrintWriter out = spec.commandLine().getOut();
    out.printf("OK: %s, %d rule%s in %d profile(s)%s%n", policyFile, rules, rules == 1 ? "" : "s", policy.profiles().size(),
        policy.dryRun() ? ", dry-run" : "");
    PolicySummary.warnings(policy).forEach(w -> out.println("warning: " + w));
    out.flush();
    return 0;
  }
}
