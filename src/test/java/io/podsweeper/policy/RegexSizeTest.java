package io.podsweeper.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.re2j.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The bound of a pattern's program is never below what RE2J, the engine of CEL's matches, compiles it to. */
class RegexSizeTest {
  @ParameterizedTest
  @ValueSource(strings = {"a", "abc", "a+b", "^registry[.]example/.*:v[0-9]+$", "[a-z0-9.-]+:latest", "a{1000}", "(a{10}){10}",
      "((a{5}){5}){5}", "(ab|cd|ef)*x", "(?i)registry", "(?i:ab)+", "(?P<name>[a-z]+)-\\d{8,}", "\\pL+", "\\p{Greek}{3,5}",
      "[\\p{L}\\p{N}]+", "[[:alpha:]]{2,4}", "[]a]{3}", "[^]a-z]*", "\\x{41}{4}", "\\Qa.b*c\\E{2}", "a{2,}", "a{,3}", "a{3}?",
      "x*?y+?z??", "(a|)(|b)", "()", "(((((a)))))", "a|b|c|d|e|f|g|h", "\\b\\w+\\b", "\\A[0-9a-f]{64}\\z", "(a*)*", "(a+|b+){1,3}"})
  void isNeverBelowWhatRe2jCompiles(String pattern) {
    assertThat(RegexSize.bound(pattern)).as(pattern).isGreaterThanOrEqualTo(Pattern.compile(pattern).programSize());
  }

  @ParameterizedTest
  @ValueSource(strings = {"((a{1000}){1000}){1000}", "(((a{100}){100}){100}){100}", "[a-z]{1000}"})
  void growsWithNestedRepetitionsAsTheProgramDoes(String pattern) {
    assertThat(RegexSize.bound(pattern)).isGreaterThan(PodMatch.MAX_REGEX_PROGRAM);
  }
}
