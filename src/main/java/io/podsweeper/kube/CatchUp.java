package io.podsweeper.kube;

import java.time.Duration;
import java.util.OptionalLong;

/**
 * Whether one informer's store has caught up with the API server since its watch last broke off: the informer's side of
 * the promise that nothing is decided on a cache that has not (docs/design.md).
 *
 * <p>A list the informer has applied is caught up by itself: it is what the server held when it was read. A watch that
 * ends (fabric8 renews each one every 5 to 10 minutes; a connection is cut; the server goes away) is resumed from the
 * last resourceVersion the store applied, and the server replays what happened since, but nothing in the stream says
 * where the replay ends. So once the watch has ended, the store is behind until the server has been asked, after the
 * break, how far it is ({@link ResumingInformers}: the resourceVersion of its watch cache, the very stream the watch
 * replays), and the watch has delivered an event or a bookmark at or past that answer: the fence.
 *
 * <p>How resourceVersions compare: the API says they are opaque strings, to be compared for equality only. Every
 * Kubernetes API server stores objects in etcd, and its resourceVersions are etcd's revisions, written as decimal
 * integers that only grow; they are compared here as such. That is an implementation detail of the server, so it is
 * used with care: a version that is not a decimal integer compares with nothing, so a store resumed after it never
 * counts as caught up by comparison, and {@link #stalled} has it listed again instead (the slow way, not the wrong way).
 *
 * <p>Thread-safe: the store applies on the watch's thread, the fence arrives on an HTTP thread, readers ask from anywhere.
 */
final class CatchUp {
  private static final long UNKNOWN = -1;

  /** The last resourceVersion the store applied (a list's, an event's, a bookmark's); UNKNOWN if none compares. */
  private long applied = UNKNOWN;
  /** Whether the store is behind: its watch ended, or is ending, since the last list or fence it reached. */
  private boolean behind;
  /** While behind: the fence, once it is known; UNKNOWN until then. */
  private long fence = UNKNOWN;
  /** Counts the watch's restarts, so that the answer to an older one's question is not taken for the current one's. */
  private int generation;
  /** When the store last came closer to the fence (the fence arrived, or something was applied), by System.nanoTime. */
  private long progressAt;

  /** A list was applied, and the informer watches on from its resourceVersion: caught up. */
  synchronized void listed(String resourceVersion) {
    applied = parse(resourceVersion).orElse(UNKNOWN);
    behind = false;
    fence = UNKNOWN;
  }

  /** The watch is ending (its renewal closes it, or it is being replaced): behind from now on. */
  synchronized void ending() {
    behind = true;
    fence = UNKNOWN;
  }

  /**
   * The watch starts over from the last resourceVersion applied, without a list: behind until the fence asked for now is
   * known and reached.
   *
   * @return this restart's generation, to hand the fence in with
   */
  synchronized int resumed(long now) {
    behind = true;
    fence = UNKNOWN;
    progressAt = now;
    return ++generation;
  }

  /** The fence read for restart {@code generation}: the resourceVersion the server was at, after the watch broke off. */
  synchronized void fence(int generation, String resourceVersion, long now) {
    if (generation == this.generation && behind) {
      fence = parse(resourceVersion).orElse(Long.MAX_VALUE); // a fence that compares with nothing is never reached
      progressAt = now;
    }
  }

  /** An event or a bookmark was applied (or passed on) by the store. */
  synchronized void applied(String resourceVersion, long now) {
    OptionalLong version = parse(resourceVersion);
    applied = version.isPresent() ? Math.max(applied, version.getAsLong()) : UNKNOWN;
    progressAt = now;
  }

  /** True when the store holds everything the server held at the last list or fence: nothing older can be acted on. */
  synchronized boolean caughtUp() {
    return !behind || fence != UNKNOWN && applied != UNKNOWN && applied >= fence;
  }

  /**
   * True when the watch has been resumed, its fence is known and not reached, and nothing has come closer for
   * {@code patience}: a quiet collection whose fence no event will reach (the server's watch cache moved on without an
   * event of this kind, as when it relists from etcd or etcd reports progress), or a resourceVersion that does not
   * compare. The informer then lists again, from the watch cache.
   */
  synchronized boolean stalled(long now, Duration patience) {
    return behind && fence != UNKNOWN && !caughtUp() && now - progressAt >= patience.toNanos();
  }

  /** The restart the fence is being asked for now; compare with {@link #resumed}'s answer. */
  synchronized int generation() {
    return generation;
  }

  /** The last resourceVersion applied, as the server wrote it; empty if none compares. */
  synchronized OptionalLong applied() {
    return applied == UNKNOWN ? OptionalLong.empty() : OptionalLong.of(applied);
  }

  /** A resourceVersion as etcd's revision; empty if it is not a non-negative decimal integer. */
  static OptionalLong parse(String resourceVersion) {
    if (resourceVersion == null || resourceVersion.isEmpty() || resourceVersion.length() > 19) {
      return OptionalLong.empty();
    }
    for (int i = 0; i < resourceVersion.length(); i++) {
      if (resourceVersion.charAt(i) < '0' || resourceVersion.charAt(i) > '9') {
        return OptionalLong.empty();
      }
    }
    try {
      return OptionalLong.of(Long.parseLong(resourceVersion));
    } catch (NumberFormatException e) { // past Long.MAX_VALUE
      return OptionalLong.empty();
    }
  }
}
