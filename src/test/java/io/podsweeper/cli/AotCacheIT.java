package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.podsweeper.testing.PodsweeperProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged service, on the Java 25 the image runs, says when the JVM could not use the AOT cache it was given, which
 * the JVM itself says only in a line outside the service's log; the cache is given as the Deployment gives its JVM
 * flags, in JAVA_TOOL_OPTIONS.
 */
class AotCacheIT {
  private static final String WARNING = "is not in use";
  /** The JDK's own archive: a cache that fits the JDK and any class path (it holds none of ours), so the JVM maps it. */
  private static final Path JDK_ARCHIVE = PodsweeperProcess.JAVA_25_HOME.resolve("lib/server/classes.jsa");

  @Test
  void aMissingCacheIsWarnedAbout(@TempDir Path dir) throws Exception {
    Path missing = dir.resolve("gone.aot");
    assertThat(runWith(dir, "-XX:AOTCache=" + missing)).contains("the AOT cache " + missing + " " + WARNING);
  }

  /** A cache made with other flags that shape it is dropped as a missing one is. */
  @Test
  void aCacheMadeWithOtherHeadersIsWarnedAbout(@TempDir Path dir) throws Exception {
    assertThat(runWith(dir, "-XX:AOTCache=" + JDK_ARCHIVE + " -XX:+UseCompactObjectHeaders")).contains("the AOT cache " + JDK_ARCHIVE + " " + WARNING);
  }

  @Test
  void aCacheTheJvmMapsIsNot(@TempDir Path dir) throws Exception {
    assertThat(runWith(dir, "-XX:AOTCache=" + JDK_ARCHIVE)).contains("error: ").doesNotContain(WARNING);
  }

  /** `run` with a policy file that does not exist: it warns (or not) first, then exits 2 at the policy. */
  private static String runWith(Path dir, String javaToolOptions) throws Exception {
    assumeTrue(Files.isExecutable(PodsweeperProcess.JAVA_25), "Temurin 25 at " + PodsweeperProcess.JAVA_25);
    Path log = dir.resolve("run.log");
    Process process = PodsweeperProcess.start(PodsweeperProcess.JAVA_25, log, Map.of("JAVA_TOOL_OPTIONS", javaToolOptions),
        "run", "--policy", dir.resolve("no-such-policy.yaml").toString(), "--dry-run");
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("exited").isTrue();
    String output = Files.readString(log);
    assertThat(process.exitValue()).as(output).isEqualTo(Main.BAD_INPUT);
    return output;
  }
}
