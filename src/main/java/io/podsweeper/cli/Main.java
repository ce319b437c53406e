package io.podsweeper.cli;

import io.podsweeper.policy.PolicyException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code podsweeper} command line: {@code plan}, {@code validate} and {@code run}. */
@Command(
    name = "podsweeper",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Garbage-collects terminated pods and enforces pod lifetime rules on Kubernetes.",
    subcommands = {PlanCommand.class, ExplainCommand.class, ValidateCommand.class, ConvertCommand.class, RunCommand.class})
public final class Main {
  /** Exit code for bad input (policy, snapshot, flags): nothing was done. */
  public static final int BAD_INPUT = 2;

  public static void main(String[] args) {
    System.exit(execute(args));
  }

  public static int execute(String... args) {
    CommandLine cli = new CommandLine(new Main());
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          if (e instanceof PolicyException) {
            commandLine.getErr().println("error: " + e.getMessage());
            return BAD_INPUT;
          }
          throw e;
        });
    cli.setParameterExceptionHandler(
        (e, args2) -> {
          e.getCommandLine().getErr().println("error: " + e.getMessage());
          e.getCommandLine().usage(e.getCommandLine().getErr());
          return BAD_INPUT;
        });
    return cli.execute(args);
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Main.class.getPackage().getImplementationVersion();
      return new String[] {"podsweeper " + (v != null ? v : "dev")};
    }
  }
}
