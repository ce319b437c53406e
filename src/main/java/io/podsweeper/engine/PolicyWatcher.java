package io.podsweeper.engine;

import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyException;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.policy.PolicySummary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hot reload of the policy file. A mounted ConfigMap changes by an atomic symlink swap that file watchers miss, so
 * the file's bytes are compared on a timer instead. A valid new policy is applied; an invalid one is rejected
 * (log, metric, notice) and the last good policy keeps running.
 */
public final class PolicyWatcher {
  private static final Logger LOG = LoggerFactory.getLogger(PolicyWatcher.class);

  private final Path file;
  private final UnaryOperator<Policy> adjust;
  private final Consumer<Policy> apply;
  private final Consumer<String> rejected;
  private final Metrics metrics;
  private byte[] last;
  /** The policy of the file in force, which a reload's log line compares the new one with. */
  private Policy running;

  /**
   * @param running the file's policy in force now
   * @param adjust applied to every loaded policy (e.g. --dry-run forcing dry-run)
   */
  public PolicyWatcher(Path file, Policy running, UnaryOperator<Policy> adjust, Consumer<Policy> apply, Consumer<String> rejected,
      Metrics metrics) {
    this.file = file;
    this.running = running;
    this.adjust = adjust;
    this.apply = apply;
    this.rejected = rejected;
    this.metrics = metrics;
    this.last = read();
  }

  /** Checks the file once; called periodically. */
  public void check() {
    byte[] now = read();
    if (now == null || Arrays.equals(now, last)) {
      return;
    }
    last = now;
    try {
      Policy policy = adjust.apply(PolicyLoader.load(file));
      apply.accept(policy);
      metrics.policyReloads.labels("applied").inc();
      List<String> changes = PolicySummary.changes(running, policy);
      running = policy;
      LOG.info("policy {} reloaded: {}", file, changes.isEmpty() ? "nothing that acts changed" : String.join("; ", changes));
    } catch (PolicyException e) {
      // PolicyLoader turns every mistake in the file into one: a periodic task that throws is never run again.
      metrics.policyReloads.labels("rejected").inc();
      LOG.error("policy {} rejected, the last good policy keeps running: {}", file, e.getMessage());
      rejected.accept(e.getMessage());
    }
  }

  private byte[] read() {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      LOG.warn("cannot read policy {}: {}", file, e.getMessage());
      return null;
    }
  }
}
