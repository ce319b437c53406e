package io.podsweeper.engine;

import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** Where the blast-radius guard's window is remembered: a ConfigMap beside the kill switch's in production. */
public interface GuardWindowStore {
  /** The window last written, or empty if none was. Throws if it cannot be read. */
  Optional<String> load();

  /** Writes the window; throws if it cannot. */
  void save(String window);

  static GuardWindowStore of(Supplier<Optional<String>> load, Consumer<String> save) {
    return new GuardWindowStore() {
      @Override
      public Optional<String> load() {
        return load.get();
      }

      @Override
      public void save(String window) {
        save.accept(window);
      }
    };
  }

  /** No store: the window lives in this process only (no control ConfigMap). */
  GuardWindowStore NONE = of(Optional::empty, window -> {});
}
