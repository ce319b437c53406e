package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.spi.ILoggingEvent;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.podsweeper.cluster.PodListener;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.app.Service;
import io.podsweeper.metrics.Metrics;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.LogLines;
import io.podsweeper.testing.RunningService;
import io.podsweeper.testing.TestApiServer;
import io.podsweeper.testing.TestPods;
import io.podsweeper.testing.WatchGrant;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The cache is fit to act on only when it holds what the API server holds: all of the initial list by the time the
 * service reports synced, and after a reconnect nothing from before it. See docs/reliability.md.
 */
@ExtendWith(ApiServerExtension.class)
class CacheCurrencyIT {
  /**
   * Enough pods due at once that, while it waits for a current cache, the worker looks at one every millisecond
   * (each is looked at again a second later): a stale window of a few milliseconds does not go unused.
   */
  private static final int DUE_PODS = 1000;
  /** The informers to have back before the pods' one, which then alone decides whether the cache is current. */
  private static final List<String> ALL_BUT_PODS =
      List.of("namespaces", "nodes", "poddisruptionbudgets", "persistentvolumeclaims", "priorityclasses");

  @Test
  void whenTheServiceIsSyncedItHasEveryPod(TestApiServer server) throws Exception {
    KubernetesClient client = server.client();
    String ns = server.newNamespace("startup");
    // More than two pages: the informer's pages after the first are the ones asked for ahead (PagedLists).
    int inCluster = createPods(client, ns, (int) (2 * ResumingInformers.PAGE + 200));
    try (LogLines logged = LogLines.of(Service.class); RunningService service = RunningService.start(server, """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        rules: [{name: none, namespaces: {include: [nowhere]}, states: [Failed], maxAgeAfterFinish: 1h}]
        """)) {
      ILoggingEvent synced = logged.events().stream().filter(e -> e.getMessage().startsWith("informers synced")).findFirst().orElseThrow();
      assertThat(synced.getArgumentArray()[0]).as(synced.getFormattedMessage()).isEqualTo(inCluster);
      assertThat(service.status("/readyz")).isEqualTo(200);
      assertThat(service.metric("podsweeper_informer_cache_objects", "resource=\"pods\"")).isEqualTo(inCluster);
    } finally {
      client.pods().inNamespace(ns).delete();
    }
  }

  /**
   * The same at the cache, whatever the evaluations cost: they run on the informer's handler thread, one pod after
   * the other, and a cache filled on that thread (as it was) lags them, deterministically with 2 ms per pod.
   */
  @Test
  void whenItHasSyncedItHasEveryPodHoweverLongTheirEvaluationTakes(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    String ns = server.newNamespace("slow");
    int inCluster = createPods(admin, ns, 200);
    try (KubeClients clients = new KubeClients(server.newClient()); ClusterCache cache = new ClusterCache(clients, new Metrics())) {
      cache.start(evaluating(Duration.ofMillis(2))).get(60, TimeUnit.SECONDS);
      assertThat(cache.pods()).hasSize(inCluster);
      assertThat(cache.podsInNamespace(ns)).hasSize(200);
    } finally {
      admin.pods().inNamespace(ns).delete();
    }
  }

  /**
   * The pods are listed while the other informers start, as the longest list; but no pod is evaluated before what its
   * evaluation reads is cached: the pods' notifications wait until the others have listed and are watching. Here the
   * namespaces' watch is held back until the pods are all cached.
   */
  @Test
  void podsAreListedMeanwhileButEvaluatedOnlyOnceTheOtherInformersWatch(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    String ns = server.newNamespace("order");
    createPods(admin, ns, 20);
    HeldWatches held = new HeldWatches("/api/v1/namespaces");
    held.hold();
    Set<String> evaluated = ConcurrentHashMap.newKeySet();
    try (KubeClients clients = held.clients(server);
        ClusterCache cache = new ClusterCache(clients, new Metrics());
        held) { // released first, before the cache closes
      CompletableFuture<Void> started = cache.start(new PodListener() {
        @Override
        public void podChanged(PodRecord pod) {
          evaluated.add(pod.key());
        }

        @Override
        public void podDeleted(PodRecord pod) {}

        @Override
        public void namespaceChanged(String namespace) {}
      });
      await().atMost(Duration.ofSeconds(30)).until(() -> cache.podsInNamespace(ns).size() == 20);
      assertThat(evaluated).as("evaluated while the namespaces were not watched").isEmpty();
      held.release();
      started.get(30, TimeUnit.SECONDS);
      await().atMost(Duration.ofSeconds(30)).until(() -> evaluated.containsAll(cache.podsInNamespace(ns).stream().map(PodRecord::key).toList()));
    } finally {
      admin.pods().inNamespace(ns).delete();
    }
  }

  /**
   * An API server restart, at the cache: the server goes away, the pods are deleted behind its back and etcd is
   * compacted, so every watch must end in 410 Gone. The pods' informer is held back until the others are current
   * again, and from then on the cache is watched as closely as a loop can: it never says current while it still
   * holds a pod from before the outage.
   */
  @Test
  void neverCurrentOnWhatItCachedBeforeAnOutage(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    String ns = server.newNamespace("outage");
    createPods(admin, ns, 20);
    HeldWatches held = new HeldWatches("/api/v1/pods");
    Metrics metrics = new Metrics();
    try (KubeClients clients = held.clients(server);
        ClusterCache cache = new ClusterCache(clients, metrics);
        held) { // released first, before the cache closes
      cache.start(evaluating(Duration.ZERO)).get(60, TimeUnit.SECONDS);
      await().atMost(Duration.ofSeconds(10)).until(() -> cache.isCurrent() && cache.podsInNamespace(ns).size() == 20);
      // Past the first 2 s of the watch, which fabric8 treats differently (an early end counts as 410 Gone).
      Thread.sleep(3000);

      // The pods go while the API server is away, and etcd forgets the history the watches would resume from.
      held.hold();
      server.down();
      try {
        server.etcdctl("del", "--prefix", "/registry/pods/" + ns + "/");
        server.compactEtcd();
      } finally {
        server.up();
      }
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        cache.isCurrent();
        return ALL_BUT_PODS.stream().allMatch(r -> metrics.informerWatching.labels(r).get() == 1.0);
      });
      held.release();

      // At least 10 s, and on a slow machine on until the cache is current again (at most 60 s).
      long released = System.nanoTime();
      long atLeast = released + Duration.ofSeconds(10).toNanos();
      long atMost = released + Duration.ofSeconds(60).toNanos();
      int current = 0;
      for (long now = released; now < atMost && (now < atLeast || current == 0); now = System.nanoTime()) {
        if (cache.isCurrent()) {
          current++;
          assertThat(cache.podsInNamespace(ns)).as("pods deleted during the outage, while the cache says it is current").isEmpty();
        }
        Thread.onSpinWait();
      }
      assertThat(current).as("current again after the outage").isPositive();
    }
  }

  /**
   * A network blip, end to end, with the API server's audit log as the witness. The service's watches are cut while
   * its due pods are deleted; its pod informer is kept from watching again (RBAC) until the deletions are done and
   * the other informers are back, so that when it resumes, the server replays every deletion to it. Whatever the
   * cache held before, no removal request may be sent: each would be answered 404.
   */
  @Test
  void sendsNothingOnWhatItCachedBeforeItsWatchesWereCut(TestApiServer server) throws Exception {
    KubernetesClient admin = server.client();
    String ns = server.newNamespace("blip");
    String user = "podsweeper-" + ns;
    WatchGrant grant = new WatchGrant(admin, user);
    grant.allow("pods", true);
    long created = System.nanoTime();
    createPods(admin, ns, DUE_PODS);
    // The first pod is due 10 s after the last was created: once the service has started and lost its watches.
    long maxAge = Duration.ofNanos(System.nanoTime() - created).toSeconds() + 10;
    String policy = """
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        limits: {perSecond: 1000}
        guard: {maxNamespaceShare: 1.0, maxClusterShare: 1.0}
        rules:
          - name: pending
            namespaces: {include: [%s]}
            states: [Pending]
            maxAge: %ds
        """.formatted(ns, maxAge);
    Config asUser = server.config();
    asUser.setImpersonateUsername(user);
    try (RunningService service = RunningService.start(asUser, policy)) {
      assertThat(service.status("/readyz")).isEqualTo(200);
      grant.allow("pods", false);
      server.cutConnections();
      await().atMost(Duration.ofSeconds(10)).until(() -> service.status("/readyz") == 503);
      // Every pod comes due while the pods' informer is away: the service keeps them queued, retrying each second.
      Thread.sleep(Duration.ofSeconds(maxAge).toMillis());
      admin.pods().inNamespace(ns).delete();
      await().atMost(Duration.ofSeconds(30)).until(() -> admin.pods().inNamespace(ns).list().getItems().isEmpty());
      await().atMost(Duration.ofSeconds(30)).until(() -> {
        service.status("/readyz");
        return ALL_BUT_PODS.stream().allMatch(r -> service.metric("podsweeper_informer_watching", "resource=\"" + r + "\"") == 1.0);
      });
      grant.allow("pods", true);
      await().atMost(Duration.ofSeconds(60)).until(() -> service.status("/readyz") == 200);
      Thread.sleep(3000);
      assertThat(server.removalRequests(ns)).as("requests sent on what was cached before the blip").isEmpty();
    }
  }

  /** A listener that takes {@code perPod} over each pod it hears of, as the sweeper's evaluation takes its time. */
  private static PodListener evaluating(Duration perPod) {
    return new PodListener() {
      @Override
      public void podChanged(PodRecord pod) {
        try {
          Thread.sleep(perPod.toMillis());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }

      @Override
      public void podDeleted(PodRecord pod) {}

      @Override
      public void namespaceChanged(String namespace) {}
    };
  }

  /** Creates {@code count} pods in {@code ns}; returns how many the cluster holds then. */
  private static int createPods(KubernetesClient client, String ns, int count) throws InterruptedException {
    ExecutorService creators = Executors.newFixedThreadPool(8);
    for (int i = 0; i < count; i++) {
      String name = "p" + i;
      creators.execute(() -> TestPods.create(client, ns, name, "node-a", Map.of()));
    }
    creators.shutdown();
    assertThat(creators.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
    assertThat(client.pods().inNamespace(ns).list().getItems()).hasSize(count);
    return client.pods().inAnyNamespace().list().getItems().size();
  }

  /**
   * Holds back requests to watch one collection ({@code path}), from {@link #hold} until {@link #release} or
   * {@link #close}. A test must release before it closes the cache (declare this last in its try-with-resources): a held
   * request holds the informer's lock, which stopping the informer waits for, so a test failing while it held the
   * watches would hang instead of reporting its failure.
   */
  private static final class HeldWatches implements Interceptor, AutoCloseable {
    private final String path;
    private volatile CountDownLatch gate = new CountDownLatch(0);

    HeldWatches(String path) {
      this.path = path;
    }

    /**
     * The service's clients of {@code server}, with these watches held back. Over HTTP/1.1, a connection per request:
     * holding blocks the thread that sends the watch, and fabric8 sends it from the thread that completed the list
     * before it, which over HTTP/2 can be the shared connection's frame reader; holding it there stalled every other
     * stream, the pods' list included (a stall of the test's making: nothing in the service blocks that thread).
     */
    KubeClients clients(TestApiServer server) {
      return new KubeClients(new KubernetesClientBuilder().withConfig(server.config())
          .withHttpClientBuilderConsumer(http -> http.preferHttp11().addOrReplaceInterceptor("held-watches", this)).build());
    }

    void hold() {
      gate = new CountDownLatch(1);
    }

    void release() {
      gate.countDown();
    }

    @Override
    public void close() {
      release();
    }

    @Override
    public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
      String query = request.uri().getQuery();
      if (path.equals(request.uri().getPath()) && query != null && query.contains("watch=true")) {
        try {
          gate.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }
}
