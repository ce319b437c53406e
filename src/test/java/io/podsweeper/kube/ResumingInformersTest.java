package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager;
import io.fabric8.kubernetes.client.informers.impl.ListerWatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Which list an informer gets (the start's from the watch cache, as client-go's), and what the watcher of an unresumed
 * informer (the kill switch's, the team policies') is told when its watch ends: never "resumed", always "list again".
 */
class ResumingInformersTest {
  private Watcher<Pod> handedToTheWatch;
  private final List<String> informerHeard = new ArrayList<>();

  private final ListerWatcher<Pod, PodList> source = new ListerWatcher<>() {
    @Override
    public CompletableFuture<AbstractWatchManager<Pod>> submitWatch(ListOptions params, Watcher<Pod> watcher) {
      handedToTheWatch = watcher;
      return new CompletableFuture<>();
    }

    @Override
    public CompletableFuture<PodList> submitList(ListOptions listOptions) {
      return new CompletableFuture<>();
    }

    @Override
    public Long getLimit() {
      return null;
    }

    @Override
    public int getWatchReconnectInterval() {
      return 1000;
    }

    @Override
    public String getApiEndpointPath() {
      return "v1/pods";
    }

    @Override
    public Config getConfig() {
      return Config.empty();
    }
  };

  private final PagedLists<PodList> pages = new PagedLists<>(options -> new CompletableFuture<>(), body -> new PodList());

  /** The informer's own watcher: it would have the watch resumed. */
  private final Watcher<Pod> informer = new Watcher<>() {
    @Override
    public boolean reconnecting() {
      return true;
    }

    @Override
    public void eventReceived(Action action, Pod resource) {
      informerHeard.add(action + " " + resource.getMetadata().getName());
    }

    @Override
    public void onClose() {
      informerHeard.add("closed");
    }

    @Override
    public void onClose(WatcherException cause) {
      informerHeard.add("ended, gone=" + cause.isHttpGone() + ": " + cause.getMessage());
    }
  };

  @Test
  void anUnresumedWatchThatEndsIsNotResumedButListedAgain() {
    new ResumingInformers.ListsAgain<>(source, pages::page, source::submitWatch).submitWatch(new ListOptions(), informer);
    // Not reconnecting itself, the watch is held to the client's reconnect limit (0): it ends instead of resuming.
    assertThat(handedToTheWatch.reconnecting()).isFalse();

    handedToTheWatch.eventReceived(Watcher.Action.MODIFIED, new PodBuilder().withNewMetadata().withName("a").endMetadata().build());
    handedToTheWatch.onClose(new WatcherException("Exhausted reconnects"));
    handedToTheWatch.onClose(new WatcherException("too old", new KubernetesClientException("too old", 410, null)));
    handedToTheWatch.onClose();
    assertThat(informerHeard).containsExactly("MODIFIED a", "ended, gone=true: Exhausted reconnects", "ended, gone=true: too old", "closed");
  }

  /** Unpaged, fabric8 would make the first list from the API server's watch cache (resourceVersion 0). */
  @Test
  void everyUnresumedListIsPaged() {
    assertThat(new ResumingInformers.ListsAgain<>(source, pages::page, source::submitWatch).getLimit()).isEqualTo(ResumingInformers.PAGE);
  }

  /**
   * At start, as client-go's informers list: one list from the watch cache, unpaged ({@code resourceVersion=0}, read as
   * it arrives); from etcd, in pages, only after that has failed (a watch cache that cannot answer).
   */
  @Test
  void theFirstListIsFromTheWatchCacheAndAfterItFailedFromEtcdInPages() {
    List<ListOptions> fromWatchCache = new ArrayList<>();
    List<ListOptions> fromEtcd = new ArrayList<>();
    PagedLists<PodList> consistent = new PagedLists<>(options -> {
      fromEtcd.add(options);
      return new CompletableFuture<>();
    }, body -> new PodList());
    try (ResumingInformers informers = new ResumingInformers(null)) {
      ResumingInformers.Resuming<Pod, PodList> lists = informers.new Resuming<>(null, consistent, options -> {
        fromWatchCache.add(options);
        return CompletableFuture.failedFuture(new KubernetesClientException("the watch cache is not ready", 503, null));
      }, new CatchUp());
      ListOptions asTheInformerAsks = new ListOptionsBuilder().withLimit(ResumingInformers.PAGE).build();

      assertThat(lists.submitList(asTheInformerAsks)).isCompletedExceptionally();
      assertThat(fromWatchCache).singleElement().satisfies(options -> {
        assertThat(options.getResourceVersion()).isEqualTo("0");
        assertThat(options.getLimit()).isNull();
        assertThat(options.getResourceVersionMatch()).isNull();
      });
      assertThat(fromEtcd).isEmpty();

      lists.submitList(asTheInformerAsks);
      assertThat(fromWatchCache).hasSize(1);
      assertThat(fromEtcd).singleElement().satisfies(options -> {
        assertThat(options.getLimit()).isEqualTo(ResumingInformers.PAGE);
        assertThat(options.getResourceVersion()).isNull();
      });
    }
  }
}
