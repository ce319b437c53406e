package io.podsweeper.cluster;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Running-pod counts kept as pod records change agree with counting every pod, without the scan. */
class RunningPodsTest {
  private final RunningPods running = new RunningPods();

  @Test
  void aPodCountsWhileBoundNotFinishedAndNotTerminating() {
    PodRecord pending = pod("web").ns("a").unscheduled().phase("Pending").build();
    running.changed(null, pending);
    assertThat(running.inNamespace("a")).as("never scheduled: nothing to take away").isZero();
    PodRecord bound = pod("web").ns("a").on("node-a").build();
    running.changed(pending, bound);
    running.changed(null, pod("db").ns("b").build());
    assertThat(running.inNamespace("a")).isEqualTo(1);
    assertThat(running.inCluster()).isEqualTo(2);
    PodRecord terminating = pod("web").ns("a").terminating().build();
    running.changed(bound, terminating);
    assertThat(running.inNamespace("a")).isZero();
    running.changed(terminating, null);
    PodRecord finished = pod("job").ns("b").phase("Succeeded").build();
    running.changed(null, finished);
    assertThat(running.inNamespace("b")).as("finished pods hold nothing").isEqualTo(1);
    assertThat(running.inCluster()).isEqualTo(1);
    assertThat(running.inNamespace("no-such-namespace")).isZero();
  }

  @Test
  void countsAgreeWithAScanAfterAnyRunOfAddsUpdatesAndDeletes() {
    Random random = new Random(42);
    Map<String, PodRecord> store = new HashMap<>();
    for (int step = 0; step < 5_000; step++) {
      String ns = "ns-" + random.nextInt(3);
      String key = ns + "/pod-" + random.nextInt(20);
      PodRecord after = random.nextInt(5) == 0 ? null : randomPod(random, ns, key.substring(ns.length() + 1));
      PodRecord before = after == null ? store.remove(key) : store.put(key, after);
      running.changed(before, after);
    }
    for (String ns : List.of("ns-0", "ns-1", "ns-2")) {
      assertThat(running.inNamespace(ns)).as(ns)
          .isEqualTo(store.values().stream().filter(p -> p.namespace().equals(ns) && p.runningOnNode()).count());
    }
    assertThat(running.inCluster()).isEqualTo(store.values().stream().filter(PodRecord::runningOnNode).count());
  }

  private static PodRecord randomPod(Random random, String ns, String name) {
    PodFixtures.PodBuilder pod = pod(name).ns(ns).phase(List.of("Pending", "Running", "Succeeded", "Failed").get(random.nextInt(4)));
    if (random.nextBoolean()) {
      pod.unscheduled();
    }
    if (random.nextInt(4) == 0) {
      pod.terminating();
    }
    return pod.build();
  }
}
