package io.podsweeper.cli;

import java.util.List;
import java.util.Optional;

/**
 * Whether the class-data archive the JVM was given ({@code -XX:SharedArchiveFile}, as the image's entry point gives it)
 * is in use. The JVM drops an archive that is missing, or was made by another JVM, from another jar or for a class path
 * spelled otherwise, without a word, and every start then loads and verifies some 8,000 classes again: about 1 CPU-second more
 * (docs/benchmarks.md, eighth pass). Only while it maps an archive does the JVM say "sharing" in {@code java.vm.info}.
 */
final class ClassDataArchive {
  private static final String ARCHIVE_FLAG = "-XX:SharedArchiveFile=";

  private ClassDataArchive() {}

  /**
   * @param jvmArguments the JVM's own arguments (those of JAVA_TOOL_OPTIONS too), as the runtime MXBean gives them
   * @param vmInfo the {@code java.vm.info} property
   * @return the archive asked for and not mapped; empty if none was asked for, it is mapped, or sharing is turned off
   */
  static Optional<String> unused(List<String> jvmArguments, String vmInfo) {
    String archive = null;
    for (String argument : jvmArguments) {
      if (argument.startsWith(ARCHIVE_FLAG)) {
        archive = argument.substring(ARCHIVE_FLAG.length()); // the last one counts, as for the JVM
      } else if (argument.equals("-Xshare:off")) {
        return Optional.empty();
      }
    }
    return archive == null || vmInfo.contains("sharing") ? Optional.empty() : Optional.of(archive);
  }
}
