package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.TtlSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A lifetime that does not parse is reported once per pod and value, however often the pod is evaluated. */
class LifetimeWarningsTest {
  private static List<TtlSource.Found> invalid(String value) {
    return TtlSource.PODSWEEPER.find(Map.of("podsweeper.io/ttl", value), Map.of()).toList();
  }

  @Test
  void oncePerPodAndValue() {
    Metrics metrics = new Metrics();
    LifetimeWarnings warnings = new LifetimeWarnings(metrics);
    List<String> events = new ArrayList<>();
    warnings.sendTo((pod, reason, message) -> events.add(pod.name() + " " + reason + " " + message));
    PodRecord p = pod("p").uid("u1").build();

    warnings.check(p, invalid("soon"));
    warnings.check(p, invalid("soon"));
    assertThat(events).containsExactly(
        "p PodSweeperInvalidLifetime podsweeper.io/ttl: \"soon\" does not parse (not a duration (e.g. 90s, 30m, 1h30m, 7d)); rules with ttlFrom ignore it");
    warnings.check(p, invalid("later"));
    assertThat(events).hasSize(2);
    // Fixed, then broken again; a new pod under the same name; a pod gone and back.
    warnings.check(p, List.of());
    warnings.check(p, invalid("later"));
    warnings.check(pod("p").uid("u2").build(), invalid("later"));
    assertThat(events).hasSize(4);
    warnings.forget(p);
    warnings.check(p, invalid("later"));
    assertThat(events).hasSize(5);
    assertThat(metrics.registry().getSampleValue("podsweeper_invalid_lifetimes_total", new String[] {"key"},
        new String[] {"podsweeper.io/ttl"})).isEqualTo(5.0);
  }
}
