package io.podsweeper.policy;

import java.math.BigInteger;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Go-style durations as Kubernetes users write them ({@code 90s}, {@code 1h30m}, {@code 7d}), and back. */
public final class Durations {
  private static final Pattern PART = Pattern.compile("(\\d+)(ms|s|m|h|d)");
  private static final Duration MAX = Duration.ofDays(36_500);

  private Durations() {}

  /** Parses a positive duration, or empty if the text is not one (negative, zero, malformed, over 100 years). */
  public static Optional<Duration> parse(String text) {
    if (text == null || text.isEmpty()) {
      return Optional.empty();
    }
    Matcher m = PART.matcher(text);
    Duration total = Duration.ZERO;
    int at = 0;
    while (m.find() && m.start() == at) {
      long value;
      try {
        value = Long.parseLong(m.group(1));
      } catch (NumberFormatException e) {
        return Optional.empty();
      }
      if (value > MAX.toMillis()) {
        return Optional.empty();
      }
      total = total.plus(
          switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(value);
            case "s" -> Duration.ofSeconds(value);
            case "m" -> Duration.ofMinutes(value);
            case "h" -> Duration.ofHours(value);
            default -> Duration.ofDays(value);
          });
      if (total.compareTo(MAX) > 0) {
        return Optional.empty();
      }
      at = m.end();
    }
    if (at != text.length() || total.isZero()) {
      return Optional.empty();
    }
    return Optional.of(total);
  }

  private static final BigInteger MAX_NANOS = BigInteger.ONE.shiftLeft(63);
  private static final Map<String, Long> GO_UNITS = Map.of("ns", 1L, "us", 1_000L, "\u00b5s", 1_000L, "\u03bcs", 1_000L,
      "ms", 1_000_000L, "s", 1_000_000_000L, "m", 60_000_000_000L, "h", 3_600_000_000_000L);

  /**
   * Parses exactly what Go's {@code time.ParseDuration} (and so a Kubernetes {@code metav1.Duration}) accepts: an
   * optional sign, then numbers with optional fractions, each with a unit of ns, us (or µs), ms, s, m, h
   * ({@code 1.5h}, {@code 1h30m}, {@code -2m}), or a bare {@code 0}; fractions are scaled as Go scales them, and a
   * total beyond Go's int64 nanoseconds is an error. Empty if the text is not one; negative durations are returned.
   */
  public static Optional<Duration> parseGo(String text) {
    if (text == null) {
      return Optional.empty();
    }
    String s = text;
    boolean negative = false;
    if (!s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+')) {
      negative = s.charAt(0) == '-';
      s = s.substring(1);
    }
    if (s.equals("0")) {
      return Optional.of(Duration.ZERO);
    }
    if (s.isEmpty()) {
      return Optional.empty();
    }
    BigInteger total = BigInteger.ZERO;
    int i = 0;
    while (i < s.length()) {
      if (s.charAt(i) != '.' && !isDigit(s.charAt(i))) {
        return Optional.empty();
      }
      int start = i;
      BigInteger whole = BigInteger.ZERO;
      for (; i < s.length() && isDigit(s.charAt(i)); i++) {
        whole = whole.multiply(BigInteger.TEN).add(BigInteger.valueOf(s.charAt(i) - '0'));
        if (whole.compareTo(MAX_NANOS) > 0) {
          return Optional.empty();
        }
      }
      boolean digitsBefore = i > start;
      BigInteger fraction = BigInteger.ZERO;
      double scale = 1;
      boolean digitsAfter = false;
      if (i < s.length() && s.charAt(i) == '.') {
        i++;
        int fractionStart = i;
        boolean overflow = false;
        // As Go's leadingFraction: the digits past what fits are read and dropped.
        for (; i < s.length() && isDigit(s.charAt(i)); i++) {
          BigInteger next = fraction.multiply(BigInteger.TEN).add(BigInteger.valueOf(s.charAt(i) - '0'));
          overflow = overflow || next.compareTo(MAX_NANOS) > 0;
          if (!overflow) {
            fraction = next;
            scale *= 10;
          }
        }
        digitsAfter = i > fractionStart;
      }
      if (!digitsBefore && !digitsAfter) {
        return Optional.empty();
      }
      int unitStart = i;
      while (i < s.length() && s.charAt(i) != '.' && !isDigit(s.charAt(i))) {
        i++;
      }
      Long unit = GO_UNITS.get(s.substring(unitStart, i));
      if (unit == null) {
        return Optional.empty();
      }
      BigInteger value = whole.multiply(BigInteger.valueOf(unit));
      if (fraction.signum() > 0) {
        value = value.add(BigInteger.valueOf((long) (fraction.doubleValue() * (unit / scale))));
      }
      total = total.add(value);
      if (value.compareTo(MAX_NANOS) > 0 || total.compareTo(MAX_NANOS) > 0) {
        return Optional.empty();
      }
    }
    if (!negative && total.equals(MAX_NANOS)) {
      return Optional.empty();
    }
    return Optional.of(Duration.ofNanos(negative ? total.negate().longValueExact() : total.longValueExact()));
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  /**
   * A compact human form, every unit down to the second ({@code 2h13m}, {@code 45s}, {@code 1d10m}, {@code 7h59m30s}):
   * an age beside a threshold never reads as equal to it when it is not. Under a second, milliseconds.
   */
  public static String format(Duration d) {
    if (d.isNegative()) {
      return "-" + format(d.negated());
    }
    long seconds = d.getSeconds();
    if (seconds == 0 && d.getNano() > 0) {
      return d.toMillis() + "ms";
    }
    long days = seconds / 86_400;
    long hours = seconds % 86_400 / 3600;
    long minutes = seconds % 3600 / 60;
    long secs = seconds % 60;
    StringBuilder b = new StringBuilder();
    if (days > 0) {
      b.append(days).append('d');
    }
    if (hours > 0) {
      b.append(hours).append('h');
    }
    // Every unit there is, none rounded away: "1d10m" is no "1d" (an age of 1d10m read "1d ago" beside "allows 1d").
    if (minutes > 0) {
      b.append(minutes).append('m');
    }
    if (secs > 0) {
      b.append(secs).append('s');
    }
    return b.length() == 0 ? "0s" : b.toString();
  }
}
