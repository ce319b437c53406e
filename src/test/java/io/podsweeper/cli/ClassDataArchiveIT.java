package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.testing.PodsweeperProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged service says when the JVM dropped the class-data archive it was given, which the JVM itself does
 * without a word; the archive is given as the Deployment gives its JVM flags, in JAVA_TOOL_OPTIONS.
 */
class ClassDataArchiveIT {
  private static final String WARNING = "is not in use";

  @Test
  void anArchiveTheJvmCannotMapIsWarnedAbout(@TempDir Path dir) throws Exception {
    Path missing = dir.resolve("gone.jsa");
    String log = runWith(dir, "-XX:SharedArchiveFile=" + missing);
    assertThat(log).contains("the class-data archive " + missing + " " + WARNING);
  }

  @Test
  void anArchiveTheJvmMapsIsNot(@TempDir Path dir) throws Exception {
    // The JDK's own archive fits the JDK and any class path (it holds none of ours), so the JVM maps it.
    Path jdkArchive = Path.of(System.getProperty("java.home"), "lib", "server", "classes.jsa");
    String log = runWith(dir, "-XX:SharedArchiveFile=" + jdkArchive);
    assertThat(log).contains("error: ").doesNotContain(WARNING);
  }

  /** `run` with a policy file that does not exist: it warns (or not) first, then exits 2 at the policy. */
  private static String runWith(Path dir, String javaToolOptions) throws Exception {
    Path log = dir.resolve("run.log");
    Process process = PodsweeperProcess.start(log, Map.of("JAVA_TOOL_OPTIONS", javaToolOptions),
        "run", "--policy", dir.resolve("no-such-policy.yaml").toString(), "--dry-run");
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("exited").isTrue();
    String output = Files.readString(log);
    assertThat(process.exitValue()).as(output).isEqualTo(Main.BAD_INPUT);
    return output;
  }
}
