package io.podsweeper.engine;

import io.podsweeper.safety.BlastRadiusGuard;
import io.podsweeper.safety.GuardWindow;
import java.time.Clock;
import java.util.Collections;
import java.util.Optional;
import java.util.Set;
import java.util.WeakHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Write-ahead for the blast-radius guard: a removal the guard counts is sent only once the cluster remembers it, so
 * neither a {@code kill -9} nor a failover can start the window over and let a namespace be emptied in two halves.
 * Writes are grouped: one write covers every removal counted before it, so requests in flight share it.
 *
 * <p>A replica that has just become leader first takes over the window the last leader wrote.
 */
final class GuardJournal {
  private static final Logger LOG = LoggerFactory.getLogger(GuardJournal.class);

  private final GuardWindowStore store;
  private final Clock clock;
  /**
   * The guards the remembered window was read into this term. A set, not the last one: a caller that read the guard
   * before a dry-run switch replaced it must neither leave the new guard unread nor make it be read twice (a second
   * read would drop what it counted since). Weak: a replaced guard is forgotten with its last user.
   */
  private final Set<BlastRadiusGuard> loaded = Collections.newSetFromMap(new WeakHashMap<>());
  private long durableVersion = -1;
  private BlastRadiusGuard durableGuard;

  GuardJournal(GuardWindowStore store, Clock clock) {
    this.store = store;
    this.clock = clock;
  }

  /**
   * Makes sure what {@code guard} counts now is remembered by the cluster; false (and logged) if it could not be
   * read or written, and then nothing may be sent.
   */
  synchronized boolean persist(BlastRadiusGuard guard) {
    try {
      long version = guard.version();
      if (guard == durableGuard && durableVersion >= version) {
        return true;
      }
      store.save(guard.window(clock.instant()).encode());
      durableGuard = guard;
      durableVersion = version;
      return true;
    } catch (RuntimeException e) {
      LOG.warn("cannot keep the blast-radius guard's window in the cluster, holding removals: {}", e.getMessage());
      return false;
    }
  }

  /**
   * Takes over the window the last writer left, once per term of leadership (and once after start) and guard, before
   * the first removal is counted in it; false (and logged) if it cannot be read, and then nothing may be counted.
   */
  synchronized boolean takeOver(BlastRadiusGuard guard) {
    if (loaded.contains(guard)) {
      return true;
    }
    Optional<String> text;
    try {
      text = store.load();
    } catch (RuntimeException e) {
      LOG.warn("cannot read the blast-radius guard's window from the cluster, holding removals: {}", e.getMessage());
      return false;
    }
    if (text.isPresent()) {
      try {
        guard.restore(GuardWindow.decode(text.get()));
      } catch (IllegalArgumentException e) {
        // Unreadable (edited by hand?): keep counting from here rather than refuse to work; say so loudly.
        LOG.error("ignoring the blast-radius guard's remembered window: {}", e.getMessage());
      }
    }
    loaded.add(guard);
    return true;
  }

  /** Leadership lost: the next term starts by reading what the other leader wrote meanwhile. */
  synchronized void forget() {
    loaded.clear();
    durableGuard = null;
  }
}
