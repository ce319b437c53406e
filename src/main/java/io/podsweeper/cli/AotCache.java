package io.podsweeper.cli;

import java.util.List;
import java.util.Optional;

/**
 * Whether the AOT cache the JVM was given ({@code -XX:AOTCache}, as the image's entry point gives it; or a class-data
 * archive, {@code -XX:SharedArchiveFile}, its Java 17 forerunner) is in use. The JVM drops a cache that is missing, or
 * was made by another JVM build, with other flags that shape it ({@code -XX:+UseCompactObjectHeaders}, compressed
 * pointers) or from another class path, and starts without it: every start then loads, verifies and links its classes
 * again and compiles without the training run's profiles (docs/benchmarks.md, "Java 25 and the AOT cache"). It says so
 * in lines of its own on stdout, which a JSON log pipeline does not parse; only while it maps a cache does the JVM say
 * "sharing" in {@code java.vm.info}.
 */
final class AotCache {
  private static final List<String> CACHE_FLAGS = List.of("-XX:AOTCache=", "-XX:SharedArchiveFile=");

  private AotCache() {}

  /**
   * @param jvmArguments the JVM's own arguments (those of JAVA_TOOL_OPTIONS too), as the runtime MXBean gives them
   * @param vmInfo the {@code java.vm.info} property
   * @return the cache asked for and not mapped; empty if none was asked for, it is mapped, or sharing is turned off
   */
  static Optional<String> unused(List<String> jvmArguments, String vmInfo) {
    String cache = null;
    for (String argument : jvmArguments) {
      for (String flag : CACHE_FLAGS) {
        if (argument.startsWith(flag)) {
          cache = argument.substring(flag.length()); // the last one counts, as for the JVM
        }
      }
      if (argument.equals("-Xshare:off") || argument.equals("-XX:AOTMode=off")) {
        return Optional.empty();
      }
    }
    return cache == null || vmInfo.contains("sharing") ? Optional.empty() : Optional.of(cache);
  }
}
