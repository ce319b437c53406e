package io.podsweeper.policy;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Evictions as Koordinator {@code PodMigrationJob}s ({@code scheduling.koordinator.sh/v1alpha1}): each admitted
 * eviction becomes a job that this service carries out, and hand-made jobs are honoured. The defaults of a job that
 * does not set its own, as Koordinator's MigrationController has them ({@code defaultJobMode}, {@code defaultJobTTL},
 * {@code evictionPolicy}).
 *
 * @param ttl a job not finished this long after its creation ends Failed, reason Timeout
 */
public record MigrationJobs(Mode mode, Duration ttl, EvictionPolicy evictionPolicy) {
  /** Koordinator's defaults: ReservationFirst, 5 minutes, the Eviction API. */
  public static final MigrationJobs KOORDINATOR_DEFAULTS = new MigrationJobs(Mode.RESERVATION_FIRST, Duration.ofMinutes(5),
      EvictionPolicy.EVICTION);

  /** {@code spec.mode}: reserve room for the replacement first (needs koord-scheduler), or evict at once. */
  public enum Mode {
    RESERVATION_FIRST,
    EVICT_DIRECTLY;

    public String wireName() {
      return wire(this);
    }

    static Mode parse(ConfigNode node) {
      return MigrationJobs.parse(values(), node);
    }
  }

  /**
   * How the pod is made to go: the Eviction API (PodDisruptionBudgets hold), a plain DELETE, or Koordinator's soft
   * eviction (the {@code scheduling.koordinator.sh/soft-eviction} annotation, for a workload that moves itself).
   */
  public enum EvictionPolicy {
    EVICTION,
    DELETE,
    SOFT_EVICTION;

    public String wireName() {
      return wire(this);
    }

    /** Koordinator's value, or empty for anything else (a label with an unknown value falls back to the default there too). */
    public static Optional<EvictionPolicy> of(String value) {
      return MigrationJobs.of(values(), value);
    }

    static EvictionPolicy parse(ConfigNode node) {
      return MigrationJobs.parse(values(), node);
    }
  }

  /** Koordinator's spelling of a constant: RESERVATION_FIRST is ReservationFirst. */
  private static String wire(Enum<?> e) {
    return Arrays.stream(e.name().split("_")).map(w -> w.charAt(0) + w.substring(1).toLowerCase(Locale.ROOT)).collect(Collectors.joining());
  }

  public static <E extends Enum<E>> Optional<E> of(E[] values, String value) {
    return Arrays.stream(values).filter(e -> wire(e).equals(value)).findFirst();
  }

  private static <E extends Enum<E>> E parse(E[] values, ConfigNode node) {
    return of(values, node.string()).orElseThrow(() -> node.error("must be "
        + Arrays.stream(values).map(MigrationJobs::wire).collect(Collectors.joining(", ")) + ", got \"" + node.string() + "\""));
  }

  static final Set<String> FIELDS = Set.of("mode", "ttl", "evictionPolicy");

  /** The native policy's {@code migrationJobs} object; every field optional, Koordinator's defaults otherwise. */
  static MigrationJobs read(ConfigNode node) {
    node.requireObject(FIELDS);
    return read(node, "mode", "ttl", "evictionPolicy");
  }

  /** Reads the three settings from {@code node}'s fields of the given names, each defaulting as Koordinator does. */
  static MigrationJobs read(ConfigNode node, String modeField, String ttlField, String policyField) {
    return new MigrationJobs(
        node.has(modeField) ? Mode.parse(node.child(modeField)) : KOORDINATOR_DEFAULTS.mode(),
        node.has(ttlField) ? node.optionalDuration(ttlField).orElseThrow() : KOORDINATOR_DEFAULTS.ttl(),
        node.has(policyField) ? EvictionPolicy.parse(node.child(policyField)) : KOORDINATOR_DEFAULTS.evictionPolicy());
  }
}
