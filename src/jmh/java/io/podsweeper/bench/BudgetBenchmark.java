package io.podsweeper.bench;

import io.podsweeper.cluster.ClusterSnapshot;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodCondition;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.cluster.Volumes;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.strategy.BudgetLedger;
import io.podsweeper.strategy.Decision;
import io.podsweeper.strategy.PolicyEvaluator;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The finished-pod budget's decision (docs/benchmarks.md, issue 40): 100,000 finished pods over 200 namespaces, one of
 * them ({@code ci-burst}) holding 20,000 that finished in the last 30 minutes, the 199 others about 400 each over the
 * last week; budget 90,000 (at most 15,000 per namespace), minRetention 10m. The quiet namespaces are under the level,
 * so the budget takes 10,000 of the burst's oldest and nothing else. {@code keepLast}: a keepLast rule keeps the newest
 * 5 Failed pods of each owner (100 pods per owner), which the budget must honour.
 *
 * <p>{@code build} is what the live service does at start or on a reload (a ledger over every cached pod);
 * {@code plan} the whole decision once ({@code plan}: the ledger and every removal, in order); {@code burstEvents} one
 * pod finishing in the bursting namespace and its deletion (two events, so the state stays as it was);
 * {@code quietEvents} the same in a quiet namespace, under its share; {@code next} the next removal;
 * {@code quietEventsThenNext} both, the shares worked out again; {@code finalCheck} the last word before a send. Each runs
 * on one thread; {@link #main} times the same by CPU time.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 1, jvmArgsAppend = "-Xmx2g")
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class BudgetBenchmark {
  static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");
  private static final String BUDGET = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      finishedPodBudget: {maxPods: 90000, maxPodsPerNamespace: 15000, minRetention: 10m, phases: [Succeeded, Failed]}
      """;
  private static final String KEEP_LAST = "rules: [{name: keep-last, states: [Failed], keepLast: 5, maxAgeAfterFinish: 30d}]\n";
  private static final int NAMESPACES = 200;
  private static final int BURST = 20_000;
  private static final int PODS = 100_000;

  @Param({"false", "true"})
  boolean keepLast;

  private ClusterSnapshot snapshot;
  private PolicyEvaluator evaluator;
  private BudgetLedger ledger;
  private PodRecord burstPod;
  private PodRecord quietPod;
  private Decision decision;
  private PodRecord decided;

  @Setup(Level.Trial)
  public void setUp() {
    Random random = new Random(42);
    List<PodRecord> pods = new ArrayList<>(PODS);
    List<NamespaceRecord> namespaces = new ArrayList<>();
    for (int n = 0; n < NAMESPACES; n++) {
      String name = n == 0 ? "ci-burst" : "team-" + n;
      namespaces.add(new NamespaceRecord(name, Map.of("kubernetes.io/metadata.name", name)));
    }
    for (int i = 0; i < BURST; i++) {
      pods.add(finished("ci-burst", i, NOW.minus(Duration.ofMillis(random.nextInt(30 * 60_000))), random));
    }
    for (int i = BURST; i < PODS; i++) {
      pods.add(finished("team-" + (1 + i % (NAMESPACES - 1)), i, NOW.minus(Duration.ofSeconds(random.nextInt(7 * 86_400))), random));
    }
    snapshot = ClusterSnapshot.of(pods, namespaces, List.of());
    evaluator = new PolicyEvaluator(PolicyLoader.parse(BUDGET + (keepLast ? KEEP_LAST : ""), "budget"));
    ledger = evaluator.budgetLedger(snapshot).orElseThrow();
    burstPod = finished("ci-burst", PODS, NOW.minusSeconds(1), random);
    quietPod = finished("team-1", PODS + 1, NOW.minusSeconds(1), random);
    decision = ledger.next(NOW).orElseThrow();
    decided = pods.stream().filter(p -> p.key().equals(decision.podKey())).findFirst().orElseThrow();
  }

  /** A finished pod: a tenth Failed; 100 pods per owner (a Job), so keepLast keeps 5 of each owner's Failed ones. */
  static PodRecord finished(String namespace, int i, Instant finishedAt, Random random) {
    boolean failed = random.nextInt(10) == 0;
    Instant created = finishedAt.minusSeconds(60 + random.nextInt(600));
    ContainerStatus main = new ContainerStatus("main", ContainerStatus.Kind.MAIN, Optional.empty(),
        Optional.of(failed ? "Error" : "Completed"), OptionalInt.of(failed ? 1 : 0), Optional.of(finishedAt), 0);
    return new PodRecord(namespace, "pod-" + i, "uid-" + i, String.valueOf(1000 + i), created, Optional.empty(), "node-" + i % 100,
        failed ? "Failed" : "Succeeded", Optional.empty(), Map.of("app", "job-" + i / 100), Map.of(),
        List.of(new OwnerRef("Job", "job-" + i / 100, "job-uid-" + i / 100, true)), List.of(main), OptionalInt.of(0), "",
        Optional.of(created), List.of(new PodCondition("Ready", "False", Optional.empty(), Optional.of(finishedAt))),
        new Volumes(false, List.of(), false), new Scheduling(Map.of(), List.of(), List.of(), List.of(), List.of(), Map.of(), "BestEffort",
            List.of()), List.of("registry.example.com/job:1.0"), List.of(), false);
  }

  /** The ledger over every pod: what the live service builds at start and on every reload. */
  @Benchmark
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  public BudgetLedger build() {
    return evaluator.budgetLedger(snapshot).orElseThrow();
  }

  /** The whole decision at once, as {@code plan} prints it: the ledger, then every removal in order. */
  @Benchmark
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  public List<Decision> plan() {
    return evaluator.plan(snapshot, NOW);
  }

  /** One pod finishing in the bursting namespace (far over its share), and its deletion: two events. */
  @Benchmark
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public void burstEvents() {
    ledger.podChanged(burstPod);
    ledger.podDeleted(burstPod.key());
  }

  /** The same in a quiet namespace, under its share: the shares are to be worked out again at the next question. */
  @Benchmark
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public void quietEvents() {
    ledger.podChanged(quietPod);
    ledger.podDeleted(quietPod.key());
  }

  /** The budget's next removal, the shares as they were. */
  @Benchmark
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public Optional<Decision> next() {
    return ledger.next(NOW);
  }

  /** Two events in a quiet namespace, then the next removal: the shares worked out again. */
  @Benchmark
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public Optional<Decision> quietEventsThenNext() {
    quietEvents();
    return ledger.next(NOW);
  }

  /** The final check before a budget removal is sent. */
  @Benchmark
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public Optional<String> finalCheck() {
    return ledger.refusal(decision, decided, NOW);
  }

  /**
   * The same operations timed by this thread's CPU time, which a machine shared with other jobs inflates far less
   * than JMH's wall-clock time: {@code java -cp target/benchmarks.jar io.podsweeper.bench.BudgetBenchmark [keepLast]}.
   * Five rounds, each op repeated 20,000 times (build and plan once); the first rounds warm the JIT up.
   */
  public static void main(String[] args) {
    BudgetBenchmark b = new BudgetBenchmark();
    b.keepLast = args.length > 0 && Boolean.parseBoolean(args[0]);
    ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
    b.setUp();
    int n = 20_000;
    for (int round = 1; round <= 5; round++) {
      long build = cpu(cpu, b::build, 1);
      long plan = cpu(cpu, b::plan, 1);
      System.out.printf(Locale.ROOT, "round %d (keepLast %s), CPU per op: build %.0f ms, plan %.0f ms, burstEvents %.1f us,"
          + " quietEvents %.1f us, next %.1f us, quietEventsThenNext %.1f us, finalCheck %.2f us%n", round, b.keepLast, build / 1e6,
          plan / 1e6, cpu(cpu, b::burstEvents, n) / 1e3 / n, cpu(cpu, b::quietEvents, n) / 1e3 / n, cpu(cpu, b::next, n) / 1e3 / n,
          cpu(cpu, b::quietEventsThenNext, n) / 1e3 / n, cpu(cpu, b::finalCheck, n) / 1e3 / n);
    }
  }

  private static long cpu(ThreadMXBean cpu, Runnable op, int times) {
    long start = cpu.getCurrentThreadCpuTime();
    for (int i = 0; i < times; i++) {
      op.run();
    }
    return cpu.getCurrentThreadCpuTime() - start;
  }
}
