package io.podsweeper.testing;

import io.podsweeper.safety.GuardWindowStore;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/** A guard-window store whose next write is carried out but its answer lost, as on a timeout: the writer gets an error. */
public final class AnswerLostStore implements GuardWindowStore {
  private final GuardWindowStore store;
  private final AtomicBoolean loseTheAnswer = new AtomicBoolean();

  public AnswerLostStore(GuardWindowStore store) {
    this.store = store;
  }

  public void loseTheNextAnswer() {
    loseTheAnswer.set(true);
  }

  @Override
  public Stored load() {
    return store.load();
  }

  @Override
  public Optional<String> saveOver(String window, String version, String writeId) {
    Optional<String> written = store.saveOver(window, version, writeId);
    if (loseTheAnswer.getAndSet(false)) {
      throw new IllegalStateException("timed out (the answer lost on its way)");
    }
    return written;
  }
}
