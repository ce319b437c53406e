package io.podsweeper.engine;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.spi.ILoggingEvent;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.removal.Result;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import io.podsweeper.testing.LogLines;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The removal log line: readable as text, and every field a key of its own for the JSON format. */
class OutcomesTest {
  private final LogLines lines = LogLines.of(Sweeper.class);

  @AfterEach
  void detach() {
    lines.close();
  }

  @Test
  void theRemovalLineCarriesItsFieldsAsKeyValuePairs() {
    Outcomes outcomes = new Outcomes(new Metrics(), new RecentDecisions(10), Clock.fixed(Instant.EPOCH, ZoneOffset.UTC), () -> "policy.yaml");
    Decision d = new Decision("web", "canary-0", "u-1", "7", "node-a", "PodLifeTime", "rules", "crashloop", Action.EVICT,
        "CrashLoopBackOff for 2h", Instant.EPOCH, "ReplicaSet/canary");

    outcomes.record(d, Result.PDB_REFUSED, "Cannot evict pod", false);

    ILoggingEvent line = lines.events().get(0);
    // The message repeats none of the keys (issue 41: in JSON it did, as text), and does not say a refused eviction was made.
    assertThat(line.getFormattedMessage()).isEqualTo("did not evict pod web/canary-0");
    Map<String, Object> keys = new LinkedHashMap<>();
    line.getKeyValuePairs().forEach(kv -> keys.put(kv.key, kv.value));
    assertThat(keys).containsExactly(
        Map.entry("namespace", "web"), Map.entry("pod", "canary-0"), Map.entry("uid", "u-1"), Map.entry("rule", "crashloop"),
        Map.entry("strategy", "PodLifeTime"), Map.entry("action", "evict"), Map.entry("dryRun", false),
        Map.entry("result", "pdb-refused"), Map.entry("reason", "CrashLoopBackOff for 2h"), Map.entry("detail", "Cannot evict pod"));
  }

  /** The message's verb says whether the removal was made (or would be, in dry-run); {@code result} says how not. */
  @Test
  void theMessageSaysWhetherTheRemovalWasMade() {
    Outcomes outcomes = new Outcomes(new Metrics(), new RecentDecisions(10), Clock.fixed(Instant.EPOCH, ZoneOffset.UTC), () -> "policy.yaml");
    Decision d = new Decision("ci", "build-1", "u-2", "7", "node-a", "PodLifeTime", "rules", "failed", Action.DELETE,
        "Failed, finished 2h ago", Instant.EPOCH, "");

    outcomes.record(d, Result.SUCCESS, "", false);
    outcomes.record(d, Result.DRY_RUN, "", true);
    outcomes.record(d, Result.LIMITED, "maxPerNamespace", false);
    outcomes.record(d, Result.PAUSED, "removals are paused: maintenance", false);
    outcomes.record(d, Result.WOULD_BE_LIMITED, "maxPerNamespace", true);

    outcomes.record(d, Result.ERROR, "403 pods \"build-1\" is forbidden", false);
    assertThat(lines.events()).extracting(ILoggingEvent::getFormattedMessage).containsExactly("delete pod ci/build-1",
        "would delete pod ci/build-1", "did not delete pod ci/build-1", "did not delete pod ci/build-1", "would not delete pod ci/build-1",
        "did not delete pod ci/build-1");
    // A failed removal is a WARN (a 403 is a missing grant), every other outcome an INFO.
    assertThat(lines.events()).extracting(e -> e.getLevel().toString()).containsExactly("INFO", "INFO", "INFO", "INFO", "INFO", "WARN");
  }
}
