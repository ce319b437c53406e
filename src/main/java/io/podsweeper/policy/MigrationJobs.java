package io.podsweeper.policy;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Evictions as Koordinator {@code PodMigrationJob}s ({@code scheduling.koordinator.sh/v1alpha1}): each admitted
 * eviction becomes a job that this service carries out, and hand-made jobs are honoured. The defaults of a job that
 * does not set its own, as Koordinator's MigrationController has them ({@code defaultJobMode}, {@code defaultJobTTL},
 * {@code evictionPolicy}).
 *
 * @param ttl a job not finished this long after its creation ends Failed, reason Timeout
 * @param deleteOptions Koordinator's {@code defaultDeleteOptions}: a job without its own {@code spec.deleteOptions} is
 *     given these (when made) and evicts with them
 */
public record MigrationJobs(Mode mode, Duration ttl, EvictionPolicy evictionPolicy, Optional<DeleteOptions> deleteOptions) {
  /** Koordinator's defaults: ReservationFirst, 5 minutes, the Eviction API, no delete options. */
  public static final MigrationJobs KOORDINATOR_DEFAULTS = new MigrationJobs(Mode.RESERVATION_FIRST, Duration.ofMinutes(5),
      EvictionPolicy.EVICTION, Optional.empty());

  /**
   * The parts of a {@code metav1.DeleteOptions} a job's eviction or DELETE carries. Its {@code preconditions} are never
   * taken: the request always carries the pod's UID and resourceVersion as the decision saw them.
   *
   * @param propagationPolicy {@code Orphan}, {@code Background} or {@code Foreground}
   */
  public record DeleteOptions(OptionalLong gracePeriodSeconds, Optional<String> propagationPolicy) {
    static final Set<String> FIELDS = Set.of("apiVersion", "kind", "gracePeriodSeconds", "propagationPolicy", "preconditions");
    public static final Set<String> PROPAGATION_POLICIES = Set.of("Orphan", "Background", "Foreground");

    static DeleteOptions read(ConfigNode node) {
      node.requireObject(FIELDS);
      Optional<String> propagation = node.optionalString("propagationPolicy");
      if (propagation.isPresent() && !PROPAGATION_POLICIES.contains(propagation.get())) {
        throw node.child("propagationPolicy").error("must be Orphan, Background or Foreground, got \"" + propagation.get() + "\"");
      }
      return new DeleteOptions(node.optionalLong("gracePeriodSeconds", 0, Long.MAX_VALUE), propagation);
    }

    /** Its fields, as a DeleteOptions object has them. */
    public void write(com.fasterxml.jackson.databind.node.ObjectNode options) {
      gracePeriodSeconds.ifPresent(g -> options.put("gracePeriodSeconds", g));
      propagationPolicy.ifPresent(p -> options.put("propagationPolicy", p));
    }
  }

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

  static final Set<String> FIELDS = Set.of("mode", "ttl", "evictionPolicy", "deleteOptions");

  /** The native policy's {@code migrationJobs} object; every field optional, Koordinator's defaults otherwise. */
  static MigrationJobs read(ConfigNode node) {
    node.requireObject(FIELDS);
    return read(node, "mode", "ttl", "evictionPolicy", "deleteOptions");
  }

  /** Reads the four settings from {@code node}'s fields of the given names, each defaulting as Koordinator does. */
  static MigrationJobs read(ConfigNode node, String modeField, String ttlField, String policyField, String deleteOptionsField) {
    return new MigrationJobs(
        node.has(modeField) ? Mode.parse(node.child(modeField)) : KOORDINATOR_DEFAULTS.mode(),
        node.has(ttlField) ? node.optionalDuration(ttlField).orElseThrow() : KOORDINATOR_DEFAULTS.ttl(),
        node.has(policyField) ? EvictionPolicy.parse(node.child(policyField)) : KOORDINATOR_DEFAULTS.evictionPolicy(),
        node.has(deleteOptionsField) ? Optional.of(DeleteOptions.read(node.child(deleteOptionsField))) : Optional.empty());
  }
}
