package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.Informable;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager;
import io.fabric8.kubernetes.client.dsl.internal.BaseOperation;
import io.fabric8.kubernetes.client.dsl.internal.OperationSupport;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import io.fabric8.kubernetes.client.informers.impl.DefaultSharedIndexInformer;
import io.fabric8.kubernetes.client.informers.impl.ListerWatcher;
import io.fabric8.kubernetes.client.utils.URLUtils;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.MalformedURLException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * fabric8 informers whose watches resume where they broke off, and that count as caught up again only once the server
 * has said, after the break, how far it is, and the watch has brought them there ({@link CatchUp}).
 *
 * <p>Why: fabric8 resumes a broken watch from the last resourceVersion it saw, and the server replays what was missed;
 * but its informer reports "watching" as soon as the new connection is open, before the replay (or the 410 Gone that
 * says the history is gone) has arrived, and removals went out in that window on what the cache held before an outage.
 * A Kubernetes 1.20 server marks no end of a replay (the end-of-initial-events bookmark of a WatchList came with 1.27).
 * So these informers, which did not resume at all, listed every object again after any ended watch, and fabric8 renews
 * each watch every 5 to 10 minutes: a consistent list from etcd of every pod (~27 s at 100k pods, removals held
 * meanwhile) for a break that cost nothing.
 *
 * <p>Now, each time a watch starts over without a list, the server is asked where its watch cache is (a list served
 * from the watch cache, {@code resourceVersion=0}, with a field selector no object matches: its resourceVersion and no
 * items), and the informer is caught up once its watch has applied an event or a bookmark at or past that version.
 * Why the watch cache's version and not etcd's (a consistent list with {@code limit=1}): the watch is served from the
 * watch cache, whose version a 1.20 server moves only with events of that kind, and which it sends in bookmarks only 2 s
 * before a watch's timeout; etcd's revision moves with every write to any kind (every Lease renewal), so a watch of a
 * quiet kind would never reach it, and every renewal would end in a list again. Caught up with the watch cache at a
 * moment after the break, the store is as current as a watch that never broke.
 *
 * <p>The lists: at start, from the watch cache ({@code resourceVersion=0}, as client-go's informers list), as current as
 * the watch cache at a moment after the start; on 410 Gone (the history the watch would resume from is gone: an API
 * server restart, a compaction), after a list from the watch cache that failed, or when the last version applied does
 * not compare, a consistent list, in pages, from etcd; otherwise (a fence no event reaches within {@link #PATIENCE}, an
 * ended watch fabric8 would not resume, a failed first watch) a list from the watch cache
 * ({@code resourceVersion=<last applied>&resourceVersionMatch=NotOlderThan}), never older than what the store held.
 * A list from the watch cache is unpaged (a 1.20 server serves any paged list from etcd), so it is read and decoded as
 * it arrives, never held whole.
 *
 * <p>What it cannot see: a connection that dies with no reset and no error looks like an open, quiet watch until
 * fabric8's renewal ends it.
 */
final class ResumingInformers implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ResumingInformers.class);
  /** Objects per page of a consistent list (from etcd), so that 100k pods never arrive as one response. */
  static final long PAGE = 500;
  /** How long a fence may stay ahead of a watch that brings nothing new before the informer lists again. */
  static final Duration PATIENCE = Duration.ofSeconds(5);
  /** A field selector no object matches (no name is empty): a list with it carries a resourceVersion and no items. */
  static final String NOTHING = "metadata.name=";

  private final KubernetesClient client;
  /** For tests: the timeout each watch asks the server for (it ends the watch then, and fabric8 resumes it). */
  private final Optional<Duration> watchTimeout;
  private final List<PagedLists<?>> lists = new CopyOnWriteArrayList<>();
  /**
   * Each informer's thread, which runs its handlers and its relists in order (the informer hands them on one at a
   * time). Why a thread each, not one pool for all: the informer hands each notification on as a task of its own, and
   * a pool's idle threads took turns at them, waking one another for each of the 10,000 pods of a first list: about
   * 0.3 CPU-seconds of a 10k start in futex calls (docs/benchmarks.md, fifth pass).
   */
  private final List<ExecutorService> threads = new CopyOnWriteArrayList<>();
  /** Retries of fence reads, and the checks for a fence no event reaches. */
  private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "informer-fences");
    t.setDaemon(true);
    return t;
  });

  /** @param client the informers' client ({@link KubeClients#informers}), which its owner closes */
  ResumingInformers(KubernetesClient client) {
    this(client, Optional.empty());
  }

  ResumingInformers(KubernetesClient client, Optional<Duration> watchTimeout) {
    this.client = client;
    this.watchTimeout = watchTimeout;
  }

  /** An informer, and whether its store has caught up with the server since its watch last broke off. */
  record Watched<T>(SharedIndexInformer<T> informer, CatchUp catchUp) {
    /** Listed, watching, and caught up: what it holds may be acted on. */
    boolean current() {
      return informer.hasSynced() && informer.isWatching() && catchUp.caughtUp();
    }
  }

  /**
   * @param listType what a list of {@code type} decodes to (e.g. {@code PodList.class})
   * @param operation what to list and watch, from the client it is given (e.g. {@code c -> c.nodes()}): the whole
   *     collection, with no selector (the lists are asked for here, from its URL)
   * @param store where the informer keeps what it has listed and watched
   */
  <T extends HasMetadata, L extends KubernetesResourceList<T>> Watched<T> informer(
      Class<T> type, Class<L> listType, Function<KubernetesClient, Informable<T>> operation, ItemStore<T> store) {
    @SuppressWarnings("unchecked") // every operation of the client is a BaseOperation, which is fabric8's ListerWatcher
    BaseOperation<T, L, ?> source = (BaseOperation<T, L, ?>) operation.apply(client);
    KubeSerialization.expect(source.getKubernetesSerialization(), type);
    boolean protobuf = type == Pod.class;
    PagedLists<L> pages = new PagedLists<>(options -> page(source, options, protobuf), body -> decode(body, listType));
    lists.add(pages);
    ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "informer-" + type.getSimpleName());
      t.setDaemon(true);
      return t;
    });
    threads.add(thread);
    CatchUp catchUp = new CatchUp();
    Function<ListOptions, CompletableFuture<L>> fromWatchCache = options -> unpaged(source, options, protobuf, listType, thread);
    DefaultSharedIndexInformer<T, L> informer =
        new DefaultSharedIndexInformer<>(type, new Resuming<>(source, pages, fromWatchCache, catchUp), 0, thread);
    // Nothing looks objects up by namespace through fabric8; its index would only cost memory per object.
    informer.removeIndexer(Cache.NAMESPACE_INDEX);
    informer.itemStore(store);
    return new Watched<>(informer, catchUp);
  }

  /**
   * An informer of what {@code operation} lists and watches as fabric8 lists it (e.g. one object by name, which RBAC's
   * resourceNames covers), that never resumes a watch: after any break it lists again before it watches again, and
   * hands its notifications on with fabric8's own executor, as {@code runnableInformer} does. For the few objects a
   * removal's final check reads (the kill switch, the team policies), where a list costs next to nothing and a resumed
   * watch would report "watching" before the server's replay of a pause had arrived.
   */
  @SuppressWarnings("unchecked") // every operation of the client is a BaseOperation: a ListerWatcher and an OperationSupport
  static <T extends HasMetadata, L extends KubernetesResourceList<T>> SharedIndexInformer<T> unresumed(Class<T> type, Informable<T> operation) {
    BaseOperation<T, L, ?> source = (BaseOperation<T, L, ?>) operation;
    KubeSerialization.expect(source.getKubernetesSerialization(), type);
    ListsAgain<T, L> listsAgain = new ListsAgain<>(source, source::submitList, (options, watcher) -> StreamedWatch.of(source, options, watcher));
    return new DefaultSharedIndexInformer<>(type, listsAgain, 0, source.getOperationContext().getExecutor());
  }

  /**
   * One list request for the whole collection {@code source} lists (no selector but {@code options}'s: every informer
   * here caches all of its kind), as fabric8's own list asks for it (same client, so the same retries and
   * authentication), but compressed, as client-go asks for it.
   *
   * <p>Why compressed: a list of 10,000 pods is 77 MiB of JSON, about a tenth of that compressed. With the JIT limited
   * to C1 (docs/benchmarks.md), AES-GCM runs without its intrinsics, and decrypting the uncompressed bytes was ~40 % of
   * the decoding threads' CPU at start; inflating is native zlib. The server compresses only lists above 128 KiB, and
   * fabric8 neither asks for compression nor inflates: {@link PagedLists#inflated} does.
   *
   * <p>Pods are asked for as protobuf, as client-go asks for them ({@link KubeProtobuf}): decoding their JSON was most
   * of the CPU a start spends on them. The other kinds, a few dozen objects in all, stay JSON and fabric8's decoding.
   */
  private CompletableFuture<byte[]> page(OperationSupport source, ListOptions options, boolean protobuf) {
    HttpRequest request;
    try {
      request = request(source, options, protobuf);
    } catch (MalformedURLException e) {
      return CompletableFuture.failedFuture(KubernetesClientException.launderThrowable(e));
    }
    return client.getHttpClient().sendAsync(request, byte[].class).thenApply(response -> {
      if (!response.isSuccessful()) {
        throw failure(request, response, response.body());
      }
      return response.body();
    });
  }

  /**
   * A list in one answer (from the watch cache, which serves no pages), read and decoded as it arrives, on the informer's
   * {@code thread}, never on the HTTP client's. Why not in one byte array as a page is: unpaged, the answer holds every
   * object of the kind, 100k pods at once, which would be held whole, compressed or not, beside what it decodes to.
   */
  private <L> CompletableFuture<L> unpaged(OperationSupport source, ListOptions options, boolean protobuf, Class<L> listType, Executor thread) {
    HttpRequest request;
    try {
      request = request(source, options, protobuf);
    } catch (MalformedURLException e) {
      return CompletableFuture.failedFuture(KubernetesClientException.launderThrowable(e));
    }
    return client.getHttpClient().sendAsync(request, InputStream.class).thenApplyAsync(response -> {
      try (InputStream body = response.body()) {
        if (!response.isSuccessful()) {
          throw failure(request, response, body.readAllBytes());
        }
        return decode(PagedLists.inflated(body), listType);
      } catch (IOException e) {
        throw new KubernetesClientException("a list of " + listType.getSimpleName() + " that cannot be read: " + e.getMessage(), e);
      }
    }, thread);
  }

  private HttpRequest request(OperationSupport source, ListOptions options, boolean protobuf) throws MalformedURLException {
    URLUtils.URLBuilder url = new URLUtils.URLBuilder(source.getNamespacedUrl());
    query(url, "limit", options.getLimit() == null ? null : String.valueOf(options.getLimit()));
    query(url, "continue", options.getContinue());
    query(url, "resourceVersion", options.getResourceVersion());
    query(url, "resourceVersionMatch", options.getResourceVersionMatch());
    query(url, "fieldSelector", options.getFieldSelector());
    HttpRequest.Builder builder = client.getHttpClient().newHttpRequestBuilder().url(url.build()).header("Accept-Encoding", "gzip");
    if (protobuf) {
      builder.header("Accept", KubeProtobuf.ACCEPT);
    }
    return builder.build();
  }

  /** A list request the server refused, as fabric8's own list would throw it: with the server's Status, protobuf or JSON. */
  private KubernetesClientException failure(HttpRequest request, HttpResponse<?> response, byte[] body) {
    Status status = KubeProtobuf.status(body, response.code()).orElseGet(() -> {
      try {
        Status json = body.length == 0 ? null : client.getKubernetesSerialization().unmarshal(new String(body, StandardCharsets.UTF_8), Status.class);
        if (json != null) {
          return json.getCode() != null ? json : new StatusBuilder(json).withCode(response.code()).build();
        }
      } catch (RuntimeException notAStatus) {
        // as fabric8 answers a body that is no Status: the code and the reason phrase
      }
      return OperationSupport.createStatus(response.code(), response.message());
    });
    return OperationSupport.requestFailure(request, status);
  }

  private static void query(URLUtils.URLBuilder url, String name, String value) {
    if (value != null) {
      url.addQueryParameter(name, value);
    }
  }

  /** Where the server's watch cache of {@code source}'s collection is now: a list of nothing, from the watch cache. */
  private CompletableFuture<String> fence(OperationSupport source) {
    ListOptions nothing = new ListOptionsBuilder().withResourceVersion("0").withFieldSelector(NOTHING).build();
    return page(source, nothing, false).thenApply(body -> PagedLists.resourceVersion(body)
        .orElseThrow(() -> new KubernetesClientException("a list of " + source.getResourceT() + " without a resourceVersion")));
  }

  /** A list of pods from its protobuf ({@link PodProto}); any list's JSON as fabric8 decodes it, with the informers' slim serialization. */
  private <L> L decode(InputStream body, Class<L> listType) {
    try {
      KubeProtobuf.Body read = KubeProtobuf.body(body);
      if (read.protobuf() && listType == PodList.class) {
        return listType.cast(PodProto.list(read.in()));
      }
      return client.getKubernetesSerialization().unmarshal(read.in(), listType);
    } catch (IOException e) {
      throw new KubernetesClientException("a list of " + listType.getSimpleName() + " that cannot be read: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    lists.forEach(PagedLists::close);
    threads.forEach(ExecutorService::shutdownNow);
    timers.shutdownNow();
  }

  /** Which list the informer gets when it lists. */
  enum Relist {
    /**
     * From the watch cache, in one answer: at start ({@code resourceVersion=0}, as client-go's informers list), and after
     * any break but 410 Gone (not older than what the store applied last).
     */
    FROM_WATCH_CACHE,
    /** Paged, from etcd: after 410 Gone, a failed list from the watch cache, or a version that does not compare. */
    CONSISTENT
  }

  /**
   * Lists and watches one collection for its informer: lists as {@link #next} says; watches with a {@link ResumingWatch},
   * which resumes after a break, and tells {@link CatchUp} what it applies.
   */
  final class Resuming<T extends HasMetadata, L extends KubernetesResourceList<T>> implements Wrapping<T, L> {
    private final BaseOperation<T, L, ?> source;
    /** Consistent lists, in pages from etcd. */
    private final PagedLists<L> pages;
    /** Lists in one answer from the watch cache, decoded on the informer's thread. */
    private final Function<ListOptions, CompletableFuture<L>> fromWatchCache;
    private final CatchUp catchUp;
    private final AtomicReference<Relist> next = new AtomicReference<>(Relist.FROM_WATCH_CACHE);
    /** Whether the store has applied a list: after that, a list from the watch cache must not be older. */
    private final AtomicBoolean listed = new AtomicBoolean();
    /** Set when a watch is ended here to have the informer list again: its 410 is not the server's. */
    private final AtomicBoolean relistAsked = new AtomicBoolean();

    Resuming(BaseOperation<T, L, ?> source, PagedLists<L> pages, Function<ListOptions, CompletableFuture<L>> fromWatchCache, CatchUp catchUp) {
      this.source = source;
      this.pages = pages;
      this.fromWatchCache = fromWatchCache;
      this.catchUp = catchUp;
    }

    /** A list as {@link #next} says, or the next page of a consistent one. */
    @Override
    public CompletableFuture<L> submitList(ListOptions options) {
      OptionalLong applied = catchUp.applied();
      if (options.getContinue() != null || next.get() == Relist.CONSISTENT || listed.get() && applied.isEmpty()) {
        return pages.page(options);
      }
      ListOptions cached = applied.isPresent() && listed.get()
          ? new ListOptionsBuilder().withResourceVersion(Long.toString(applied.getAsLong())).withResourceVersionMatch("NotOlderThan").build()
          : new ListOptionsBuilder().withResourceVersion("0").build();
      return fromWatchCache.apply(cached).whenComplete((list, failed) -> {
        if (failed != null) {
          next.set(Relist.CONSISTENT); // a watch cache that cannot answer (one behind us, in a group of servers): etcd
        }
      });
    }

    /** The informer watches from a list it has just applied: caught up. */
    @Override
    public CompletableFuture<AbstractWatchManager<T>> submitWatch(ListOptions options, Watcher<T> informer) {
      catchUp.listed(options.getResourceVersion());
      listed.set(true);
      next.set(Relist.FROM_WATCH_CACHE);
      relistAsked.set(false);
      watchTimeout.ifPresent(timeout -> options.setTimeoutSeconds(timeout.toSeconds()));
      options.setWatch(true);
      ResumingWatch<T, L> watch;
      try {
        watch = new ResumingWatch<>(this, client.getHttpClient(), source, options, new Applying(informer));
      } catch (MalformedURLException e) {
        return CompletableFuture.failedFuture(KubernetesClientException.launderThrowable(e));
      }
      return watch.opened();
    }

    /** The watch starts over from the last resourceVersion applied: behind until the fence asked for now is reached. */
    int resumed() {
      return catchUp.resumed(System.nanoTime());
    }

    /** Asks the server where it is, for restart {@code generation}; again a moment later while it cannot answer. */
    void askFence(int generation, ResumingWatch<T, L> watch) {
      fence(source).whenComplete((version, failed) -> {
        if (catchUp.generation() != generation || timers.isShutdown()) {
          return;
        }
        if (failed != null) {
          LOG.debug("the fence of {} cannot be read ({}); asking again", source.getApiEndpointPath(), failed.toString());
          timers.schedule(() -> askFence(generation, watch), 1, TimeUnit.SECONDS);
          return;
        }
        catchUp.fence(generation, version, System.nanoTime());
        checkStalled(generation, watch);
      });
    }

    /** Lists again (from the watch cache) if the fence stays ahead of a watch that brings nothing new. */
    private void checkStalled(int generation, ResumingWatch<T, L> watch) {
      if (catchUp.generation() != generation || catchUp.caughtUp() || timers.isShutdown()) {
        return;
      }
      if (catchUp.stalled(System.nanoTime(), PATIENCE)) {
        LOG.debug("the watch of {} brought nothing up to its fence for {}; listing again from the watch cache", source.getApiEndpointPath(), PATIENCE);
        relistAsked.set(true);
        watch.endForAList();
        return;
      }
      timers.schedule(() -> checkStalled(generation, watch), PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The watch is ending: behind. */
    void ending() {
      catchUp.ending();
    }

    @Override
    public ListerWatcher<T, L> source() {
      return source;
    }

    /** The informer's watcher, told by a watch that resumes by itself; and CatchUp, told what the store applied. */
    private final class Applying implements Watcher<T> {
      private final Watcher<T> informer;

      Applying(Watcher<T> informer) {
        this.informer = informer;
      }

      @Override
      public boolean reconnecting() {
        return true;
      }

      @Override
      public void eventReceived(Action action, T resource) {
        informer.eventReceived(action, resource);
        catchUp.applied(resource.getMetadata().getResourceVersion(), System.nanoTime());
      }

      @Override
      public void onClose() {
        informer.onClose();
      }

      /**
       * The watch ended for good: the server's 410 Gone asks for a consistent list; anything else (a list asked for
       * here, an event that could not be read) for one from the watch cache. For the informer, either is 410 Gone,
       * its signal to list again.
       */
      @Override
      public void onClose(WatcherException cause) {
        boolean serversGone = cause.isHttpGone() && !relistAsked.getAndSet(false);
        next.set(serversGone ? Relist.CONSISTENT : Relist.FROM_WATCH_CACHE);
        informer.onClose(listAgain(source, cause));
      }
    }
  }

  /**
   * A watch on the client's HTTP/2 connection ({@link StreamedWatch}), which resumes from the last resourceVersion it saw
   * whenever a request ends (fabric8's renewal, a cut connection, the server's timeout), and here also says so: each
   * request after the first marks the store behind and asks for a fence.
   */
  static final class ResumingWatch<T extends HasMetadata, L extends KubernetesResourceList<T>> extends StreamedWatch<T, L> {
    /** Null while fabric8's constructor starts the first request, which follows a list: no fence is asked for it. */
    private final ResumingInformers.Resuming<T, L> owner;

    ResumingWatch(ResumingInformers.Resuming<T, L> owner, HttpClient http, BaseOperation<T, L, ?> source, ListOptions options, Watcher<T> watcher)
        throws MalformedURLException {
      super(new Answers(), http, source, options, watcher, -1);
      this.owner = owner;
    }

    @Override
    protected void startWatch() {
      if (owner == null) {
        super.startWatch();
        return;
      }
      int generation = owner.resumed();
      super.startWatch();
      owner.askFence(generation, this);
    }

    @Override
    public synchronized void closeRequest() {
      if (owner != null) {
        owner.ending();
      }
      super.closeRequest();
    }

    /** Ends this watch as the server's 410 Gone would: the informer lists again. */
    void endForAList() {
      onStatus(new StatusBuilder().withCode(HttpURLConnection.HTTP_GONE).withReason("Expired")
          .withMessage("a fence no event reached: listing again").build(), new WatchRequestState());
    }
  }

  /**
   * How the end of a watch that will not go on is told to its informer: as 410 Gone, fabric8's signal to list again
   * (any other exception would stop the informer for good).
   */
  private static WatcherException listAgain(ListerWatcher<?, ?> source, WatcherException cause) {
    LOG.debug("watch of {} ended ({}); listing again", source.getApiEndpointPath(), cause.getMessage());
    return cause.isHttpGone() ? cause
        : new WatcherException(cause.getMessage(), new KubernetesClientException(cause.getMessage(), HttpURLConnection.HTTP_GONE, null));
  }

  /**
   * Watches with {@code watch} ({@link StreamedWatch}, what {@code source} selects), except that its watches are not
   * resumed; lists with {@code list}.
   */
  record ListsAgain<T extends HasMetadata, L>(ListerWatcher<T, L> source, Function<ListOptions, CompletableFuture<L>> list,
      BiFunction<ListOptions, Watcher<T>, CompletableFuture<AbstractWatchManager<T>>> watch) implements Wrapping<T, L> {
    @Override
    public CompletableFuture<AbstractWatchManager<T>> submitWatch(ListOptions options, Watcher<T> informer) {
      return watch.apply(options, new Watcher<>() {
        @Override
        public boolean reconnecting() {
          return false;
        }

        @Override
        public void eventReceived(Action action, T resource) {
          informer.eventReceived(action, resource);
        }

        @Override
        public void onClose() {
          informer.onClose();
        }

        /** However it ended, it cannot go on from where it was: for the informer, that is 410 Gone. */
        @Override
        public void onClose(WatcherException cause) {
          informer.onClose(listAgain(source, cause));
        }
      });
    }

    @Override
    public CompletableFuture<L> submitList(ListOptions options) {
      return list.apply(options);
    }

  }

  /**
   * A lister-watcher over a collection's own operation ({@link #source}): paged, so that fabric8 makes no first list
   * from the watch cache (resourceVersion 0), which may lag behind etcd; its other settings are the operation's.
   */
  interface Wrapping<T extends HasMetadata, L> extends ListerWatcher<T, L> {
    ListerWatcher<T, L> source();

    @Override
    default Long getLimit() {
      return PAGE;
    }

    @Override
    default int getWatchReconnectInterval() {
      return source().getWatchReconnectInterval();
    }

    @Override
    default String getApiEndpointPath() {
      return source().getApiEndpointPath();
    }

    @Override
    default Config getConfig() {
      return source().getConfig();
    }
  }
}
