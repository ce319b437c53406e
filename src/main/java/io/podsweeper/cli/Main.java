package io.podsweeper.cli;

import io.podsweeper.policy.PolicyException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.ScopeType;

/** The {@code podsweeper} command line: {@code plan}, {@code validate} and {@code run}. */
@Command(
    name = "podsweeper",
    mixinStandardHelpOptions = true,
    // Every subcommand gets --help and --version: `podsweeper run --help` must not ask for --policy first.
    scope = ScopeType.INHERIT,
    versionProvider = Main.Version.class,
    description = "Garbage-collects terminated pods and enforces pod lifetime rules on Kubernetes.",
    subcommands = {PlanCommand.class, ExplainCommand.class, ValidateCommand.class, ConvertCommand.class, RunCommand.class,
      HelpCommand.class})
public final class Main {
  private static final Logger LOG = LoggerFactory.getLogger(Main.class);

  /** Exit code for bad input (policy, snapshot, flags): nothing was done. */
  public static final int BAD_INPUT = 2;
  /** Exit code for everything else: an unreachable or refusing API server, a port in use, a bug. */
  public static final int FAILED = 1;

  public static void main(String[] args) {
    System.exit(execute(args));
  }

  public static int execute(String... args) {
    CommandLine cli = new CommandLine(new Main());
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          // One line a person can act on; the stack trace only for whoever turns on debug logging.
          boolean described = e instanceof PolicyException || e instanceof CommandFailure;
          commandLine.getErr().println("error: " + (described ? e.getMessage() : e.toString()));
          LOG.debug("podsweeper {} failed", commandLine.getCommandName(), e);
          return e instanceof PolicyException ? BAD_INPUT : FAILED;
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
