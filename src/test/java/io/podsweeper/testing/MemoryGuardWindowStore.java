package io.podsweeper.testing;

import io.podsweeper.safety.GuardWindowStore;
import java.util.Optional;

/** The guard's window kept as the API server keeps a ConfigMap: every write makes a new version, and is made over one. */
public final class MemoryGuardWindowStore implements GuardWindowStore {
  private String window;
  private long version;
  private String writeId = "";
  private Runnable beforeWrite = () -> {};

  /** Nothing remembered yet. */
  public MemoryGuardWindowStore() {}

  /** Remembers {@code window}, as if a replica had written it before. */
  public MemoryGuardWindowStore(String window) {
    writeAsAnotherReplica(window);
  }

  /** What is remembered now, null if nothing is. */
  public synchronized String remembered() {
    return window;
  }

  /** Another replica's write, blind: a new version. */
  public synchronized void writeAsAnotherReplica(String window) {
    this.window = window;
    this.writeId = "another replica's";
    version++;
  }

  /** Another replica's write of the text only (as a replica from before writes were named would make): a new version. */
  public synchronized void writeTextOnlyAsAnotherReplica(String window) {
    this.window = window;
    version++;
  }

  /** Runs before each write is judged, outside the lock: a write held there is one on the wire, its version chosen. */
  public synchronized void beforeEachWrite(Runnable hook) {
    beforeWrite = hook;
  }

  @Override
  public synchronized Stored load() {
    return window == null ? Stored.NOTHING : new Stored(window, Long.toString(version), writeId);
  }

  @Override
  public Optional<String> saveOver(String window, String over, String writeId) {
    Runnable hook;
    synchronized (this) {
      hook = beforeWrite;
    }
    hook.run();
    synchronized (this) {
      String now = this.window == null ? "" : Long.toString(version);
      if (!now.equals(over)) {
        return Optional.empty();
      }
      writeAsAnotherReplica(window);
      this.writeId = writeId;
      return Optional.of(Long.toString(version));
    }
  }
}
