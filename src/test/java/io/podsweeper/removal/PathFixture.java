package io.podsweeper.removal;

import static io.podsweeper.cluster.PodFixtures.pod;

import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.safety.GuardWindowStore;
import io.podsweeper.strategy.Action;
import io.podsweeper.strategy.Decision;
import io.podsweeper.testing.FakePodSource;
import io.podsweeper.testing.TestClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A removal path with time in the test's hands: a clock and a nanosecond ticker that only waits move, requests sent on
 * the caller's thread, a kill switch and a lease the test throws. No threads, no sleeps: what happens while a removal
 * waits is whatever {@link #whileWaiting} does, at the wait it names.
 */
final class PathFixture implements AutoCloseable {
  static final String HEAD = "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n";
  static final Instant START = Instant.parse("2026-06-01T12:00:00Z");
  /** Finished long before {@link #START}. */
  static final Instant OLD = START.minus(Duration.ofHours(5));

  final FakePodSource source = new FakePodSource();
  final Metrics metrics = new Metrics();
  final TestPause pause = new TestPause();
  final List<Decision> sent = new ArrayList<>();
  /** What became of each decision, in order: "pod result". */
  final List<String> outcomes = new ArrayList<>();
  final List<String> revisited = new ArrayList<>();
  /** What the API server answers, by pod name; removed (200) when none is given. */
  final Map<String, RequestResult> answers = new HashMap<>();
  final GuardWindowStore store;
  boolean leading = true;
  private final TestClock clock = new TestClock(START);
  private long nanos = 1_000_000_000L;
  private int waits;
  private Runnable atWait = () -> {};
  private int atWaitNumber;
  final RemovalPath path;

  PathFixture(String policy) {
    this(policy, GuardWindowStore.NONE);
  }

  PathFixture(String policy, GuardWindowStore store) {
    this(parse(policy), store);
  }

  PathFixture(Policy policy, GuardWindowStore store) {
    this.store = store;
    Pacing.Waits waitsHere = new Pacing.Waits() {
      @Override
      public void await(BooleanSupplier ready, long millis) {
        advance(Duration.ofMillis(millis));
        if (++waits == atWaitNumber) {
          atWait.run();
        }
      }

      @Override
      public void wake() {}
    };
    RemovalPath.Ports ports = new RemovalPath.Ports(source, this::send, pause, this::record, metrics, clock, () -> nanos,
        new Backoff(clock, () -> nanos), () -> leading, why -> {}, store, revisited::add);
    this.path = new RemovalPath(policy, ports, waitsHere, callersThread());
  }

  static Policy parse(String tail) {
    return PolicyLoader.parse(HEAD + tail, "test");
  }

  /** Moves the clock and the ticker. */
  void advance(Duration by) {
    clock.advance(by);
    nanos += by.toNanos();
  }

  /** Runs {@code change} at the {@code n}-th wait from now (1: the first), as if the world moved just then. */
  void whileWaiting(int n, Runnable change) {
    atWaitNumber = waits + n;
    atWait = change;
  }

  int waits() {
    return waits;
  }

  /** The ticker now. */
  long nanos() {
    return nanos;
  }

  private RequestResult send(Decision d, boolean dryRun) {
    RequestResult answer = answers.getOrDefault(d.name(), new RequestResult(RequestResult.Outcome.REMOVED, 200, ""));
    if (!dryRun && answer.outcome() != RequestResult.Outcome.ERROR) {
      sent.add(d);
    }
    if (!dryRun && answer.outcome() == RequestResult.Outcome.REMOVED) {
      source.pods.remove(d.podKey());
    }
    return answer;
  }

  private void record(Decision d, Result result, String message, boolean dryRun) {
    outcomes.add(d.name() + " " + result.label());
  }

  /** A pod that failed long ago in namespace a, on node n1: due under a rule for Failed pods. */
  PodRecord failed(String name) {
    PodRecord p = pod(name).ns("a").on("n1").created(OLD).phase("Failed")
        .container(PodFixtures.terminatedAt("c", "Error", 1, OLD.plusSeconds(1))).build();
    source.put(p);
    return p;
  }

  /** A running pod of {@code owner}'s, old enough for any maxAge here. */
  PodRecord running(String name, String owner) {
    PodRecord p = pod(name).ns("a").on("n1").created(OLD).ownedBy("ReplicaSet", owner).phase("Running")
        .container(PodFixtures.running("c")).build();
    source.put(p);
    return p;
  }

  /** The candidate the scheduler would hand over for {@code p} now, under the policy in force. */
  Candidate due(PodRecord p) {
    Rules rules = path.rules();
    Decision d = rules.evaluator().evaluate(p, source).orElseThrow().decide(p, clock.instant());
    return new Candidate(d, false, rules.generation(), rules.policy().dryRun(), d.dueAt());
  }

  /** Admits {@code p} as the scheduler would, and waits for the sender's answer (given on this thread). */
  Answer admit(PodRecord p) {
    try {
      Answer answer = path.admit(p, due(p));
      return answer.kind() == Answer.Kind.SENDING ? answer.sent().getNow(null) : answer;
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  List<String> sentNames() {
    return sent.stream().map(Decision::name).toList();
  }

  @Override
  public void close() {
    path.close();
  }

  /** The kill switch, thrown by the test. */
  static final class TestPause implements Pause {
    private volatile boolean all;
    private volatile boolean evictions;
    private volatile String reason = "";
    volatile boolean watched = true;

    @Override
    public boolean holds(Action action) {
      return all || (evictions && action == Action.EVICT);
    }

    @Override
    public String reason() {
      return reason;
    }

    @Override
    public boolean watched() {
      return watched;
    }

    @Override
    public Optional<String> pause(String why) {
      all = true;
      reason = why;
      return Optional.empty();
    }

    @Override
    public Optional<String> pauseEvictions(String why) {
      evictions = true;
      reason = why;
      return Optional.empty();
    }

    void resume() {
      all = false;
      evictions = false;
      reason = "";
    }

    boolean paused() {
      return all || evictions;
    }
  }

  /** Runs what it is given at once, on the caller's thread. */
  private static ExecutorService callersThread() {
    return new AbstractExecutorService() {
      private volatile boolean shutDown;

      @Override
      public void execute(Runnable command) {
        if (shutDown) {
          throw new RejectedExecutionException("shut down");
        }
        command.run();
      }

      @Override
      public void shutdown() {
        shutDown = true;
      }

      @Override
      public List<Runnable> shutdownNow() {
        shutDown = true;
        return List.of();
      }

      @Override
      public boolean isShutdown() {
        return shutDown;
      }

      @Override
      public boolean isTerminated() {
        return shutDown;
      }

      @Override
      public boolean awaitTermination(long timeout, TimeUnit unit) {
        return true;
      }
    };
  }
}
