package io.podsweeper.engine;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.PodFixtures;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.migration.MigrationJobController;
import io.podsweeper.policy.Policy;
import io.podsweeper.policy.PolicyLoader;
import io.podsweeper.removal.JobAdmission;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.safety.GuardWindowStore;
import io.podsweeper.strategy.Decision;
import io.podsweeper.testing.FakePodSource;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * PodMigrationJobs in the gate: a job holds its place in the limits from its admission until it ends, one that ends
 * before its eviction gives the place back, and its eviction meets the final check when it is sent.
 */
class MigrationJobGateTest {
  private static final String POLICY = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      migrationJobs: {mode: EvictDirectly}
      limits: {maxTotal: 1}
      guard: {maxNamespaceShare: 1.0}
      rules: [{name: r, states: [Failed]}]
      """;

  private final FakePodSource source = new FakePodSource();
  private final Metrics metrics = new Metrics();
  private final KillSwitch killSwitch = new KillSwitch(metrics, (paused, reason, over) -> true);
  private final List<Decision> sent = new CopyOnWriteArrayList<>();

  private Sweeper sweeper() {
    return sweeper(POLICY);
  }

  private Sweeper sweeper(String policy) {
    return sweeper(PolicyLoader.parse(policy, "test"));
  }

  private Sweeper sweeper(Policy policy) {
    Sweeper s = new Sweeper(policy, source, (d, dryRun) -> {
      throw new AssertionError("no request outside a job here");
    }, metrics, Clock.systemUTC(), new RecentDecisions(100), killSwitch, why -> {}, GuardWindowStore.NONE);
    s.start();
    return s;
  }

  private PodRecord running(String name) {
    PodRecord p = pod(name).ns("a").on("n1").ownedBy("ReplicaSet", "rs").phase("Running").container(PodFixtures.running("c")).build();
    source.put(p);
    return p;
  }

  private static Decision decision(PodRecord p) {
    return Decision.of(p, "PodMigrationJob", "PodMigrationJob", "job-" + p.name(), "moved by hand", Instant.now());
  }

  private JobAdmission.JobSendResult evict(JobAdmission gate, PodRecord p) {
    return gate.evict(p, Optional.empty(), d -> {
      sent.add(d);
      return new RequestResult(RequestResult.Outcome.REMOVED, 201, "evicted");
    });
  }

  @Test
  void aJobHoldsItsPlaceInTheLimitsUntilItEndsAndGivesItBackIfItNeverEvicted() {
    try (Sweeper s = sweeper()) {
      JobAdmission gate = s.jobs();
      PodRecord first = running("first");
      PodRecord second = running("second");
      assertThat(gate.admit(first, decision(first))).isEmpty();
      assertThat(gate.admit(second, decision(second))).hasValueSatisfying(why -> assertThat(why).contains("limit"));

      gate.ended(first.uid());

      assertThat(gate.admit(second, decision(second))).isEmpty();
    }
  }

  @Test
  void aJobsEvictionIsHeldWhilePausedAndSentWithThePodsCurrentVersionAfter() {
    try (Sweeper s = sweeper()) {
      JobAdmission gate = s.jobs();
      PodRecord p = running("web");
      assertThat(evict(gate, p).outcome()).isEqualTo(JobAdmission.JobSend.HELD);
      assertThat(gate.admit(p, decision(p))).isEmpty();
      killSwitch.pause("test");

      assertThat(evict(gate, p)).satisfies(r -> {
        assertThat(r.outcome()).isEqualTo(JobAdmission.JobSend.HELD);
        assertThat(r.message()).startsWith("removals are paused");
      });
      assertThat(sent).isEmpty();

      killSwitch.resume();
      PodRecord changed = pod("web").ns("a").on("n1").ownedBy("ReplicaSet", "rs").uid(p.uid()).rv("99").phase("Running")
          .container(PodFixtures.running("c")).build();
      source.put(changed);
      assertThat(evict(gate, changed).outcome()).isEqualTo(JobAdmission.JobSend.SENT);
      assertThat(sent).singleElement().satisfies(d -> {
        assertThat(d.uid()).isEqualTo(p.uid());
        assertThat(d.resourceVersion()).isEqualTo("99");
      });
    }
  }

  /**
   * A job's eviction meets its owner's limits as they are when it is sent, not only at its admission: a sibling that
   * went unavailable meanwhile (or that the worker admitted at the same moment) holds it. Its own place among the
   * evictions in progress does not count against maxInFlightPerOwner.
   */
  @Test
  void aJobsEvictionIsHeldWhileASiblingIsUnavailable() {
    try (Sweeper s = sweeper(POLICY.replace("limits: {maxTotal: 1}", "limits: {maxTotal: 5, maxUnavailablePerOwner: 1, maxInFlightPerOwner: 1}"))) {
      JobAdmission gate = s.jobs();
      PodRecord web = ready("web", "True");
      ready("sibling", "True");
      assertThat(gate.admit(web, decision(web))).isEmpty();
      ready("sibling", "False");
      assertThat(evict(gate, web)).satisfies(r -> {
        assertThat(r.outcome()).isEqualTo(JobAdmission.JobSend.HELD);
        assertThat(r.message()).contains("would leave 2 pods of ReplicaSet rs unavailable");
      });
      ready("sibling", "True");
      assertThat(evict(gate, web).outcome()).isEqualTo(JobAdmission.JobSend.SENT);
      assertThat(sent).singleElement().satisfies(d -> assertThat(d.name()).isEqualTo("web"));
    }
  }

  private PodRecord ready(String name, String ready) {
    PodRecord p = pod(name).ns("a").on("n1").uid("uid-" + name).ownedBy("ReplicaSet", "rs").phase("Running").container(PodFixtures.running("c"))
        .condition("Ready", ready, null, null).build();
    source.put(p);
    return p;
  }

  /**
   * A job's eviction that got no answer may have been carried out; when the job then ends without another (its TTL
   * ran out), the guard keeps counting it: under maxRemovals 1 no second job is admitted. So too when the pod is seen
   * terminating first (the eviction did happen); not when a later version of the pod, not terminating, shows it did
   * not.
   */
  @Test
  void aJobsEvictionWithoutAnAnswerStaysCountedWhenTheJobEnds() {
    assertThat(secondJobAfterAnUnansweredEvictionAnd(Optional.empty())).hasValueSatisfying(why -> assertThat(why).contains("guard"));
  }

  @Test
  void aJobsEvictionWithoutAnAnswerStaysCountedWhenThePodTerminatesBeforeTheJobEnds() {
    assertThat(secondJobAfterAnUnansweredEvictionAnd(Optional.of(pod("web").rv("2").terminating())))
        .hasValueSatisfying(why -> assertThat(why).contains("guard"));
  }

  @Test
  void aJobsEvictionWithoutAnAnswerIsForgottenWhenThePodShowsItDidNotHappen() {
    assertThat(secondJobAfterAnUnansweredEvictionAnd(Optional.of(pod("web").rv("2")))).isEmpty();
  }

  /** Under guard.maxRemovals 1, job web's eviction gets no answer, web shows as {@code next}, the job ends: a second job? */
  private Optional<String> secondJobAfterAnUnansweredEvictionAnd(Optional<PodFixtures.PodBuilder> next) {
    try (Sweeper s = sweeper(POLICY.replace("limits: {maxTotal: 1}", "limits: {maxTotal: 5}").replace("guard: {maxNamespaceShare: 1.0}",
        "guard: {maxRemovals: 1, maxNamespaceShare: 1.0}"))) {
      JobAdmission gate = s.jobs();
      PodRecord web = running("web");
      assertThat(gate.admit(web, decision(web))).isEmpty();
      assertThat(gate.evict(web, Optional.empty(),
          d -> new RequestResult(RequestResult.Outcome.ERROR, RequestResult.NO_ANSWER, "timed out")).outcome()).isEqualTo(JobAdmission.JobSend.HELD);
      next.map(b -> b.ns("a").on("n1").uid(web.uid()).ownedBy("ReplicaSet", "rs").phase("Running").container(PodFixtures.running("c")).build())
          .ifPresent(changed -> {
            source.put(changed);
            s.podChanged(changed);
          });
      gate.ended(web.uid());
      PodRecord other = running("other");
      return gate.admit(other, decision(other));
    }
  }

  @Test
  void aJobsEvictionEndsOnceWhenThePodsDeletionIsSeenBeforeTheAnswer() {
    try (Sweeper s = sweeper()) {
      JobAdmission gate = s.jobs();
      PodRecord p = running("web");
      assertThat(gate.admit(p, decision(p))).isEmpty();

      // The informer's delete event can come in before the eviction's answer: both end the same removal.
      assertThat(gate.evict(p, Optional.empty(), d -> {
        s.podDeleted(p);
        return new RequestResult(RequestResult.Outcome.REMOVED, 201, "evicted");
      }).outcome()).isEqualTo(JobAdmission.JobSend.SENT);
      gate.ended(p.uid());

      assertThat(removals("success")).isEqualTo(1.0);
    }
  }

  private double removals(String result) {
    return java.util.Collections.list(metrics.registry().metricFamilySamples()).stream()
        .filter(f -> f.name.equals("podsweeper_removals")).flatMap(f -> f.samples.stream())
        .filter(x -> x.name.equals("podsweeper_removals_total") && x.labelValues.get(x.labelNames.indexOf("result")).equals(result))
        .mapToDouble(x -> x.value).sum();
  }

  @Test
  void aHandMadeJobOfAProtectedPodIsRefused() {
    try (Sweeper s = sweeper()) {
      PodRecord p = running("web");
      s.jobs().admit(p, decision(p));
      // A hand-made job is judged by the evictor's protections (given here): a protected pod is refused, nothing sent.
      assertThat(s.jobs().evict(p, Optional.of("a DaemonSet pod"), d -> {
        throw new AssertionError("not sent");
      })).isEqualTo(new JobAdmission.JobSendResult(JobAdmission.JobSend.REFUSED, "a DaemonSet pod"));
    }
  }

  /**
   * Under a native policy the first profile is the rules', whose evictor leaves every protection to the rules. A
   * hand-made job was chosen by no rule, so none opted in: it meets the DefaultEvictor's protections. (Before, it met
   * the rules' evictor, and a DaemonSet, system-critical or bare pod was evicted.)
   */
  @Test
  void aHandMadeJobUnderANativePolicyMeetsTheDefaultEvictorsProtections() {
    Policy policy = PolicyLoader.parse(POLICY, "test");
    io.podsweeper.strategy.Evictor evictor = new io.podsweeper.strategy.Evictor(MigrationJobController.handMadeJobEvictor(policy));
    PodRecord agent = pod("agent").ns("a").on("n1").ownedBy("DaemonSet", "ds").phase("Running").container(PodFixtures.running("c")).build();
    PodRecord coredns = pod("coredns").ns("kube-system").on("n1").ownedBy("ReplicaSet", "rs").priority(2_000_000_000)
        .priorityClassName("system-cluster-critical").phase("Running").container(PodFixtures.running("c")).build();
    PodRecord bare = pod("debug").ns("a").on("n1").bare().phase("Running").container(PodFixtures.running("c")).build();
    for (PodRecord p : List.of(agent, coredns, bare)) {
      source.put(p);
      assertThat(evictor.protection(p, source)).as(p.name()).isPresent();
    }
    assertThat(evictor.protection(running("web"), source)).isEmpty();
  }

  /**
   * Under {@code dryRun: true} a hand-made job is neither admitted nor evicted: a job's eviction has no dry-run of its
   * own. (Before, the gate admitted it as live and its eviction was a real one.)
   */
  @Test
  void aHandMadeJobUnderADryRunPolicySendsNoEviction() {
    try (Sweeper s = sweeper(PolicyLoader.parse(POLICY, "test").withDryRun(true))) {
      PodRecord p = running("web");
      assertThat(s.jobs().admit(p, decision(p))).contains(JobAdmission.JOBS_IN_DRY_RUN);

      assertThat(evict(s.jobs(), p).outcome()).isEqualTo(JobAdmission.JobSend.HELD);
      assertThat(sent).isEmpty();
    }
  }

  /**
   * A job admitted under a live policy, which then switches to dry-run before the job's eviction (a ReservationFirst
   * job waiting for its Reservation, say): its eviction waits out the dry-run, and goes once the policy is live again.
   */
  @Test
  void aJobAdmittedLiveWaitsOutASwitchToDryRun() {
    Policy live = PolicyLoader.parse(POLICY, "test");
    try (Sweeper s = sweeper(live)) {
      PodRecord p = running("web");
      assertThat(s.jobs().admit(p, decision(p))).isEmpty();

      s.reload(live.withDryRun(true));
      assertThat(evict(s.jobs(), p)).isEqualTo(new JobAdmission.JobSendResult(JobAdmission.JobSend.HELD, JobAdmission.JOBS_IN_DRY_RUN));
      assertThat(sent).isEmpty();

      s.reload(live);
      assertThat(evict(s.jobs(), p).outcome()).isEqualTo(JobAdmission.JobSend.SENT);
    }
  }

  /**
   * A job this service made for a rule's decision is carried out only while its rule, re-judged on the pod as it is
   * now, still wants it (README), also by a new leader or after a restart: the job names the profile that decided
   * ({@code podsweeper.io/profile}), and the controller's decision carries it. (Before, that lived only in the gate's
   * memory: another process judged the job as hand-made, by the evictor's protections alone, and evicted a pod no
   * rule wanted any more.) The only rule wants Failed pods; "web" is Running.
   */
  @Test
  void aJobThisServiceMadeIsJudgedByItsRuleInAnotherProcess() {
    try (Sweeper newLeader = sweeper()) {
      PodRecord p = running("web");
      assertThat(newLeader.jobs().admit(p, madeBy(newLeader, p))).isEmpty();

      assertThat(evict(newLeader.jobs(), p)).isEqualTo(new JobAdmission.JobSendResult(JobAdmission.JobSend.REFUSED, "no rule wants the pod now"));
      assertThat(sent).isEmpty();
    }
  }

  /** The twin: the same job, its rule still wanting the pod, is carried out. */
  @Test
  void aJobThisServiceMadeWhoseRuleStillWantsThePodIsCarriedOutInAnotherProcess() {
    try (Sweeper newLeader = sweeper(POLICY.replace("states: [Failed]", "states: [Running]"))) {
      PodRecord p = running("web");
      assertThat(newLeader.jobs().admit(p, madeBy(newLeader, p))).isEmpty();

      assertThat(evict(newLeader.jobs(), p).outcome()).isEqualTo(JobAdmission.JobSend.SENT);
      assertThat(sent).singleElement().satisfies(d -> assertThat(d.name()).isEqualTo("web"));
    }
  }

  /** What MigrationJobController.decision builds for a job this service made for a PodLifeTime deadline: its profile. */
  private static Decision madeBy(Sweeper s, PodRecord p) {
    String profile = s.jobs().rules().policy().profiles().get(0).name();
    return Decision.of(p, "PodLifeTime", profile, "job-" + p.name(), "PodMigrationJob job-" + p.name(), Instant.now());
  }

  /** Two upstream profiles: "strict" (the DefaultEvictor's defaults) first, "loose" evicting DaemonSet pods. */
  private static final String TWO_PROFILES = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      migrationJobs: {mode: EvictDirectly}
      limits: {maxTotal: 5}
      guard: {maxNamespaceShare: 1.0}
      profiles:
      - name: strict
        pluginConfig:
        - {name: DefaultEvictor, args: {}}
        - {name: RemoveDuplicates, args: {}}
        plugins: {balance: {enabled: [RemoveDuplicates]}}
      - name: loose
        pluginConfig:
        - {name: DefaultEvictor, args: {evictDaemonSetPods: true}}
        - {name: RemoveDuplicates, args: {}}
        plugins: {balance: {enabled: [RemoveDuplicates]}}
      """;

  /**
   * Anyone who may create a PodMigrationJob can write {@code koordinator.sh/job-created-by: podsweeper} and
   * {@code podsweeper.io/profile} on it (or copy one of this service's jobs and edit its podRef). Such a job, met in the
   * cluster rather than made here, also meets a hand-made job's protections (the first profile's evictor): naming the
   * weakest profile never evicts a pod a hand-made job could not. Found by an audit; before, the DaemonSet pod went.
   */
  @Test
  void aJobNamingAWeakerProfileStillMeetsAHandMadeJobsProtections() {
    source.nodes.add(new io.podsweeper.cluster.NodeRecord("n1", java.util.Map.of(), true, false, List.of(), java.util.Map.of()));
    try (Sweeper s = sweeper(TWO_PROFILES)) {
      PodRecord agent = pod("agent").ns("a").on("n1").ownedBy("DaemonSet", "ds").phase("Running").container(PodFixtures.running("c")).build();
      source.put(agent);
      Decision copied = Decision.of(agent, MigrationJobController.STRATEGY, "loose", "copied", "PodMigrationJob copied", Instant.now());
      Optional<String> handMade = new io.podsweeper.strategy.Evictor(MigrationJobController.handMadeJobEvictor(s.jobs().rules().policy()))
          .protection(agent, source);
      assertThat(handMade).contains("a DaemonSet pod");
      assertThat(s.jobs().admit(agent, copied)).isEmpty();

      JobAdmission.JobSendResult r = s.jobs().evict(agent, handMade, d -> {
        sent.add(d);
        return new RequestResult(RequestResult.Outcome.REMOVED, 201, "evicted");
      });

      assertThat(r).isEqualTo(new JobAdmission.JobSendResult(JobAdmission.JobSend.REFUSED, "a DaemonSet pod"));
      assertThat(sent).isEmpty();
    }
  }

  /**
   * A hand-made job without {@code spec.podRef.uid} is admitted (its place in the limits taken, its pod held), then
   * filling in the UID fails (here: the API server refuses the spec update every time, e.g. conflicts with another
   * writer), and the job times out. Its end must reach the gate for the pod it was admitted for, though the job never
   * got that UID: else its place in the limits stays taken and the pod stays held for good. Under maxTotal 1 a second
   * job is admitted once the first has failed. (A fake API server here: a real one cannot be made to refuse every
   * update of one object.)
   */
  @Test
  void aJobAdmittedBeforeItsPodUidIsWrittenGivesItsPlaceBackWhenItFails() throws Exception {
    PodRecord web = pod("web").ns("a").on("n1").ownedBy("ReplicaSet", "rs").phase("Running").container(PodFixtures.running("c")).build();
    source.put(web);
    PodRecord other = pod("other").ns("a").on("n1").ownedBy("ReplicaSet", "rs2").phase("Running").container(PodFixtures.running("c")).build();
    source.put(other);
    String job = """
        {"apiVersion":"scheduling.koordinator.sh/v1alpha1","kind":"PodMigrationJob",
         "metadata":{"name":"by-hand","uid":"job-uid-1","resourceVersion":"5","creationTimestamp":"%s"},
         "spec":{"podRef":{"namespace":"a","name":"web"},"mode":"EvictDirectly","ttl":"8s"},
         "status":{"phase":"Pending"}}""".formatted(Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
    java.util.concurrent.atomic.AtomicReference<String> stored = new java.util.concurrent.atomic.AtomicReference<>(job);
    List<String> statusWrites = new CopyOnWriteArrayList<>();
    List<String> specWrites = new CopyOnWriteArrayList<>();
    com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "fake-apiserver");
      t.setDaemon(true);
      return t;
    }));
    String base = "/apis/scheduling.koordinator.sh/v1alpha1";
    server.createContext("/", ex -> {
      String path = ex.getRequestURI().getPath();
      String query = Optional.ofNullable(ex.getRequestURI().getQuery()).orElse("");
      String method = ex.getRequestMethod();
      byte[] in = ex.getRequestBody().readAllBytes();
      ex.getResponseHeaders().add("Content-Type", "application/json");
      if (method.equals("GET") && path.equals(base)) {
        respond(ex, 200, "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"scheduling.koordinator.sh/v1alpha1\","
            + "\"resources\":[{\"name\":\"podmigrationjobs\",\"singularName\":\"podmigrationjob\",\"namespaced\":false,"
            + "\"kind\":\"PodMigrationJob\",\"verbs\":[\"get\",\"list\",\"watch\",\"update\"]}]}");
      } else if (method.equals("GET") && path.equals(base + "/podmigrationjobs") && query.contains("watch=true")) {
        ex.sendResponseHeaders(200, 0); // a watch that never says anything: the job does not change on its own here
        ex.getResponseBody().flush();
        try {
          Thread.sleep(20_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        ex.close();
      } else if (method.equals("GET") && path.equals(base + "/podmigrationjobs")) {
        respond(ex, 200, "{\"apiVersion\":\"scheduling.koordinator.sh/v1alpha1\",\"kind\":\"PodMigrationJobList\","
            + "\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[" + stored.get() + "]}");
      } else if (method.equals("GET") && path.equals(base + "/podmigrationjobs/by-hand")) {
        respond(ex, 200, stored.get());
      } else if (method.equals("PUT") && path.equals(base + "/podmigrationjobs/by-hand/status")) {
        String body = new String(in, java.nio.charset.StandardCharsets.UTF_8);
        statusWrites.add(body);
        respond(ex, 200, body);
      } else if (method.equals("PUT") && path.equals(base + "/podmigrationjobs/by-hand")) {
        specWrites.add(method);
        respond(ex, 409, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"Conflict\",\"code\":409,"
            + "\"message\":\"the object has been modified\"}");
      } else if (method.equals("POST") && path.endsWith("/events")) {
        respond(ex, 201, new String(in, java.nio.charset.StandardCharsets.UTF_8));
      } else {
        respond(ex, 404, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}");
      }
    });
    server.start();
    io.fabric8.kubernetes.client.KubernetesClient client = new io.fabric8.kubernetes.client.KubernetesClientBuilder()
        .withConfig(new io.fabric8.kubernetes.client.ConfigBuilder().withMasterUrl("http://127.0.0.1:" + server.getAddress().getPort())
            .withRequestRetryBackoffLimit(0).withNamespace("default").withOnlyHttpWatches(true).build())
        .build();
    try (Sweeper s = sweeper()) {
      java.util.concurrent.atomic.AtomicReference<MigrationJobController> controller = new java.util.concurrent.atomic.AtomicReference<>();
      // The job's TTL counts from just before it is listed, however long the set-up took on a busy machine.
      stored.set(job.replaceFirst("\"creationTimestamp\":\"[^\"]*\"", "\"creationTimestamp\":\""
          + Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS) + "\""));
      io.podsweeper.kube.MigrationJobs api = io.podsweeper.kube.MigrationJobs.start(client, () -> {
        MigrationJobController c = controller.get();
        if (c != null) {
          c.changed();
        }
      }, j -> { }).orElseThrow();
      MigrationJobController c = new MigrationJobController(api, s.jobs(), source, null, Clock.systemUTC());
      controller.set(c);
      try {
        c.start();
        c.changed();
        // Admitted (then it tries to write the pod's UID into its spec, refused): its place is taken (maxTotal 1) ...
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).until(() -> !specWrites.isEmpty());
        assertThat(s.jobs().admit(other, decision(other))).isPresent();
        // ... then it times out and fails.
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(15))
            .until(() -> statusWrites.stream().anyMatch(w -> w.contains("\"Failed\"")));
        Thread.sleep(300);

        assertThat(s.jobs().admit(other, decision(other)))
            .as("a second job, once the first (never evicted) has failed, under maxTotal 1").isEmpty();
      } finally {
        c.close();
      }
    } finally {
      client.close();
      server.stop(0);
    }
  }

  private static void respond(com.sun.net.httpserver.HttpExchange ex, int code, String body) throws java.io.IOException {
    byte[] bytes = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    ex.sendResponseHeaders(code, bytes.length);
    ex.getResponseBody().write(bytes);
    ex.close();
  }
}
