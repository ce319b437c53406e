package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.Informable;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager;
import io.fabric8.kubernetes.client.dsl.internal.OperationSupport;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * fabric8 informers that never resume a watch: after any interruption they list again before they watch again.
 *
 * <p>Why: fabric8 resumes a broken watch from the last resourceVersion it saw and lets the server replay what was
 * missed, and its informer reports "watching" as soon as the new connection is open: before the replay has been
 * applied, or before the 410 Gone arrives that says the history is gone (an API server restart, a compaction) and a
 * relist is due. Removals went out in that window, decided on what the cache held before an outage. A Kubernetes
 * 1.20 server sends nothing that marks the end of a replay (it sends bookmarks only just before a watch times out;
 * the end-of-initial-events bookmark of a WatchList came with 1.27), so a resumed watch can never be known to have
 * caught up. A list can: it is a consistent read, and the informer applies it to its store (a {@link RecordStore})
 * before it watches again. So here every watch that ends (server gone, connection lost, fabric8's own renewal of a
 * watch every 5 to 10 minutes) stays ended; the informer lists again, with fabric8's back-off of 1 s doubling up to
 * 32 s, and {@code isWatching()} is false from the moment the watch ended until that list has been applied and a new
 * watch from its resourceVersion is open.
 *
 * <p>The price is a full list per informer every 5 to 10 minutes, without removals while it runs (docs/design.md).
 * What it cannot see: a connection that dies with no reset and no error looks like an open, quiet watch until
 * fabric8's renewal ends it.
 *
 * <p>fabric8 offers no public switch for this. What it has: a watcher that does not reconnect itself is held to the
 * client's watch reconnect limit, and with a limit of 0 the watch is closed with an exception instead of resumed.
 * The informer's own watcher claims to reconnect itself, so the informer is built here around a {@link ListerWatcher}
 * that wraps it (fabric8's impl classes, used as {@code runnableInformer} uses them), and tells it that the watch is
 * gone (410), fabric8's signal to list again.
 */
final class RelistingInformers implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RelistingInformers.class);
  /**
   * Objects per page of a list, so that 100k pods never arrive as one response. Paged, every list is also a
   * consistent read: fabric8 makes an informer's first unpaged list from the API server's watch cache
   * (resourceVersion 0), which may lag behind etcd.
   */
  static final long PAGE = 500;
  private final KubernetesClient client;
  private final List<PagedLists<?>> lists = new CopyOnWriteArrayList<>();
  /**
   * Each informer's thread, which runs its handlers and its relists in order (the informer hands them on one at a
   * time). Why a thread each, not one pool for all: the informer hands each notification on as a task of its own, and
   * a pool's idle threads took turns at them, waking one another for each of the 10,000 pods of a first list: about
   * 0.3 CPU-seconds of a 10k start in futex calls (docs/benchmarks.md, fifth pass).
   */
  private final List<ExecutorService> threads = new CopyOnWriteArrayList<>();

  /** @param client the informers' client ({@link KubeClients#informers}), which its owner closes */
  RelistingInformers(KubernetesClient client) {
    this.client = client;
  }

  /**
   * @param listType what a list of {@code type} decodes to (e.g. {@code PodList.class})
   * @param operation what to list and watch, from the client it is given (e.g. {@code c -> c.nodes()}): the whole
   *     collection, with no selector (the pages are asked for here, from its URL)
   * @param store where the informer keeps what it has listed and watched
   */
  <T extends HasMetadata, L extends KubernetesResourceList<T>> SharedIndexInformer<T> informer(
      Class<T> type, Class<L> listType, Function<KubernetesClient, Informable<T>> operation, ItemStore<T> store) {
    @SuppressWarnings("unchecked") // every operation of the client is a BaseOperation, which is fabric8's ListerWatcher
    ListerWatcher<T, L> source = (ListerWatcher<T, L>) operation.apply(client);
    boolean protobuf = type == Pod.class;
    PagedLists<L> pages = new PagedLists<>(options -> page((OperationSupport) source, options, protobuf), body -> decode(body, listType));
    lists.add(pages);
    ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "informer-" + type.getSimpleName());
      t.setDaemon(true);
      return t;
    });
    threads.add(thread);
    DefaultSharedIndexInformer<T, L> informer = new DefaultSharedIndexInformer<>(type, new ListsAgain<>(source, pages::page), 0, thread);
    // Nothing looks objects up by namespace through fabric8; its index would only cost memory per object.
    informer.removeIndexer(Cache.NAMESPACE_INDEX);
    informer.itemStore(store);
    return informer;
  }

  /**
   * An informer of what {@code operation} lists and watches as fabric8 lists it (e.g. one object by name, which RBAC's
   * resourceNames covers), that never resumes a watch either, and hands its notifications on with fabric8's own
   * executor, as {@code runnableInformer} does. For the few objects a removal's final check reads (the kill switch),
   * where a resumed watch would report "watching" before the server's replay of a pause had arrived.
   */
  @SuppressWarnings("unchecked") // every operation of the client is a BaseOperation: a ListerWatcher and an OperationSupport
  static <T extends HasMetadata, L extends KubernetesResourceList<T>> SharedIndexInformer<T> unresumed(Class<T> type, Informable<T> operation) {
    ListerWatcher<T, L> source = (ListerWatcher<T, L>) operation;
    return new DefaultSharedIndexInformer<>(type, new ListsAgain<>(source, source::submitList), 0,
        ((OperationSupport) operation).getOperationContext().getExecutor());
  }

  /**
   * One page of the whole collection {@code source} lists (no selector: every informer here caches all of its kind),
   * as fabric8's own list asks for it (same client, so the same retries and authentication), but compressed, as
   * client-go asks for it.
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
    HttpClient http = client.getHttpClient();
    HttpRequest request;
    try {
      URLUtils.URLBuilder url = new URLUtils.URLBuilder(source.getNamespacedUrl()).addQueryParameter("limit", String.valueOf(options.getLimit()));
      if (options.getContinue() != null) {
        url.addQueryParameter("continue", options.getContinue());
      }
      if (options.getResourceVersion() != null) {
        url.addQueryParameter("resourceVersion", options.getResourceVersion());
      }
      HttpRequest.Builder builder = http.newHttpRequestBuilder().url(url.build()).header("Accept-Encoding", "gzip");
      if (protobuf) {
        builder.header("Accept", KubeProtobuf.ACCEPT);
      }
      request = builder.build();
    } catch (MalformedURLException e) {
      return CompletableFuture.failedFuture(KubernetesClientException.launderThrowable(e));
    }
    return http.sendAsync(request, byte[].class).thenApply(response -> {
      if (!response.isSuccessful()) {
        throw OperationSupport.requestFailure(request,
            KubeProtobuf.status(response.body(), response.code()).orElseGet(() -> OperationSupport.createStatus(response, client.getKubernetesSerialization())));
      }
      return response.body();
    });
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
  }

  /** Watches as {@code source} does, except that its watches are not resumed; lists with {@code list}. */
  record ListsAgain<T extends HasMetadata, L>(ListerWatcher<T, L> source, Function<ListOptions, CompletableFuture<L>> list)
      implements ListerWatcher<T, L> {
    @Override
    public CompletableFuture<AbstractWatchManager<T>> submitWatch(ListOptions options, Watcher<T> informer) {
      return source.submitWatch(options, new Watcher<>() {
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
          LOG.debug("watch of {} ended ({}); listing again", source.getApiEndpointPath(), cause.getMessage());
          informer.onClose(cause.isHttpGone() ? cause
              : new WatcherException(cause.getMessage(), new KubernetesClientException(cause.getMessage(), HttpURLConnection.HTTP_GONE, null)));
        }
      });
    }

    @Override
    public CompletableFuture<L> submitList(ListOptions options) {
      return list.apply(options);
    }

    @Override
    public Long getLimit() {
      return PAGE;
    }

    @Override
    public int getWatchReconnectInterval() {
      return source.getWatchReconnectInterval();
    }

    @Override
    public String getApiEndpointPath() {
      return source.getApiEndpointPath();
    }

    @Override
    public Config getConfig() {
      return source.getConfig();
    }
  }
}
