package io.podsweeper.policy;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Where a pod's own lifetime may be written, for a rule with {@code ttlFrom} (README "Per-pod TTL"): Podsweeper's
 * annotations, and for people migrating kube-janitor's annotations and Kyverno's cleanup label. Each source has a
 * TTL key (a duration: remove once older than it, or finished longer ago for a finished pod) and an absolute deadline
 * (Kyverno's one label holds either). Values are parsed as the tool that owns the key parses them, never guessed.
 */
public enum TtlSource {
  /** {@code podsweeper.io/ttl: 1h30m} (Go-style), {@code podsweeper.io/expires: 2026-01-01T00:00:00Z} (RFC 3339). */
  PODSWEEPER("podsweeper.io", "podsweeper.io/ttl", Optional.of("podsweeper.io/expires"), false),
  /**
   * kube-janitor: {@code janitor/ttl} (units s, m, h, d, w; {@code forever}), {@code janitor/expires}
   * ({@code 2026-01-01T00:00:00Z}, {@code 2026-01-01T00:00} or {@code 2026-01-01}, UTC).
   */
  JANITOR("janitor", "janitor/ttl", Optional.of("janitor/expires"), false),
  /** Kyverno's label {@code cleanup.kyverno.io/ttl}: a duration, or an instant {@code 2026-01-01T000000Z} or {@code 2026-01-01}. */
  KYVERNO("kyverno", "cleanup.kyverno.io/ttl", Optional.empty(), true);

  private static final Pattern WEEKS = Pattern.compile("(\\d{1,4})w");
  private static final DateTimeFormatter MINUTES = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm");
  private static final DateTimeFormatter KYVERNO_INSTANT = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HHmmss'Z'");

  /** The annotation keys of every source: the only annotations the slim records keep for TTLs. */
  public static final Set<String> ANNOTATION_KEYS = Arrays.stream(values()).filter(s -> !s.label)
      .flatMap(s -> Stream.concat(Stream.of(s.ttlKey), s.expiresKey.stream())).collect(Collectors.toUnmodifiableSet());

  private final String wireName;
  private final String ttlKey;
  private final Optional<String> expiresKey;
  private final boolean label;

  TtlSource(String wireName, String ttlKey, Optional<String> expiresKey, boolean label) {
    this.wireName = wireName;
    this.ttlKey = ttlKey;
    this.expiresKey = expiresKey;
    this.label = label;
  }

  /** What a key holds: a lifetime, a deadline, no deadline at all, or a value that does not parse (and why). */
  public sealed interface Value {
    /** Remove once older than this (for a finished pod: finished longer ago). */
    record Ttl(Duration ttl) implements Value {}

    /** Remove once past this instant. */
    record Expires(Instant at) implements Value {}

    /** kube-janitor's {@code forever}: never. */
    record Never() implements Value {}

    record Invalid(String why) implements Value {}
  }

  /** A value found on a pod or its namespace, with the key it came from. */
  public record Found(String key, String text, Value value) {}

  public String wireName() {
    return wireName;
  }

  public static Optional<TtlSource> parse(String wireName) {
    return Arrays.stream(values()).filter(s -> s.wireName.equals(wireName)).findFirst();
  }

  public static String allowedNames() {
    return Arrays.stream(values()).map(TtlSource::wireName).collect(Collectors.joining(", "));
  }

  /**
   * The values this source finds in an object's annotations and labels, TTL key first; empty when it carries
   * none of them.
   */
  public Stream<Found> find(Map<String, String> annotations, Map<String, String> labels) {
    Map<String, String> where = label ? labels : annotations;
    Stream<Found> ttl = Optional.ofNullable(where.get(ttlKey)).map(v -> new Found(ttlKey, v, label ? kyverno(v) : ttl(v))).stream();
    Stream<Found> expires = expiresKey.flatMap(k -> Optional.ofNullable(where.get(k)).map(v -> new Found(k, v, expires(v)))).stream();
    return Stream.concat(ttl, expires);
  }

  private Value ttl(String text) {
    if (this == JANITOR) {
      if (text.equals("forever")) {
        return new Value.Never();
      }
      Matcher weeks = WEEKS.matcher(text);
      if (weeks.matches()) {
        return new Value.Ttl(Duration.ofDays(7L * Integer.parseInt(weeks.group(1))));
      }
    }
    return Durations.parse(text).<Value>map(Value.Ttl::new)
        .orElseGet(() -> new Value.Invalid("not a duration (e.g. 90s, 30m, 1h30m, 7d" + (this == JANITOR ? ", 2w, forever)" : ")")));
  }

  /**
   * The years RFC 3339 can write. Java's parsers also take a signed year of up to nine digits
   * ({@code +999999999-12-31}); such a deadline is no deadline a person meant, and arithmetic on it overflows.
   */
  private static final Instant EARLIEST = Instant.parse("0001-01-01T00:00:00Z");
  private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999999999Z");

  private static Value at(Instant instant) {
    return instant.isBefore(EARLIEST) || instant.isAfter(LATEST)
        ? new Value.Invalid("a time out of range (years 0001 to 9999)") : new Value.Expires(instant);
  }

  private Value expires(String text) {
    try {
      return at(OffsetDateTime.parse(text).toInstant());
    } catch (DateTimeParseException e) {
      if (this == PODSWEEPER) {
        return new Value.Invalid("not an RFC 3339 time (e.g. 2026-01-01T00:00:00Z)");
      }
    }
    try {
      return at(LocalDateTime.parse(text, MINUTES).toInstant(ZoneOffset.UTC));
    } catch (DateTimeParseException e) {
      return date(text).orElseGet(() -> new Value.Invalid("not a time (2026-01-01T00:00:00Z, 2026-01-01T00:00 or 2026-01-01)"));
    }
  }

  private static Value kyverno(String text) {
    try {
      return at(LocalDateTime.parse(text, KYVERNO_INSTANT).toInstant(ZoneOffset.UTC));
    } catch (DateTimeParseException e) {
      return date(text).or(() -> Durations.parse(text).map(Value.Ttl::new))
          .orElseGet(() -> new Value.Invalid("neither a duration (e.g. 4h, 1d) nor a time (2026-01-01T000000Z or 2026-01-01)"));
    }
  }

  /** A day as midnight UTC. */
  private static Optional<Value> date(String text) {
    try {
      return Optional.of(at(LocalDate.parse(text).atStartOfDay().toInstant(ZoneOffset.UTC)));
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }
}
