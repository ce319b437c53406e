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
    "PT2H13M59.9S,     2h13m59s",
    "PT45S,            45s",
    "PT38H,            1d14h",
    "PT38H59M59S,      1d14h59m59s",
    "PT24H10M,         1d10m",
    "PT24H,            1d",
    "PT1H,             1h",
    "PT1H0M5S,         1h5s",
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

  /** Go's time.ParseDuration: each expected result is what Go itself returned for the text: nanoseconds, or err. */
  @ParameterizedTest(name = "Go: \"{0}\" = {1}")
  @CsvSource(delimiter = '|', value = {
    "0 | 0", "-0 | 0", "+0 | 0", "1.s | 1000000000", "9223372036.854775807s | 9223372036854775807", "9223372036.854775808s | err",
    "1.0000000000000000000001ns | 1", "+-1s | err",
    "15.5555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555555h | 56000000000000",
    "0s | 0", "1.5h | 5400000000000", "1h30m | 5400000000000", "1h-30m | err", "90s | 90000000000",
    ".5s | 500000000", "5.s | 5000000000", ".s | err", "1.5.5s | err", "1e3s | err", "1\u00b5s | 1000", "1\u03bcs | 1000",
    "1us | 1000", "1ns | 1", "1.000000001s | 1000000001", "0.0000000001s | 0", "-2m | -120000000000", "+2m | 120000000000",
    "9223372036854775807ns | 9223372036854775807", "9223372036854775808ns | err", "-9223372036854775808ns | -9223372036854775808",
    "-9223372036854775809ns | err", "2562047h47m16.854775807s | 9223372036854775807", "2562047h47m16.854775808s | err",
    "-2562047h47m16.854775808s | -9223372036854775808", "2562048h | err", "1.9999999999999999999999999999h | 7200000000000",
    "0.1234567890123456789012345678901234567890s | 123456789", "7d | err", "1H | err", "' 1s' | err", "'1s ' | err", "'' | err",
    "- | err", "1 | err", "h | err", "'1h 30m' | err", "00001s | 1000000000", "3m.5s | 180500000000", "1.5h2.25m | 5535000000000",
    "1sm | err", "1s1 | err", "--1s | err", "0.5ns | 0", "922337203685477580.9ns | 922337203685477580",
  })
  void parsesExactlyWhatGoParses(String text, String nanos) {
    assertThat(Durations.parseGo(text).map(d -> Long.toString(d.toNanos())).orElse("err")).isEqualTo(nanos);
  }
}
