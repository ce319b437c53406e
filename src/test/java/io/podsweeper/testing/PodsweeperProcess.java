package io.podsweeper.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The real {@code podsweeper} command (the shaded jar that {@code mvn package} built) in a process of its own. None
 * outlives the test JVM (a test stops its own in a {@code finally}; this is the backstop: a run that failed left two
 * services running on the machine after it).
 */
public final class PodsweeperProcess {
  private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly), "podsweeper-processes"));
  }

  /** The JDK the image runs the service on (Temurin 25, beside the build's Java 17 on every machine of this kind). */
  public static final Path JAVA_25_HOME = Path.of(System.getProperty("podsweeper.java25", "/usr/lib/jvm/temurin-25-jdk-amd64"));
  public static final Path JAVA_25 = JAVA_25_HOME.resolve("bin/java");

  private PodsweeperProcess() {}

  /** A policy file in {@code dir} under which {@code run} removes nothing: dry-run, one rule for a namespace no one has. */
  public static Path idlePolicy(Path dir) throws IOException {
    return Files.writeString(dir.resolve("policy.yaml"), """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        dryRun: true
        rules:
          - name: crashloop
            namespaces: {include: [nowhere]}
            states: [CrashLoopBackOff]
            maxAge: 1h
        """);
  }

  /** A port free on this host now, for {@code --http-port}. */
  public static int freePort() throws IOException {
    try (ServerSocket free = new ServerSocket(0)) {
      return free.getLocalPort();
    }
  }

  /**
   * Starts {@code java -jar target/podsweeper.jar ARGS}, its output (both streams) to {@code log}. The environment
   * names no namespace ({@code POD_NAMESPACE}, {@code KUBERNETES_NAMESPACE}): only the arguments and the kubeconfig do.
   */
  public static Process start(Path log, String... args) throws IOException {
    return start(log, Map.of(), args);
  }

  /** As {@link #start(Path, String...)}, with these variables added to the environment (e.g. JAVA_TOOL_OPTIONS). */
  public static Process start(Path log, Map<String, String> environment, String... args) throws IOException {
    return start(Path.of(System.getProperty("java.home"), "bin", "java"), log, environment, args);
  }

  /** As {@link #start(Path, Map, String...)}, on the JVM {@code java} (e.g. {@link #JAVA_25}). */
  public static Process start(Path java, Path log, Map<String, String> environment, String... args) throws IOException {
    Path jar = Path.of(System.getProperty("podsweeper.projectDir", "."), "target", "podsweeper.jar");
    List<String> command = new ArrayList<>(List.of(java.toString(), "-jar", jar.toString()));
    command.addAll(List.of(args));
    ProcessBuilder process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    process.environment().remove("POD_NAMESPACE");
    process.environment().remove("KUBERNETES_NAMESPACE");
    process.environment().putAll(environment);
    Process started = process.start();
    RUNNING.add(started);
    started.onExit().thenRun(() -> RUNNING.remove(started));
    return started;
  }
}
