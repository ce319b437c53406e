package io.podsweeper.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {
  @ParameterizedTest(name = "{0} = {1}")
  @CsvSource({
    "90s,       PT1M30S",
    "1h30m,     PT1H30M",
    "30m1h,     PT1H30M",
    "7d,        PT168H",
    "250ms,     PT0.25S",
    "1s500ms,   PT1.5S",
    "1d2h3m4s5ms, PT26H3M4.005S",
    "0s1m,      PT1M",
    "36500d,    PT876000H",
  })
  void parses(String text, Duration expected) {
    assertThat(Durations.parse(text)).contains(expected);
  }

  @ParameterizedTest(name = "rejects \"{0}\"")
  @NullAndEmptySource
  @ValueSource(strings = {
    "1", "h", "-1s", "0s", "0ms", "0d0h", "1h-", "1h 30m", " 1h", "1H", "1.5h", "1w", "1y", "1hh", "+1h",
    "99999999999999999999d", "36501d", "36500d1ms", "9223372036854775807ms"
  })
  void rejects(String text) {
    assertThat(Durations.parse(text)).isEmpty();
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "PT2H13M,          2h13m",
    "PT2H13M59.9S,     2h13m",
    "PT45S,            45s",
    "PT38H,            1d14h",
    "PT38H59M59S,      1d14h",
    "PT24H,            1d",
    "PT1H,             1h",
    "PT1H0M5S,         1h",
    "PT1M5S,           1m5s",
    "PT0.25S,          250ms",
    "PT0S,             0s",
    "PT-2H-13M,        -2h13m",
  })
  void formats(Duration d, String expected) {
    assertThat(Durations.format(d)).isEqualTo(expected);
  }

  @Test
  void formatsWhatItParsesForCompactValues() {
    for (String text : new String[] {"90s", "1h30m", "7d", "250ms", "45s", "2h13m", "1d14h"}) {
      Duration d = Durations.parse(text).orElseThrow();
      assertThat(Durations.parse(Durations.format(d))).as(text).contains(d);
    }
  }
}
