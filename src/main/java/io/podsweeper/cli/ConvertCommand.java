package io.podsweeper.cli;

import io.podsweeper.policy.NativePolicyWriter;
import io.podsweeper.policy.PolicyLoader;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "convert",
    description = "Print any accepted policy (descheduler v1alpha1/v1alpha2, Koordinator, native) in Podsweeper's own format.")
final class ConvertCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--policy", required = true, description = "Policy file (YAML or JSON).")
  Path policyFile;

  @Override
  public Integer call() {
    spec.commandLine().getOut().print(NativePolicyWriter.write(PolicyLoader.load(policyFile)));
    spec.commandLine().getOut().flush();
    return 0;
  }
}
