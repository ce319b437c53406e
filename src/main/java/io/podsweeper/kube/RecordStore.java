package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.AbstractCollection;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An informer's own item store, keeping the decision core's records instead of API objects.
 *
 * <p>Why the informer's store and not a map filled by an event handler: fabric8 applies a list page or a watch
 * event to its item store on the reflector's thread, and only after that reports the informer synced (initial
 * list) or watching (after a relist). Its event handlers run later, queued on another thread, so a cache they
 * fill lags what the informer reports: at start-up "synced" once came with 55 of 132 pods cached. Here a record
 * is in the cache the moment fabric8 has applied its object, and "synced and watching" speaks for the records.
 *
 * <p>What fabric8 reads back from its store are stand-ins: fresh objects with the namespace, name, uid and
 * resourceVersion of the kept entry. That is all it uses (keys, the deletions a relist finds, "did it change?" by
 * resourceVersion); whole objects (a pod is ~30 KB as served, managedFields and all) are never kept.
 *
 * <p>Written by the informer alone, one thread at a time; read by anyone. {@link #isFullState} is true: until the
 * initial list is complete, fabric8 holds back the handlers' add notifications, so the first evaluation already
 * sees the whole cluster.
 */
final class RecordStore<T extends HasMetadata, R> implements ItemStore<T> {
  private static final Logger LOG = LoggerFactory.getLogger(RecordStore.class);

  /**
   * Told on the informer's thread, right before readers of the store see a key's record change: before or after is
   * null when absent. Before, not after: what a change keeps (the counts of running pods) is then never behind the
   * records, so a reader who looks records up and then reads a count can find a pod gone from both, or from the
   * count only (counted off twice: the blast-radius guard errs strict), but never from the records only (not counted
   * off at all: the guard would admit one eviction too many).
   */
  @FunctionalInterface
  interface Change<R> {
    void changed(String key, R before, R after);
  }

  /** What is kept of one object: its record, and the identity fabric8 compares. */
  private record Entry<R>(String namespace, String name, String uid, String resourceVersion, R record) {}

  private final Map<String, Entry<R>> entries = new ConcurrentHashMap<>();
  private final Collection<R> records = new RecordsView();
  private final Supplier<T> blank;
  private final Function<T, R> toRecord;
  private final Change<R> change;

  /**
   * @param blank a new, empty object of the informer's kind, for the stand-ins
   * @param toRecord the object's record; an object it cannot read is not kept (and a warning logged)
   * @param change told about every change, e.g. to keep indexes
   */
  RecordStore(Supplier<T> blank, Function<T, R> toRecord, Change<R> change) {
    this.blank = blank;
    this.toRecord = toRecord;
    this.change = change;
  }

  RecordStore(Supplier<T> blank, Function<T, R> toRecord) {
    this(blank, toRecord, (key, before, after) -> {});
  }

  /** The record under a key ({@code namespace/name}, or the name of a cluster-scoped object), or null. */
  R record(String key) {
    Entry<R> entry = entries.get(key);
    return entry == null ? null : entry.record();
  }

  /** Which object, in which version: what a write's preconditions test. */
  record Version(String uid, String resourceVersion) {}

  /** The uid and resourceVersion of the object under a key as cached. */
  Optional<Version> version(String key) {
    Entry<R> entry = entries.get(key);
    return entry == null ? Optional.empty() : Optional.of(new Version(entry.uid(), entry.resourceVersion()));
  }

  /** Every record, as a live view. */
  Collection<R> records() {
    return records;
  }

  @Override
  public String getKey(T obj) {
    return Cache.metaNamespaceKeyFunc(obj);
  }

  @Override
  public T put(String key, T obj) {
    R record;
    try {
      record = toRecord.apply(obj);
    } catch (RuntimeException e) {
      LOG.warn("ignoring {} {} that cannot be read: {}", obj.getKind(), key, e.toString());
      return remove(key);
    }
    ObjectMeta meta = obj.getMetadata();
    Entry<R> before = entries.get(key); // one writer: nothing changes it between this and the put
    change.changed(key, before == null ? null : before.record(), record);
    entries.put(key, new Entry<>(meta.getNamespace(), meta.getName(), meta.getUid(), meta.getResourceVersion(), record));
    return standIn(key, before);
  }

  @Override
  public T remove(String key) {
    Entry<R> before = entries.get(key);
    if (before == null) {
      return null;
    }
    change.changed(key, before.record(), null);
    entries.remove(key);
    return standIn(key, before);
  }

  @Override
  public Stream<String> keySet() {
    return entries.keySet().stream();
  }

  @Override
  public Stream<T> values() {
    return entries.entrySet().stream().map(e -> standIn(e.getKey(), e.getValue()));
  }

  @Override
  public int size() {
    return entries.size();
  }

  @Override
  public T get(String key) {
    return standIn(key, entries.get(key));
  }

  private T standIn(String key, Entry<R> entry) {
    if (entry == null) {
      return null;
    }
    T object = blank.get();
    object.setMetadata(identity(entry.namespace(), entry.name(), entry.uid(), entry.resourceVersion()));
    return object;
  }

  /**
   * An object's metadata with its identity only, and none of the empty maps and lists fabric8's ObjectMeta makes (three
   * of each, ~240 bytes). fabric8 holds a stand-in of every object at once when an informer syncs (its deferred add
   * notifications, and the list it searches for deletions), and a decoded pod until its list is applied: at 50,000 pods
   * those empty collections were ~36 MB, promoted to the old generation with the start and kept in the heap after it.
   */
  static ObjectMeta identity(String namespace, String name, String uid, String resourceVersion) {
    ObjectMeta meta = new ObjectMeta();
    meta.setNamespace(namespace);
    meta.setName(name);
    meta.setUid(uid);
    meta.setResourceVersion(resourceVersion);
    meta.setAnnotations(null);
    meta.setLabels(null);
    meta.setFinalizers(null);
    meta.setManagedFields(null);
    meta.setOwnerReferences(null);
    meta.setAdditionalProperties(null);
    return meta;
  }

  private final class RecordsView extends AbstractCollection<R> {
    @Override
    public Iterator<R> iterator() {
      Iterator<Entry<R>> it = entries.values().iterator();
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public R next() {
          return it.next().record();
        }
      };
    }

    @Override
    public int size() {
      return entries.size();
    }
  }
}
