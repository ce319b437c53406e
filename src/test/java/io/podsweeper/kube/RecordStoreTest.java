package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.impl.cache.CacheImpl;
import io.fabric8.kubernetes.client.informers.impl.cache.ProcessorStore;
import io.fabric8.kubernetes.client.informers.impl.cache.SharedProcessor;
import io.podsweeper.cluster.PodRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The pod store driven by fabric8's own informer plumbing (ProcessorStore, the cache and the handlers' queue), as the
 * reflector drives it: what it has applied is in the records before any handler hears of it.
 */
class RecordStoreTest {
  private final List<String> changes = new ArrayList<>();
  private final RecordStore<Pod, PodRecord> store = new RecordStore<>(Pod::new, PodRecords::pod,
      (key, before, after) -> changes.add(key + ": " + (before == null ? "-" : before.resourceVersion()) + " -> "
          + (after == null ? "-" : after.resourceVersion())));
  /** The handlers' thread, run by hand: what is queued has not been heard yet. */
  private final List<Runnable> handlerQueue = new ArrayList<>();
  private final List<String> heard = new ArrayList<>();
  private final ProcessorStore<Pod> informer = informerAround(store);

  private ProcessorStore<Pod> informerAround(RecordStore<Pod, PodRecord> items) {
    CacheImpl<Pod> cache = new CacheImpl<>();
    cache.setItemStore(items);
    SharedProcessor<Pod> processor = new SharedProcessor<>(handlerQueue::add, "pods");
    processor.addProcessorListener(new ResourceEventHandler<Pod>() {
      @Override
      public void onAdd(Pod pod) {
        heard.add("add " + pod.getMetadata().getName());
      }

      @Override
      public void onUpdate(Pod before, Pod after) {
        heard.add("update " + after.getMetadata().getName() + " " + before.getMetadata().getResourceVersion() + " -> "
            + after.getMetadata().getResourceVersion());
      }

      @Override
      public void onDelete(Pod pod, boolean finalStateUnknown) {
        heard.add("delete " + pod.getMetadata().getName() + " uid=" + pod.getMetadata().getUid() + (finalStateUnknown ? " (relist)" : ""));
      }
    }, 0, List::of);
    return new ProcessorStore<>(cache, processor);
  }

  private static Pod pod(String name, String resourceVersion) {
    return new PodBuilder().withNewMetadata().withNamespace("ns").withName(name).withUid("uid-" + name)
        .withResourceVersion(resourceVersion).addToLabels("app", "web").addToAnnotations("big", "x".repeat(1000)).endMetadata()
        .withNewSpec().withNodeName("node-a").addNewContainer().withName("main").withImage("busybox").endContainer().endSpec()
        .withNewStatus().withPhase("Running").endStatus().build();
  }

  private void hearAll() {
    while (!handlerQueue.isEmpty()) {
      handlerQueue.remove(0).run();
    }
  }

  private void initialList(Pod... pods) {
    informer.update(List.of(pods));
    Set<String> keys = new java.util.HashSet<>();
    for (Pod p : pods) {
      keys.add(informer.getKey(p));
    }
    informer.syncList(keys);
  }

  @Test
  void aListIsInTheRecordsBeforeAnyHandlerHearsOfIt() {
    informer.update(List.of(pod("a", "1"), pod("b", "1")));
    assertThat(store.records()).extracting(PodRecord::name).containsExactlyInAnyOrder("a", "b");
    // The initial list's additions are held back until the list is complete, so a handler sees the whole cluster.
    hearAll();
    assertThat(heard).isEmpty();

    informer.syncList(Set.of("ns/a", "ns/b"));
    assertThat(heard).isEmpty();
    hearAll();
    assertThat(heard).containsExactlyInAnyOrder("add a", "add b");
  }

  @Test
  void fabric8GetsBackOnlyWhoAndWhichVersion() {
    informer.update(pod("a", "7"));
    Pod standIn = store.get("ns/a");
    assertThat(standIn.getMetadata().getNamespace()).isEqualTo("ns");
    assertThat(standIn.getMetadata().getName()).isEqualTo("a");
    assertThat(standIn.getMetadata().getUid()).isEqualTo("uid-a");
    assertThat(standIn.getMetadata().getResourceVersion()).isEqualTo("7");
    assertThat(standIn.getMetadata().getLabels()).isNullOrEmpty();
    assertThat(standIn.getMetadata().getAnnotations()).isNullOrEmpty();
    assertThat(standIn.getSpec()).isNull();
    assertThat(standIn.getStatus()).isNull();
    assertThat(store.record("ns/a").labels()).containsEntry("app", "web");
    assertThat(store.record("ns/a").nodeName()).isEqualTo("node-a");
  }

  @Test
  void onlyANewResourceVersionIsAChange() {
    initialList(pod("a", "1"));
    hearAll();
    heard.clear();
    informer.update(pod("a", "1"));
    informer.update(pod("a", "2"));
    assertThat(store.record("ns/a").resourceVersion()).isEqualTo("2");
    hearAll();
    assertThat(heard).containsExactly("update a 1 -> 2");
  }

  @Test
  void aRelistForgetsWhatIsGoneAndSaysWhoItWas() {
    initialList(pod("a", "1"), pod("b", "1"));
    hearAll();
    heard.clear();
    changes.clear();
    // A relist finds b gone (deleted while the watch was down): no final state, only who it was.
    informer.update(List.of(pod("a", "2")));
    informer.syncList(Set.of("ns/a"));
    assertThat(store.record("ns/b")).isNull();
    assertThat(store.records()).extracting(PodRecord::resourceVersion).containsExactly("2");
    assertThat(changes).containsExactlyInAnyOrder("ns/a: 1 -> 2", "ns/b: 1 -> -");
    hearAll();
    assertThat(heard).containsExactlyInAnyOrder("update a 1 -> 2", "delete b uid=uid-b (relist)");
  }

  /**
   * A change (the counts of running pods) hears of an object while the records still show its old state: a count is
   * never behind the records, so the blast-radius guard can err strict but never lax (RecordStore.Change).
   */
  @Test
  void aChangeIsToldBeforeTheRecordsShowIt() {
    List<String> shownWhenTold = new ArrayList<>();
    AtomicReference<RecordStore<Pod, PodRecord>> records = new AtomicReference<>();
    records.set(new RecordStore<>(Pod::new, PodRecords::pod, (key, before, after) -> {
      PodRecord shown = records.get().record(key);
      shownWhenTold.add(shown == null ? "-" : shown.resourceVersion());
    }));
    records.get().put("ns/a", pod("a", "1"));
    records.get().put("ns/a", pod("a", "2"));
    records.get().remove("ns/a");
    assertThat(shownWhenTold).containsExactly("-", "1", "2");
    assertThat(records.get().record("ns/a")).isNull();
  }

  @Test
  void anObjectItCannotReadIsNotKept() {
    RecordStore<Pod, String> picky = new RecordStore<>(Pod::new, p -> {
      if (p.getMetadata().getResourceVersion().equals("2")) {
        throw new IllegalArgumentException("unreadable");
      }
      return p.getMetadata().getName();
    });
    picky.put("ns/a", pod("a", "1"));
    assertThat(picky.put("ns/a", pod("a", "2")).getMetadata().getResourceVersion()).isEqualTo("1");
    assertThat(picky.record("ns/a")).isNull();
    assertThat(picky.size()).isZero();
  }
}
