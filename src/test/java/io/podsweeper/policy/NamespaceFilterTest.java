package io.podsweeper.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Namespace globs: matching, the "can match nothing" check on include/exclude, and time linear in their length. */
class NamespaceFilterTest {
  private static final String HEAD = "apiVersion: podsweeper.io/v1alpha1\nkind: PodSweeperPolicy\n";

  @ParameterizedTest
  @CsvSource({
      "ci-*, ci-web, true", "ci-*, ci, false", "ci-?, ci-a, true", "ci-?, ci-ab, false", "*-prod, web-prod, true",
      "*a*b, xaxxb, true", "*a*b, xaxxbc, false", "'*', anything, true"})
  void globsMatch(String glob, String namespace, boolean matches) {
    assertThat(NamespaceFilter.globMatches(glob, namespace)).isEqualTo(matches);
  }

  @ParameterizedTest
  @CsvSource({
      "ci-*, ci-prod, true", "ci-*, ci-*, true", "'*', ci-?, true", "ci-?, ci-a, true",
      // outer's ? is one character, inner's * any run: a? does not cover a*
      "a?, a*, false", "ci-prod, ci-*, false", "*-prod, ci-*, false", "a*b, a?b, true", "*b, *ab, true"})
  void oneGlobCoversAnotherOnlyWhenEveryNamespaceOfTheInnerIsMatchedByTheOuter(String outer, String inner, boolean covers) {
    assertThat(NamespaceFilter.globCovers(outer, inner)).isEqualTo(covers);
  }

  @Test
  // A safety net, not a benchmark: a backtracking regex took over a minute here, and ignores interrupts.
  @Timeout(value = 2, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void validatingAGlobOfThirtyOneStarsIsFast() {
    String stars = "*a".repeat(31) + "b"; // 63 characters, the longest a namespace pattern may be
    String plain = "a".repeat(63);
    assertThat(NamespaceFilter.globCovers(stars, plain)).isFalse();
    assertThat(NamespaceFilter.globMatches(stars, plain)).isFalse();
    assertThatThrownBy(() -> PolicyLoader.parse(HEAD + "rules: [{name: a, states: [Failed], namespaces: {include: [\"" + plain
        + "\", \"ci-*\"], exclude: [\"" + stars + "\", \"ci-*\"]}}]\n", "p.yaml"))
        .hasMessageContaining("rules[0].namespaces.include[1]: \"ci-*\" can match nothing");
  }
}
