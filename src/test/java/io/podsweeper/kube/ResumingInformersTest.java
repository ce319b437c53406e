package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ListOptions;
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

/** What the watcher of an unresumed informer (the kill switch's, the team policies') is told when its watch ends: never "resumed", always "list again". */
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
    new ResumingInformers.ListsAgain<>(source, pages::page).submitWatch(new ListOptions(), informer);
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
    assertThat(new ResumingInformers.ListsAgain<>(source, pages::page).getLimit()).isEqualTo(ResumingInformers.PAGE);
  }
}
