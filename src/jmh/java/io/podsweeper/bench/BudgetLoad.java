package io.podsweeper.bench;

import static io.podsweeper.bench.LoadTest.cpu;
import static io.podsweeper.bench.LoadTest.report;
import static io.podsweeper.bench.LoadTest.seconds;
import static io.podsweeper.bench.LoadTest.serverCpu;

import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.IntSummaryStatistics;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The finished-pod budget live (issue 40; {@code BUDGET_PODS=100000 scripts/load-test.sh}, docs/benchmarks.md): PODS
 * finished pods over NAMESPACES namespaces, BURST of them finishing in one namespace as fast as the API server takes
 * the status writes, budget PODS - BURST/2 at perSecond {@value #RATE}. Measures, with a watch of every pod as the
 * witness, the time until the cluster holds at most the budget, the largest namespace's excess over its fair share (the
 * service's {@code podsweeper_finished_pod_budget_limit}) at the end, what the quiet namespaces lost, and the CPU of the
 * service and of kube-apiserver + etcd.
 */
final class BudgetLoad {
  private static final int RATE = 100;
  private static final String POLICY = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      fullPassInterval: 30m
      limits: {perSecond: %d}
      finishedPodBudget: {maxPods: %d, minRetention: 10m, phases: [Succeeded, Failed]}
      """;
  private static final String LIMIT = "podsweeper_finished_pod_budget_limit{";

  private final LoadTest test;
  private final int pods;
  private final int namespaces;
  private final int burst;
  private final int maxPods;
  private final String burstNamespace;

  BudgetLoad(LoadTest test, int pods, int namespaces, int burst) {
    if (burst >= pods || namespaces < 2) {
      throw new IllegalArgumentException("BUDGET_BURST must be below BUDGET_PODS, BUDGET_NAMESPACES at least 2");
    }
    this.test = test;
    this.pods = pods;
    this.namespaces = namespaces;
    this.burst = burst;
    this.maxPods = pods - burst / 2;
    this.burstNamespace = namespace(0);
  }

  private static String namespace(int i) {
    return String.format("budget-%03d", i);
  }

  void run() throws Exception {
    int before = pods - burst;
    for (int i = 0; i < namespaces; i++) {
      LoadTest.namespace(test.client, namespace(i));
    }
    // Finished 3 h to about 2 h ago, past minRetention: every one of them may go.
    Instant now = Instant.now();
    long started = System.nanoTime();
    LoadTest.create(test.client, test.pool, before, i -> LoadTest.pod(namespace(i % namespaces), "done-" + i, i, 100),
        i -> LoadTest.finished("Succeeded", "Completed", now.minus(Duration.ofHours(3)).plusMillis(i * 50L)));
    report("finished pods created (each with a status update)", "%d over %d namespaces in %.1f s", before, namespaces, seconds(started));
    started = System.nanoTime();
    LoadTest.create(test.client, test.pool, burst, i -> LoadTest.pod(burstNamespace, "burst-" + i, i, 100), i -> null);
    report("the burst's pods created, Pending", "%d in %s in %.1f s", burst, burstNamespace, seconds(started));

    Witness witness = new Witness(maxPods);
    for (int i = 0; i < before; i++) {
      witness.counted(namespace(i % namespaces), "done-" + i);
    }
    String from = test.client.pods().inAnyNamespace().list(new ListOptionsBuilder().withLimit(1L).build()).getMetadata().getResourceVersion();
    try (Watch watch = test.client.pods().inAnyNamespace().watch(new ListOptionsBuilder().withResourceVersion(from).build(), witness)) {
      measure(witness, before);
    }
  }

  private void measure(Witness witness, int before) throws Exception {
    Process service = test.startService(POLICY.formatted(RATE, maxPods));
    String pid = String.valueOf(service.pid());
    long[] atStart = {cpu(pid), serverCpu(test.env)};
    long started = System.nanoTime();
    while (!test.ready() || test.metric("podsweeper_finished_pod_budget_pods") < before) {
      if (!service.isAlive()) {
        throw new IllegalStateException("the service exited; see " + test.runDir.resolve("service.log"));
      }
      Thread.sleep(100);
    }
    long[] atSync = {cpu(pid), serverCpu(test.env)};
    Map<String, LoadTest.ThreadCpu> threadsAtSync = LoadTest.cpuByThread(pid);
    report("service ready, every finished pod counted", "%.1f s; CPU: service %.1f s (JVM start included), kube-apiserver + etcd %.1f s",
        seconds(started), (atSync[0] - atStart[0]) / 100.0, (atSync[1] - atStart[1]) / 100.0);
    report("budget", "maxPods %d, perSecond %d, minRetention 10m: %d over once the burst is in", maxPods, RATE, pods - maxPods);

    // The burst: each pod's status written once (a merge patch on the pod as named here, so no read first), finished an
    // hour ago, older the lower its number.
    Instant burstStart = Instant.now();
    Instant finishedAt = burstStart.minus(Duration.ofHours(1));
    List<CompletableFuture<Void>> writes = new ArrayList<>(burst);
    for (int i = 0; i < burst; i++) {
      Pod named = new PodBuilder().withNewMetadata().withNamespace(burstNamespace).withName("burst-" + i).endMetadata().build();
      String status = "{\"status\":" + Serialization.asJson(LoadTest.finished("Succeeded", "Completed", finishedAt.plusMillis(i))) + "}";
      writes.add(CompletableFuture.runAsync(() -> test.client.pods().resource(named).subresource("status")
          .patch(PatchContext.of(PatchType.JSON_MERGE), status), test.pool));
    }
    CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
    Instant burstEnd = Instant.now();
    long[] atBurstEnd = {cpu(pid), serverCpu(test.env)};
    int removedInBurst = witness.removed();
    double burstSeconds = between(burstStart, burstEnd);
    report("the burst", "%d pods of %s finished in %.1f s (%.0f/s); %d removed meanwhile, %d over at its end", burst, burstNamespace,
        burstSeconds, burst / burstSeconds, removedInBurst, witness.total() - maxPods);

    Instant deadline = burstEnd.plusSeconds(3L * (pods - maxPods) / RATE + 120);
    while (witness.under == null) { // set once the count is back at the budget; it only falls after the burst
      if (Instant.now().isAfter(deadline) || witness.closed) {
        throw new IllegalStateException("still " + witness.total() + " finished pods, budget " + maxPods);
      }
      Thread.sleep(50);
    }
    long[] atUnder = {cpu(pid), serverCpu(test.env)};
    Instant under = witness.under;
    report("at or under the budget (the watch's count)", "%.1f s after the burst's end, %.1f s after its start, %.1f s after the first"
            + " went over (excess ÷ rate: %d s)", between(burstEnd, under), between(burstStart, under), between(witness.firstOver, under),
        (pods - maxPods) / RATE);
    report("removals until then", "%d, from the first to the last at %.1f/s; after the burst's end %d at %.1f/s", witness.removed(),
        witness.removed() / between(witness.firstRemoval, witness.lastRemoval), witness.removed() - removedInBurst,
        (witness.removed() - removedInBurst) / between(burstEnd, under));
    report("CPU, the burst's writes", "service %.1f s, kube-apiserver + etcd %.1f s", (atBurstEnd[0] - atSync[0]) / 100.0,
        (atBurstEnd[1] - atSync[1]) / 100.0);
    report("CPU, the burst's end to under budget", "service %.1f s, kube-apiserver + etcd %.1f s", (atUnder[0] - atBurstEnd[0]) / 100.0,
        (atUnder[1] - atBurstEnd[1]) / 100.0);
    report("CPU, the burst's start to under budget", "service %.1f s, kube-apiserver + etcd %.1f s", (atUnder[0] - atSync[0]) / 100.0,
        (atUnder[1] - atSync[1]) / 100.0);
    report("  the service's by thread group, CPU-s", "%s", SideBySide.byThreadGroup(threadsAtSync, LoadTest.cpuByThread(pid), 1, 0.05));

    Thread.sleep(10_000); // nothing more goes once the budget holds
    shares(witness, before);
    report("service resident memory", "%d MiB", LoadTest.rssMiB(pid));
    service.destroy();
    service.waitFor();
  }

  /** The end state: the cluster against the budget, each namespace against its fair share, what the quiet ones lost. */
  private void shares(Witness witness, int before) throws Exception {
    Map<String, Double> limits = new TreeMap<>();
    for (String line : test.scrape().split("\n")) {
      if (line.startsWith(LIMIT)) {
        int at = line.indexOf("namespace=\"") + 11;
        limits.put(line.substring(at, line.indexOf('"', at)), Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
      }
    }
    report("finished pods at the end, 10 s later", "%d, budget %d; %d removed (the excess was %d)", witness.total(), maxPods,
        witness.removed(), pods - maxPods);
    String worst = null;
    double over = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < namespaces; i++) {
      String ns = namespace(i);
      double excess = witness.held(ns) - limits.getOrDefault(ns, Double.NaN);
      if (worst == null || excess > over) {
        worst = ns;
        over = excess;
      }
    }
    report("largest share over its fair share at the end", "%+.0f pods in %s (holds %d, fair share %.0f by the service's gauge)", over, worst,
        witness.held(worst), limits.get(worst));
    int quietLost = 0;
    int quietNamespacesLosing = 0;
    IntSummaryStatistics quietHeld = new IntSummaryStatistics();
    for (int i = 1; i < namespaces; i++) {
      int lost = witness.removed(namespace(i));
      quietLost += lost;
      quietNamespacesLosing += lost > 0 ? 1 : 0;
      quietHeld.accept(witness.held(namespace(i)));
    }
    report("quiet namespaces (max-min fairness: each under the level keeps all)", "%d of %d lost pods, %d pods in all; each holds %d to %d"
            + " (it was given %d or %d)", quietNamespacesLosing, namespaces - 1, quietLost, quietHeld.getMin(), quietHeld.getMax(),
        before / namespaces, (before + namespaces - 1) / namespaces);
    report("the bursting namespace", "holds %d, fair share %.0f, lost %d of the %d removals", witness.held(burstNamespace),
        limits.get(burstNamespace), witness.removed(burstNamespace), witness.removed());
  }

  private static double between(Instant from, Instant to) {
    return Duration.between(from, to).toMillis() / 1000.0;
  }

  /**
   * The witness: every pod the watch shows finished (Succeeded or Failed, not terminating), by namespace, what went, and
   * when the cluster's count last went over the budget and came back under it.
   */
  private static final class Witness implements Watcher<Pod> {
    private final int maxPods;
    private final Set<String> finished = ConcurrentHashMap.newKeySet();
    private final Map<String, AtomicInteger> held = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> removed = new ConcurrentHashMap<>();
    private final AtomicInteger total = new AtomicInteger();
    private final AtomicInteger removedTotal = new AtomicInteger();
    private volatile Instant firstOver;
    private volatile Instant under;
    private volatile Instant firstRemoval;
    private volatile Instant lastRemoval;
    private volatile boolean closed;

    Witness(int maxPods) {
      this.maxPods = maxPods;
    }

    void counted(String namespace, String name) {
      if (finished.add(namespace + "/" + name)) {
        held.computeIfAbsent(namespace, n -> new AtomicInteger()).incrementAndGet();
        total.incrementAndGet();
      }
    }

    @Override
    public void eventReceived(Action action, Pod pod) {
      String namespace = pod.getMetadata().getNamespace();
      String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
      boolean terminating = action == Action.DELETED || pod.getMetadata().getDeletionTimestamp() != null;
      if (!terminating && ("Succeeded".equals(phase) || "Failed".equals(phase))) {
        counted(namespace, pod.getMetadata().getName());
      } else if (finished.remove(namespace + "/" + pod.getMetadata().getName())) {
        held.get(namespace).decrementAndGet();
        total.decrementAndGet();
        removed.computeIfAbsent(namespace, n -> new AtomicInteger()).incrementAndGet();
        removedTotal.incrementAndGet();
        lastRemoval = Instant.now();
        if (firstRemoval == null) {
          firstRemoval = lastRemoval;
        }
      }
      if (total.get() > maxPods) {
        under = null;
        if (firstOver == null) {
          firstOver = Instant.now();
        }
      } else if (under == null && firstOver != null) {
        under = Instant.now();
      }
    }

    @Override
    public void onClose(WatcherException cause) {
      System.out.println("the witness's watch ended: " + cause);
      closed = true;
    }

    int total() {
      return total.get();
    }

    int removed() {
      return removedTotal.get();
    }

    int held(String namespace) {
      AtomicInteger n = held.get(namespace);
      return n == null ? 0 : n.get();
    }

    int removed(String namespace) {
      AtomicInteger n = removed.get(namespace);
      return n == null ? 0 : n.get();
    }
  }
}
