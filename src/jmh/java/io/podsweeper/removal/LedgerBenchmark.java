package io.podsweeper.removal;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.NodeRecord;
import io.podsweeper.cluster.NodeUsage;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.PodSource;
import io.podsweeper.cluster.PvcRecord;
import io.podsweeper.cluster.QueriedUsage;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.policy.PrometheusQuery;
import io.podsweeper.strategy.Decision;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the ledger costs a removal (docs/benchmarks.md): reserve → commit (a DELETE that happened) and reserve → roll
 * back (an eviction refused), under its one lock, with the guard counting evictions against a namespace's running pods
 * and the hourly cap of a team's profile, over a cluster of 1k to 100k pods. The guard's window is kept small by
 * rolling back (a window of thousands of evictions is not what one removal meets).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "-Xmx2g")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class LedgerBenchmark {
  private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");

  @Param({"1000", "100000"})
  int pods;

  private Ledger ledger;
  private List<PodRecord> running;
  private List<Decision> evictions;
  private int next;

  @Setup
  public void setUp() {
    ClusterSnapshot snapshot = io.podsweeper.bench.SyntheticCluster.of(pods);
    ledger = new Ledger(new Source(snapshot), Clock.fixed(NOW, ZoneOffset.UTC), PolicyLoader.parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        limits: {maxPerNamespace: 1000000, maxPerNode: 1000000}
        guard: {maxNamespaceShare: 0.5, maxClusterShare: 0.5}
        rules: [{name: r, states: [Running], maxAge: 1h}]
        """, "bench"));
    running = snapshot.pods().stream().filter(PodRecord::runningOnNode).collect(Collectors.toCollection(ArrayList::new));
    evictions = running.stream().map(p -> Decision.of(p, "PodLifeTime", "default", "r", "bench", NOW)).toList();
  }

  @Benchmark
  public Object reserveThenRollBack() {
    int i = next++ % running.size();
    Ledger.Reserve reserve = ledger.reserve(running.get(i), evictions.get(i), ledger.guardEpoch());
    if (reserve instanceof Ledger.Reserved reserved) {
      ledger.rollBack(reserved.reservation());
    }
    return reserve;
  }

  @Benchmark
  public Object reserveThenCommitThenPodGone() {
    int i = next++ % running.size();
    PodRecord pod = running.get(i);
    Ledger.Reserve reserve = ledger.reserve(pod, evictions.get(i), ledger.guardEpoch());
    if (reserve instanceof Ledger.Reserved reserved) {
      ledger.commit(reserved.reservation());
      ledger.podDeleted(pod);
      // The window slides: without this the guard would trip once half a namespace had gone.
      ledger.rollBack(reserved.reservation());
    }
    return reserve;
  }

  /** The snapshot as the live cache: current, running counts kept per namespace. */
  private static final class Source implements PodSource {
    private final ClusterView view;
    private final Map<String, PodRecord> byKey;
    private final Map<String, Long> runningByNamespace;
    private final int runningInCluster;

    Source(ClusterSnapshot view) {
      this.view = view;
      this.byKey = view.pods().stream().collect(Collectors.toMap(PodRecord::key, p -> p));
      this.runningByNamespace = view.pods().stream().filter(PodRecord::runningOnNode)
          .collect(Collectors.groupingBy(PodRecord::namespace, Collectors.counting()));
      this.runningInCluster = (int) view.pods().stream().filter(PodRecord::runningOnNode).count();
    }

    @Override
    public Optional<PodRecord> pod(String key) {
      return Optional.ofNullable(byKey.get(key));
    }

    @Override
    public boolean isCurrent() {
      return true;
    }

    @Override
    public int runningInNamespace(String namespace) {
      return runningByNamespace.getOrDefault(namespace, 0L).intValue();
    }

    @Override
    public int runningInCluster() {
      return runningInCluster;
    }

    @Override
    public NamespaceRecord namespace(String name) {
      return view.namespace(name);
    }

    @Override
    public Optional<NodeRecord> node(String name) {
      return view.node(name);
    }

    @Override
    public Collection<NodeRecord> nodes() {
      return view.nodes();
    }

    @Override
    public Collection<PodRecord> pods() {
      return view.pods();
    }

    @Override
    public Collection<PodRecord> podsInNamespace(String namespace) {
      return view.podsInNamespace(namespace);
    }

    @Override
    public Collection<PodRecord> podsOnNode(String node) {
      return view.podsOnNode(node);
    }

    @Override
    public Collection<PodRecord> podsWithAntiAffinity() {
      return view.podsWithAntiAffinity();
    }

    @Override
    public List<PdbRecord> pdbs(String namespace) {
      return view.pdbs(namespace);
    }

    @Override
    public Optional<PvcRecord> pvc(String namespace, String name) {
      return view.pvc(namespace, name);
    }

    @Override
    public OptionalInt priorityClassValue(String name) {
      return view.priorityClassValue(name);
    }

    @Override
    public Optional<NodeUsage> nodeUsage(String node) {
      return view.nodeUsage(node);
    }

    @Override
    public Optional<QueriedUsage> queriedUsage(PrometheusQuery query) {
      return view.queriedUsage(query);
    }
  }
}
