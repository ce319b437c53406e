package io.podsweeper.removal;

import io.podsweeper.metrics.Metrics;
import io.podsweeper.safety.GuardWindow;
import io.podsweeper.safety.GuardWindowStore;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Write-ahead for the blast-radius guard: a removal the guard counts is sent only once the cluster remembers it, so
 * neither a {@code kill -9} nor a failover can start the window over and let a namespace be emptied in two halves.
 * Writes are grouped: one write covers every removal counted before it, so requests in flight share it.
 *
 * <p>A replica that has just become leader first takes over the window the last leader wrote. Every write is made
 * over the version this term last read or wrote, never blind: a deposed leader's write that arrives late must not
 * overwrite the new leader's window, which would make the next leader forget the new leader's removals.
 */
final class GuardJournal {
  private static final Logger LOG = LoggerFactory.getLogger(GuardJournal.class);
  /** How often one persist may find its own earlier write in the store and write again over it. */
  private static final int OWN_WRITES_SEEN = 3;
  /** How many writes without an answer are remembered, newest first. */
  private static final int UNANSWERED_KEPT = 8;

  /** How often a window that cannot be read is read again (a rewrite or a deletion of it lets removals go on). */
  static final Duration UNREADABLE_RECHECK = Duration.ofSeconds(5);
  private static final String UNREADABLE = "the blast-radius guard's remembered window cannot be read, so it counts as full: ";
  private static final String HOW_TO_GO_ON = "; what the guard covers is held until the window is rewritten, or its ConfigMap"
      + " (<control>-guard) deleted, or an operator resumes (POST /api/v1/resume, or paused: \"false\" after a pause), which"
      + " starts the window over";

  private final GuardWindowStore store;
  private final Metrics metrics;
  private final LongSupplier ticker;
  private Optional<String> unreadable = Optional.empty();
  /** When the store was last read, by the ticker. */
  private long readAt;
  /**
   * The guards the remembered window was read into this term. A set, not the last one: a caller that read the guard
   * before a dry-run switch replaced it must neither leave the new guard unread nor make it be read twice (a second
   * read would drop what it counted since).
   */
  private final Set<JournaledGuard> loaded = new HashSet<>();
  /** The version of the window this term last read or wrote, and what that version holds. */
  private String storedVersion = "";
  private GuardWindow stored = GuardWindow.EMPTY;
  /** What this journal calls its writes: {@code writer/n}, so it knows its own among the stored windows. */
  private final String writer = UUID.randomUUID().toString();
  private long writes;
  /**
   * Writes that got no answer since the store was last known to hold one of this journal's writes, by id: what each
   * sent. Any of them may have landed.
   */
  private final Map<String, String> unanswered = new LinkedHashMap<>() {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
      // Writes that keep failing (a refusal, the server away) must not pile up: forgetting one errs strict, as its
      // removals, if it landed, are then counted again.
      return size() > UNANSWERED_KEPT;
    }
  };
  private long durableVersion = -1;
  private JournaledGuard durableGuard;

  GuardJournal(GuardWindowStore store, Metrics metrics, LongSupplier ticker) {
    this.store = store;
    this.metrics = metrics;
    this.ticker = ticker;
  }

  /**
   * Makes sure what {@code guard} counts now is remembered by the cluster; false (and logged) if it could not be read
   * or written, and then nothing may be sent. A guard that has not read the window this term (its term ended while a
   * removal waited), or was replaced, writes nothing.
   */
  synchronized boolean persist(JournaledGuard guard) {
    Optional<Ledger.GuardState> now = guard.state();
    if (now.isEmpty()) {
      return false;
    }
    long version = now.get().version();
    if (guard.equals(durableGuard) && durableVersion >= version) {
      return true;
    }
    if (!loaded.contains(guard)) {
      LOG.debug("not writing the blast-radius guard's window: not read this term");
      return false;
    }
    try {
      for (int attempt = 0; attempt < OWN_WRITES_SEEN; attempt++) {
        Optional<Ledger.GuardState> state = guard.state();
        if (state.isEmpty()) {
          return false;
        }
        String text = state.get().window().encode();
        String id = writer + "/" + ++writes;
        Optional<String> written = write(text, id);
        if (written.isPresent()) {
          settled(written.get(), GuardWindow.decode(text));
          durableGuard = guard;
          durableVersion = version;
          return true;
        }
        GuardWindowStore.Stored theirs = store.load();
        // This replica's own write, whose answer was lost (or the HTTP layer's retry of one that had landed, then
        // refused): its name and its text. The name alone could be left by a writer that patches the text only.
        boolean own = theirs.window().equals(theirs.writeId().equals(id) ? text : unanswered.get(theirs.writeId()));
        unanswered.clear();
        if (own) {
          // Not another writer's removals, so nothing to count twice; write what was counted since over it.
          settled(theirs.version(), GuardWindow.decode(theirs.window()));
          continue;
        }
        // Another replica wrote since: a deposed leader whose write came late, or the new leader if this replica was
        // deposed. Its removals may have gone, so they count here too, and this removal waits for its retry (by
        // then a deposed replica knows it no longer leads).
        Optional<GuardWindow> read = decode(theirs.window());
        if (read.isEmpty()) {
          // Unreadable: no guard counts on what it cannot read; the next removal reads it again, held until it can.
          loaded.clear();
          storedVersion = theirs.version();
          return false;
        }
        guard.absorb(read.get().addedSince(stored));
        settled(theirs.version(), read.get());
        LOG.warn("another replica wrote the blast-radius guard's window meanwhile: its removals are counted too, holding "
            + "this one for a moment");
        return false;
      }
      return false;
    } catch (RuntimeException e) {
      LOG.warn("cannot keep the blast-radius guard's window in the cluster, holding removals: {}", e.getMessage());
      return false;
    }
  }

  /**
   * Writes over the version last read or written. A write that throws may have landed all the same: it is remembered
   * until an answer shows what the store holds.
   */
  private Optional<String> write(String text, String id) {
    unanswered.put(id, text);
    Optional<String> written = store.saveOver(text, storedVersion, id);
    unanswered.remove(id);
    if (written.isPresent()) {
      unanswered.clear(); // this write is stored now, over any of them
    }
    return written;
  }

  /** The store is known to hold {@code window} at {@code version}: the next write goes over it. */
  private void settled(String version, GuardWindow window) {
    storedVersion = version;
    stored = window;
  }

  /**
   * Takes over the window the last writer left, once per term of leadership (and once after start) and guard, before
   * the first removal is counted in it; false (and logged) if it cannot be read, and then nothing may be counted.
   */
  synchronized boolean takeOver(JournaledGuard guard) {
    if (loaded.contains(guard)) {
      return true;
    }
    if (unreadable.isPresent() && ticker.getAsLong() - readAt < UNREADABLE_RECHECK.toNanos()) {
      return false;
    }
    GuardWindowStore.Stored remembered;
    try {
      remembered = store.load();
    } catch (RuntimeException e) {
      LOG.warn("cannot read the blast-radius guard's window from the cluster, holding removals: {}", e.getMessage());
      return false;
    }
    readAt = ticker.getAsLong();
    Optional<GuardWindow> window = decode(remembered.window());
    storedVersion = remembered.version();
    if (window.isEmpty()) {
      return false;
    }
    settled(remembered.version(), window.get());
    if (!storedVersion.isEmpty()) {
      guard.restore(stored);
    }
    loaded.add(guard);
    return true;
  }

  /**
   * Why the window the cluster remembers cannot be read, while it cannot: it then counts as a full one, and nothing the
   * guard covers may go until it is rewritten (or the ConfigMap deleted) or an operator resumes, which writes over it.
   */
  synchronized Optional<String> unreadable() {
    return unreadable;
  }

  /** The remembered window, or empty (said once, with how to go on, and in a metric) when it cannot be read. */
  private Optional<GuardWindow> decode(String text) {
    try {
      GuardWindow window = GuardWindow.decode(text);
      if (unreadable.isPresent()) {
        LOG.info("the blast-radius guard's remembered window can be read again: the removals it covers go on");
      }
      unreadable = Optional.empty();
      metrics.guardWindowUnreadable.set(0);
      return Optional.of(window);
    } catch (IllegalArgumentException e) {
      if (unreadable.isEmpty()) {
        LOG.error("{}", UNREADABLE + e.getMessage() + HOW_TO_GO_ON);
      }
      unreadable = Optional.of(UNREADABLE + e.getMessage() + HOW_TO_GO_ON);
      metrics.guardWindowUnreadable.set(1);
      return Optional.empty();
    }
  }

  /**
   * An operator resumed, and this replica leads: the window starts over, in the cluster too, written over the window
   * it replaces (read first if this term has not read it yet). False (and logged) if that could not be written; the
   * window here starts over all the same.
   */
  synchronized boolean startOver(JournaledGuard guard) {
    boolean read = takeOver(guard);
    if (!read && unreadable.isPresent()) {
      // The operator's resume stands for what could not be read: the window starts over, written over it.
      LOG.warn("an operator resumed: the unreadable blast-radius guard's window is written over, starting over");
      unreadable = Optional.empty();
      metrics.guardWindowUnreadable.set(0);
      settled(storedVersion, GuardWindow.EMPTY);
      loaded.add(guard);
      read = true;
    }
    guard.reset();
    return read && persist(guard);
  }

  /** How many writes without an answer are remembered now (bounded: writes may keep failing for hours). */
  synchronized int writesWithoutAnswer() {
    return unanswered.size();
  }

  /** Leadership lost: the next term starts by reading what the other leader wrote meanwhile. */
  synchronized void forget() {
    loaded.clear();
    durableGuard = null;
  }


}
