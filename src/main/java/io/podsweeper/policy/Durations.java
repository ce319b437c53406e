package io.podsweeper.policy;

import java.time.Duration;
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

  /** A compact human form: {@code 2h13m}, {@code 45s}, {@code 3d4h}. */
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
    if (minutes > 0 && days == 0) {
      b.append(minutes).append('m');
    }
    if (secs > 0 && days == 0 && hours == 0) {
      b.append(secs).append('s');
    }
    return b.length() == 0 ? "0s" : b.toString();
  }
}
