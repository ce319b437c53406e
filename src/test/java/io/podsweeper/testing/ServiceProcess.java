package io.podsweeper.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** {@code podsweeper run} as a real process (target/podsweeper.jar), for tests that kill, stop or restart it. */
public final class ServiceProcess {
  private ServiceProcess() {}

  /** Starts {@code run --policy policy --kubeconfig ...} on a free loopback port, with {@code extraArgs}; output to {@code log}. */
  public static Process start(TestApiServer server, Path policy, Path log, String... extraArgs) throws IOException {
    Path jar = Path.of(System.getProperty("podsweeper.projectDir", "."), "target", "podsweeper.jar");
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar",
        jar.toString(), "run", "--policy", policy.toString(), "--kubeconfig", server.kubeconfig().toString(), "--http-port", "0",
        "--http-host", "127.0.0.1"));
    command.addAll(List.of(extraArgs));
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }
}
