package io.podsweeper.strategy;

import io.podsweeper.cluster.ClusterView;
import io.podsweeper.cluster.NamespaceRecord;
import io.podsweeper.cluster.PdbRecord;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.InterPodAntiAffinityArgs;
import io.podsweeper.policy.LowNodeLoadArgs;
import io.podsweeper.policy.MakeRoomArgs;
import io.podsweeper.policy.NodeAffinityArgs;
import io.podsweeper.policy.NodeTaintsArgs;
import io.podsweeper.policy.NodeUtilizationArgs;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PodLifeTimeArgs;
import io.podsweeper.policy.Profile;
import io.podsweeper.policy.RemoveDuplicatesArgs;
import io.podsweeper.policy.RemoveFailedPodsArgs;
import io.podsweeper.policy.Rule;
import io.podsweeper.policy.TtlSource;
import io.podsweeper.policy.StrategyArgs;
import io.podsweeper.policy.TooManyRestartsArgs;
import io.podsweeper.policy.TopologySpreadArgs;
import io.podsweeper.safety.RemovalBudget;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A policy, compiled: every profile's strategies behind its evictor. {@link #evaluate} answers for one pod (what
 * the live service asks on every event and deadline); {@link #plan} runs one whole pass the way upstream does
 * (what {@code plan} prints); {@link #balance} runs only the node-aware strategies (what the live service runs
 * periodically); {@link #forecast} lists the per-pod deadlines ahead (the forecast endpoint, {@code plan --within}).
 * All use the same strategies and filters.
 */
public final class PolicyEvaluator {
  /** Upstream skips its cycle below this many Ready nodes in the node set. */
  static final int MIN_NODES = 2;

  /**
   * How the live service retries an eviction a PodDisruptionBudget refused: after 5 s, doubling up to 5 min (what
   * removal/Backoff waits: it reads these two). Said by {@link #explain}.
   */
  public static final Duration REFUSAL_FIRST_BACKOFF = Duration.ofSeconds(5);

  public static final Duration REFUSAL_MAX_BACKOFF = Duration.ofMinutes(5);

  private record CompiledProfile(
      Profile profile, Evictor evictor, List<PodStrategy> podStrategies, List<NodeStrategy> deschedule, List<NodeStrategy> balance) {}

  private final Policy policy;
  private final List<CompiledProfile> profiles;
  /** Every source of per-pod lifetimes some rule reads. */
  private final Set<TtlSource> ttlSources;
  private final Optional<FinishedPodBudgets> budgets;

  public PolicyEvaluator(Policy policy) {
    this.policy = policy;
    this.profiles = policy.profiles().stream().map(PolicyEvaluator::compile).toList();
    this.ttlSources = rules(policy).flatMap(r -> r.ttlFrom().stream()).flatMap(t -> t.sources().stream())
        .collect(java.util.stream.Collectors.toUnmodifiableSet());
    this.budgets = FinishedPodBudgets.of(policy, rules(policy).toList());
  }

  private static CompiledProfile compile(Profile p) {
    List<PodStrategy> podStrategies = new ArrayList<>();
    List<NodeStrategy> deschedule = new ArrayList<>();
    for (StrategyArgs args : p.deschedule()) {
      Optional<PodStrategy> podStrategy = podStrategy(args, p);
      podStrategy.ifPresent(podStrategies::add);
      deschedule.add(podStrategy.<NodeStrategy>map(LifetimePass::new).orElseGet(() -> nodeStrategy(args)));
    }
    return new CompiledProfile(p, new Evictor(p.evictor()), podStrategies, deschedule,
        p.balance().stream().map(PolicyEvaluator::nodeStrategy).toList());
  }

  private static Optional<PodStrategy> podStrategy(StrategyArgs args, Profile profile) {
    if (args instanceof PodLifeTimeArgs a) {
      return Optional.of(new PodLifeTime(a.rules()));
    }
    if (args instanceof RemoveFailedPodsArgs a) {
      return Optional.of(new RemoveFailedPods(a, profile.name()));
    }
    if (args instanceof TooManyRestartsArgs a) {
      return Optional.of(new TooManyRestarts(a, profile.name()));
    }
    return Optional.empty();
  }

  private static NodeStrategy nodeStrategy(StrategyArgs args) {
    if (args instanceof NodeTaintsArgs a) {
      return new NodeTaints(a);
    }
    if (args instanceof NodeAffinityArgs a) {
      return new NodeAffinity(a);
    }
    if (args instanceof InterPodAntiAffinityArgs a) {
      return new InterPodAntiAffinity(a);
    }
    if (args instanceof RemoveDuplicatesArgs a) {
      return new RemoveDuplicates(a);
    }
    if (args instanceof NodeUtilizationArgs a) {
      return new NodeUtilization(a);
    }
    if (args instanceof TopologySpreadArgs a) {
      return new TopologySpread(a);
    }
    if (args instanceof LowNodeLoadArgs a) {
      return new LowNodeLoad(a);
    }
    if (args instanceof MakeRoomArgs a) {
      return new MakeRoom(a);
    }
    throw new IllegalArgumentException("no strategy for " + args.strategyName());
  }

  public Policy policy() {
    return policy;
  }

  /**
   * The per-pod lifetimes that would count for the pod (its own, else its namespace's) under the keys some rule reads
   * (ttlFrom), and do not parse: what the live service warns about. Empty when no rule reads any.
   */
  public List<TtlSource.Found> invalidLifetimes(PodRecord pod, ClusterView view) {
    if (ttlSources.isEmpty()) {
      return List.of();
    }
    List<TtlSource.Found> own = PodTtls.invalid(ttlSources, pod.annotations(), pod.labels());
    boolean carriesOwn = ttlSources.stream().anyMatch(s -> s.find(pod.annotations(), pod.labels()).findAny().isPresent());
    if (carriesOwn) {
      return own;
    }
    NamespaceRecord namespace = view.namespace(pod.namespace());
    return PodTtls.invalid(ttlSources, namespace.annotations(), namespace.labels());
  }

  /**
   * The policy's finished-pod budgets over every pod of {@code view} (O(pods × log)), for the live service to keep up to
   * date with each pod's events and to take the budget's removals from; empty when the policy sets no budget.
   */
  public Optional<BudgetLedger> budgetLedger(ClusterView view) {
    return budgets.map(b -> b.ledger(view));
  }

  /** True if a rule keeps the last N pods: then a pod's verdict depends on its siblings too. */
  public boolean usesRetention() {
    return rules(policy).anyMatch(r -> r.retention().isPresent());
  }

  private static java.util.stream.Stream<Rule> rules(Policy policy) {
    return policy.profiles().stream().flatMap(p -> p.deschedule().stream())
        .filter(a -> a instanceof PodLifeTimeArgs)
        .flatMap(a -> ((PodLifeTimeArgs) a).rules().stream());
  }

  /** The earliest verdict of any pod-by-pod strategy of any profile whose evictor lets the pod go, or empty. */
  public Optional<Verdict> evaluate(PodRecord pod, ClusterView view) {
    return evaluate(pod, view, p -> true);
  }

  /** As {@link #evaluate(PodRecord, ClusterView)}, by the profiles {@code which} names only. */
  public Optional<Verdict> evaluate(PodRecord pod, ClusterView view, Predicate<Profile> which) {
    Verdict best = null;
    for (CompiledProfile p : profiles) {
      if (!which.test(p.profile()) || !inScope(p.profile(), pod, view)) {
        continue;
      }
      Verdict earliest = null;
      for (PodStrategy s : p.podStrategies()) {
        Optional<Verdict> v = s.evaluate(pod, view);
        if (v.isPresent() && (earliest == null || v.get().dueAt().isBefore(earliest.dueAt()))) {
          earliest = v.get();
        }
      }
      if (earliest == null || p.evictor().protection(pod, view).isPresent()) {
        continue;
      }
      earliest = earliest.notBefore(p.evictor().evictableFrom(pod)).inProfile(p.profile().name());
      if (best == null || earliest.dueAt().isBefore(best.dueAt())) {
        best = earliest;
      }
    }
    return Optional.ofNullable(best);
  }

  /**
   * Whether {@code strategy} of {@code profile} decides about one pod at a time (a deadline, re-judged by
   * {@link #evaluate}), not in a pass over the nodes (re-judged by {@link #refusal}). False for a profile or strategy
   * the policy no longer has.
   */
  public boolean decidesPerPod(String profile, String strategy) {
    return profiles.stream().filter(p -> p.profile().name().equals(profile))
        .anyMatch(p -> p.podStrategies().stream().anyMatch(s -> s.name().equals(strategy)));
  }

  /**
   * Why the profile that made a node-aware decision would not let the pod go now, or empty if it would: the pod is
   * out of the profile's scope, protected by its evictor (annotations of the pod and its namespace included), or
   * the profile is no longer in the policy. The last word before a queued balance decision is sent.
   */
  public Optional<String> refusal(String profile, PodRecord pod, ClusterView view) {
    for (CompiledProfile p : profiles) {
      if (p.profile().name().equals(profile)) {
        if (!inScope(p.profile(), pod, view)) {
          return Optional.of("out of profile " + profile + "'s node set");
        }
        return p.evictor().protection(pod, view);
      }
    }
    return Optional.of("profile " + profile + " is no longer in the policy");
  }

  /**
   * Why a pod will go, when, or why never: what the pod shows of today's pod shapes (scheduling gates, native sidecars,
   * why it ended), then profile by profile, what scopes it out, which protection applies, what
   * each strategy says. The same strategies and filters as {@link #evaluate} and {@link #plan}.
   */
  public List<String> explain(PodRecord pod, ClusterView view, Instant now) {
    try {
      return explained(pod, view, now);
    } catch (RuntimeException e) {
      return List.of("fault: judging this pod failed: " + e + "; the service leaves it alone, counts it"
          + " (podsweeper_evaluation_errors_total) and judges it again with backoff");
    }
  }

  private List<String> explained(PodRecord pod, ClusterView view, Instant now) {
    List<String> lines = new ArrayList<>(PodFacts.explain(pod));
    for (CompiledProfile p : profiles) {
      String name = "profile " + p.profile().name();
      if (!inScope(p.profile(), pod, view)) {
        lines.add(name + ": not considered: upstream profiles see only pods bound to a Ready node in their node set");
        continue;
      }
      Optional<String> protection = p.evictor().protection(pod, view);
      // Profile-wide: a protection of one rule (which another may lift) is said on its strategy's line.
      lines.add(name + ": " + protection.map(why -> "protected: " + why).orElse("no profile-wide protection"));
      for (PodStrategy s : p.podStrategies()) {
        Optional<Verdict> v = s.evaluate(pod, view).map(x -> x.notBefore(p.evictor().evictableFrom(pod)));
        String strategy = "  " + s.name();
        if (v.isEmpty()) {
          lines.add(strategy + ": " + s.ruleProtection(pod, view).orElse("no rule wants it as it is now"));
        } else if (v.get().isDue(now)) {
          lines.add(strategy + ": due since " + v.get().dueAt() + " (rule " + v.get().rule() + "): " + v.get().reason().apply(now));
        } else {
          lines.add(strategy + ": due at " + v.get().dueAt() + " (rule " + v.get().rule() + ")");
        }
        s.explainRules(pod, view, now).forEach(line -> lines.add("    " + line));
      }
      int nodeAware = p.deschedule().size() - p.podStrategies().size() + p.balance().size();
      if (nodeAware > 0) {
        lines.add("  " + nodeAware + " node-aware strateg" + (nodeAware == 1 ? "y decides" : "ies decide")
            + " over a whole pass: see the verdict");
      }
    }
    budgets.ifPresent(b -> lines.addAll(b.explain(pod, view, now)));
    Optional<Verdict> verdict = evaluate(pod, view);
    PassResult pass = pass(view, now, new RemovalBudget(policy.limits()), true);
    Optional<Decision> inPass = pass.decisions().stream().filter(d -> d.uid().equals(pod.uid())).findFirst();
    Optional<String> moved = roomPlanLines(pod, pass, lines);
    List<PdbRecord> pdbs = Action.forPod(pod) == Action.EVICT && (inPass.isPresent() || verdict.isPresent())
        ? view.pdbs(pod.namespace()).stream().filter(b -> b.selector().matches(pod.labels())).toList() : List.of();
    pdbs.forEach(b -> lines.add(disruptionBudget(b)));
    Optional<PdbRecord> refusing = pdbs.isEmpty() ? Optional.empty() : refusingBudget(pod, view);
    // A finished pod a budget will remove once it is old enough (if the rules do not first): the forecast says when.
    Optional<Decision> byBudget = budgets.isPresent() && pod.terminated() && inPass.isEmpty()
        ? forecast(view, now, Forecast.MAX_WITHIN).removals().stream()
            .filter(d -> d.uid().equals(pod.uid()) && d.strategy().equals(FinishedPodBudgets.STRATEGY)).findFirst()
        : Optional.empty();
    if (inPass.isPresent()) {
      Decision d = inPass.get();
      lines.add("verdict: " + d.action().wireName() + " now, by " + d.strategy() + " (rule " + d.rule() + "): " + d.reason()
          + refusing.map(b -> "; but PodDisruptionBudget " + b.name() + " refuses it now, so it is retried with backoff"
              + " until the budget allows a disruption").orElse(""));
    } else if (verdict.isPresent() && verdict.get().isDue(now)) {
      lines.add("verdict: due now by " + verdict.get().strategy() + " (rule " + verdict.get().rule()
          + "), but held back by the removal limits of this pass");
    } else if (byBudget.isPresent()) {
      lines.add("verdict: delete at " + byBudget.get().dueAt() + " by " + FinishedPodBudgets.STRATEGY + " (rule " + byBudget.get().rule()
          + "), if its namespace is still over then and the pod does not change before");
    } else if (verdict.isPresent()) {
      lines.add("verdict: " + Action.forPod(pod).wireName() + " at " + verdict.get().dueAt() + " by " + verdict.get().strategy()
          + " (rule " + verdict.get().rule() + "), unless the pod changes before");
    } else if (moved.isPresent()) {
      lines.add("verdict: evict as " + moved.get() + " of the room plan above, when it is carried out (one step at a time)");
    } else {
      lines.add("verdict: never, as the pod is now");
    }
    return lines;
  }

  /**
   * MakeRoom's word on the pod, added to {@code lines}: the plan that makes room for it (or why there is none), or the
   * plan that moves it. Returns the step that moves it ("step 1 of 2"), if one does.
   */
  private static Optional<String> roomPlanLines(PodRecord pod, PassResult pass, List<String> lines) {
    Optional<String> step = Optional.empty();
    for (RoomPlan plan : pass.plans()) {
      String head = "room plan (profile " + plan.profile() + "): ";
      if (plan.pending().map(p -> p.uid().equals(pod.uid())).orElse(false)) {
        lines.add(head + plan.describe());
      }
      for (int k = 0; k < plan.moves().size(); k++) {
        if (plan.moves().get(k).uid().equals(pod.uid())) {
          step = Optional.of("step " + (k + 1) + " of " + plan.moves().size());
          lines.add(head + "moves it, " + step.get() + ": " + plan.describe());
        }
      }
    }
    String noPlan = "/" + MakeRoomArgs.NAME + ": " + pod.key() + " (Pending): ";
    pass.notes().stream().filter(n -> n.contains(noPlan)).forEach(n -> lines.add("room plan (profile " + n.substring(0, n.indexOf('/'))
        + "): " + n.substring(n.indexOf(noPlan) + noPlan.length())));
    return step;
  }

  /**
   * The PodDisruptionBudget that refuses an eviction of {@code pod} now, by the status it was read with ({@code
   * status.disruptionsAllowed} 0); empty when none covers it, or none was read so.
   */
  public static Optional<PdbRecord> refusingBudget(PodRecord pod, ClusterView view) {
    return view.pdbs(pod.namespace()).stream()
        .filter(b -> b.selector().matches(pod.labels()) && b.disruptionsAllowed().equals(OptionalInt.of(0))).findFirst();
  }

  /** Whether a PodDisruptionBudget lets an eviction of a pod it covers through now, by the status it was read with. */
  private static String disruptionBudget(PdbRecord budget) {
    String retried = "a refused eviction is retried with backoff " + Durations.format(REFUSAL_FIRST_BACKOFF) + " doubling to "
        + Durations.format(REFUSAL_MAX_BACKOFF);
    String covers = "PodDisruptionBudget " + budget.name() + " covers it: ";
    if (budget.disruptionsAllowed().isEmpty()) {
      return covers + "its status.disruptionsAllowed was not read; " + retried;
    }
    int allowed = budget.disruptionsAllowed().getAsInt();
    return covers + (allowed > 0 ? "allows " + allowed + " disruption(s) now" : "allows no disruption now")
        + " (status.disruptionsAllowed " + allowed + "); " + retried;
  }

  /**
   * What the pod-by-pod strategies and the finished-pod budgets will remove by {@code now + within} if the pods do not
   * change: each pod's earliest verdict, the deadline the live service sets a timer for, and what the budgets remove as
   * the rules' removals and the pods' aging leave it over (a pod a budget removes first is not also a rule's); pods
   * already due included. Sorted by when, then by pod. Node-aware strategies decide per pass on the whole cluster and
   * are left out ({@link Forecast#NOTE}).
   */
  public Forecast forecast(ClusterView view, Instant now, Duration within) {
    Instant until = now.plus(within);
    List<Decision> removals = new ArrayList<>();
    List<String> faults = new ArrayList<>();
    for (PodRecord pod : view.pods()) {
      try {
        // The reason as it will read when the pod goes (a due pod's, now).
        evaluate(pod, view).filter(v -> v.isDue(until))
            .ifPresent(v -> removals.add(v.decide(pod, v.isDue(now) ? now : v.dueAt())));
      } catch (RuntimeException e) {
        faults.add(pod.key() + ": judging it failed: " + e);
      }
    }
    if (budgets.isPresent()) {
      List<Decision> byBudget = budgets.get().forecast(view, now, until, removals);
      Set<String> first = new HashSet<>();
      byBudget.forEach(d -> first.add(d.podKey()));
      removals.removeIf(d -> first.contains(d.podKey()));
      removals.addAll(byBudget);
    }
    removals.sort(Comparator.comparing(Decision::dueAt).thenComparing(Decision::podKey));
    boolean makesRoom = profiles.stream().anyMatch(p -> p.balance().stream().anyMatch(s -> s instanceof MakeRoom));
    List<RoomPlan> plans = makesRoom ? pass(view, now, new RemovalBudget(policy.limits()), false).plans() : List.of();
    return new Forecast(now, within, policy.dryRun(), removals, faults, plans);
  }

  /** One whole pass at {@code now} with a fresh budget: {@link #pass} with every strategy. */
  public List<Decision> plan(ClusterView view, Instant now) {
    return pass(view, now, new RemovalBudget(policy.limits()), true).decisions();
  }

  /**
   * The node-aware strategies only (taints, affinity, duplicates, utilization, topology spread), within
   * {@code budget}: what the live service runs periodically, next to its per-pod deadlines.
   */
  public PassResult balance(ClusterView view, Instant now, RemovalBudget budget, StrategyRunner runner) {
    return pass(view, now, budget, false, runner);
  }

  /** How a pass runs each strategy of each profile: at once, or (the live service) timed for the strategy's metric. */
  @FunctionalInterface
  public interface StrategyRunner {
    StrategyRunner DIRECT = (profile, strategy, run) -> run.run();

    void run(String profile, String strategy, Runnable run);
  }

  /**
   * One pass as upstream runs a cycle: the deschedule strategies of every profile, then (with the pod-by-pod
   * strategies) the finished-pod budgets, then the balance strategies of every profile, each in its listed order;
   * candidates through the evictor and the shared limits; a pod is decided at most once. The node-aware strategies are skipped when a profile's node set has fewer than two Ready nodes;
   * the pod-by-pod ones ({@code withPodStrategies}) do not depend on it and always run.
   */
  public PassResult pass(ClusterView view, Instant now, RemovalBudget budget, boolean withPodStrategies) {
    return pass(view, now, budget, withPodStrategies, StrategyRunner.DIRECT);
  }

  private PassResult pass(ClusterView view, Instant now, RemovalBudget budget, boolean withPodStrategies, StrategyRunner runner) {
    List<Decision> decisions = new ArrayList<>();
    Set<String> decided = new HashSet<>();
    List<String> notes = new ArrayList<>();
    List<String> faults = new ArrayList<>();
    List<RoomPlan> plans = new ArrayList<>();
    Optional<String> skipped = Optional.empty();
    List<NodePass> passes = new ArrayList<>();
    for (CompiledProfile p : profiles) {
      NodePass pass = new NodePass(view, now, p.profile(), p.evictor(), policy.limits(), budget, decided, decisions, notes, faults, plans);
      passes.add(pass);
      boolean nodeAware = p.deschedule().stream().anyMatch(s -> !(s instanceof LifetimePass)) || !p.balance().isEmpty();
      if (nodeAware && pass.nodes().size() < MIN_NODES && skipped.isEmpty()) {
        skipped = Optional.of("profile " + p.profile().name() + ": " + pass.nodes().size()
            + " Ready node(s) in the node set, the node-aware strategies need at least " + MIN_NODES);
      }
    }
    boolean nodeAwareRuns = skipped.isEmpty();
    for (int i = 0; i < profiles.size(); i++) {
      CompiledProfile p = profiles.get(i);
      for (int j = 0; j < p.deschedule().size(); j++) {
        NodeStrategy s = p.deschedule().get(j);
        if (s instanceof LifetimePass ? withPodStrategies : nodeAwareRuns) {
          run(runner, p.profile(), p.profile().deschedule().get(j).strategyName(), s, passes.get(i));
        }
      }
    }
    if (withPodStrategies) {
      // After the rules: the budgets remove only what the pods they leave hold over them.
      budgets.ifPresent(b -> b.pass(view, now, budget, decided, decisions, notes));
    }
    for (int i = 0; i < profiles.size() && nodeAwareRuns; i++) {
      CompiledProfile p = profiles.get(i);
      for (int j = 0; j < p.balance().size(); j++) {
        run(runner, p.profile(), p.profile().balance().get(j).strategyName(), p.balance().get(j), passes.get(i));
      }
    }
    return new PassResult(decisions, skipped, notes, faults, plans);
  }

  /** A strategy that throws ends there, as a fault of the pass; the strategies after it still run. */
  private static void run(StrategyRunner runner, Profile profile, String name, NodeStrategy strategy, NodePass pass) {
    runner.run(profile.name(), name, () -> {
      try {
        strategy.run(pass);
      } catch (RuntimeException e) {
        pass.fault("strategy " + name, e);
      }
    });
  }

  /** Upstream profiles see only pods bound to a Ready node in their node set; Podsweeper's rules see every pod. */
  static boolean inScope(Profile profile, PodRecord pod, ClusterView view) {
    if (!profile.readyNodesOnly()) {
      return true;
    }
    return NodePass.inNodeSet(profile, pod.scheduled() ? view.node(pod.nodeName()) : Optional.empty());
  }
}
