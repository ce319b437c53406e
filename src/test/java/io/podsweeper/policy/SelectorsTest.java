package io.podsweeper.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.podsweeper.policy.LabelSelector.Operator;
import io.podsweeper.policy.LabelSelector.Requirement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The string selector syntax of upstream's {@code nodeSelector} (and {@code kubectl -l}): {@link Selectors#parse}. */
class SelectorsTest {
  private static final ConfigNode AT = new ConfigNode(null, "nodeSelector");

  static LabelSelector parse(String text) {
    return Selectors.parse(AT, text);
  }

  static String error(String text) {
    try {
      LabelSelector parsed = Selectors.parse(AT, text);
      throw new AssertionError("expected \"" + text + "\" to be rejected, got " + parsed);
    } catch (PolicyException e) {
      return e.getMessage();
    }
  }

  @Test
  void emptyStringSelectsEverything() {
    assertThat(parse("")).isEqualTo(LabelSelector.EVERYTHING);
    assertThat(parse("   ")).isEqualTo(LabelSelector.EVERYTHING);
    assertThat(parse("").matches(Map.of("any", "thing"))).isTrue();
  }

  @Test
  void equality() {
    LabelSelector s = parse("pool=batch");
    assertThat(s).isEqualTo(new LabelSelector(Map.of("pool", "batch"), List.of()));
    assertThat(s.matches(Map.of("pool", "batch", "x", "y"))).isTrue();
    assertThat(s.matches(Map.of("pool", "system"))).isFalse();
    assertThat(s.matches(Map.of())).isFalse();
  }

  @Test
  void doubleEqualsIsEquality() {
    assertThat(parse("pool==batch")).isEqualTo(new LabelSelector(Map.of("pool", "batch"), List.of()));
  }

  @Test
  void inequalityMatchesAbsentKeys() {
    LabelSelector s = parse("pool!=system");
    assertThat(s).isEqualTo(new LabelSelector(Map.of(), List.of(new Requirement("pool", Operator.NotIn, Set.of("system")))));
    assertThat(s.matches(Map.of("pool", "batch"))).isTrue();
    assertThat(s.matches(Map.of())).isTrue();
    assertThat(s.matches(Map.of("pool", "system"))).isFalse();
  }

  @Test
  void inSet() {
    LabelSelector s = parse("zone in (a, b)");
    assertThat(s).isEqualTo(new LabelSelector(Map.of(), List.of(new Requirement("zone", Operator.In, Set.of("a", "b")))));
    assertThat(s.matches(Map.of("zone", "b"))).isTrue();
    assertThat(s.matches(Map.of("zone", "c"))).isFalse();
    assertThat(s.matches(Map.of())).isFalse();
  }

  @Test
  void notInSet() {
    LabelSelector s = parse("zone notin (a)");
    assertThat(s).isEqualTo(new LabelSelector(Map.of(), List.of(new Requirement("zone", Operator.NotIn, Set.of("a")))));
    assertThat(s.matches(Map.of("zone", "b"))).isTrue();
    assertThat(s.matches(Map.of())).isTrue();
    assertThat(s.matches(Map.of("zone", "a"))).isFalse();
  }

  @Test
  void existence() {
    LabelSelector s = parse("node-role.kubernetes.io/worker");
    assertThat(s).isEqualTo(new LabelSelector(Map.of(),
        List.of(new Requirement("node-role.kubernetes.io/worker", Operator.Exists, Set.of()))));
    assertThat(s.matches(Map.of("node-role.kubernetes.io/worker", ""))).isTrue();
    assertThat(s.matches(Map.of("node-role.kubernetes.io/master", ""))).isFalse();
  }

  @Test
  void nonExistence() {
    LabelSelector s = parse("!canary");
    assertThat(s).isEqualTo(new LabelSelector(Map.of(), List.of(new Requirement("canary", Operator.DoesNotExist, Set.of()))));
    assertThat(s.matches(Map.of())).isTrue();
    assertThat(s.matches(Map.of("canary", "false"))).isFalse();
  }

  @Test
  void combinationsAreAnded() {
    LabelSelector s = parse("env=prod, tier in (web,api),!canary,zone,kubernetes.io/os!=windows");
    assertThat(s).isEqualTo(new LabelSelector(Map.of("env", "prod"), List.of(
        new Requirement("tier", Operator.In, Set.of("web", "api")),
        new Requirement("canary", Operator.DoesNotExist, Set.of()),
        new Requirement("zone", Operator.Exists, Set.of()),
        new Requirement("kubernetes.io/os", Operator.NotIn, Set.of("windows")))));
    Map<String, String> good = Map.of("env", "prod", "tier", "api", "zone", "z1", "kubernetes.io/os", "linux");
    assertThat(s.matches(good)).isTrue();
    assertThat(s.matches(with(good, "canary", "true"))).isFalse();
    assertThat(s.matches(with(good, "env", "dev"))).isFalse();
    assertThat(s.matches(with(good, "tier", "db"))).isFalse();
    assertThat(s.matches(with(good, "kubernetes.io/os", "windows"))).isFalse();
    assertThat(s.matches(Map.of("env", "prod", "tier", "api"))).isFalse();
  }

  @Test
  void whitespaceAroundTokensIsIgnored() {
    assertThat(parse("  a = b ,  c != d ")).isEqualTo(parse("a=b,c!=d"));
    assertThat(parse("x notin(y)")).isEqualTo(parse("x notin (y)"));
  }

  @Test
  void emptyRequirement() {
    assertThat(error("a=b,,c")).isEqualTo("nodeSelector: invalid selector \"a=b,,c\": empty requirement");
    assertThat(error("a=b,")).isEqualTo("nodeSelector: invalid selector \"a=b,\": empty requirement");
    assertThat(error(",")).isEqualTo("nodeSelector: invalid selector \",\": empty requirement");
  }

  @Test
  void invalidKeys() {
    assertThat(error("=b")).isEqualTo("nodeSelector: invalid label key \"\"");
    assertThat(error("-a=b")).isEqualTo("nodeSelector: invalid label key \"-a\"");
    assertThat(error("Example.COM/a=b")).isEqualTo("nodeSelector: invalid label key \"Example.COM/a\"");
    assertThat(error("!")).isEqualTo("nodeSelector: invalid label key \"\"");
    assertThat(error("a in (x")).isEqualTo("nodeSelector: invalid label key \"a in (x\"");
    assertThat(error("a b")).isEqualTo("nodeSelector: invalid label key \"a b\"");
  }

  @Test
  void invalidValues() {
    assertThat(error("a=b c")).isEqualTo("nodeSelector: invalid label value \"b c\"");
    assertThat(error("a=b=c")).isEqualTo("nodeSelector: invalid label value \"b=c\"");
    assertThat(error("a!=-x")).isEqualTo("nodeSelector: invalid label value \"-x\"");
    assertThat(error("a in (x,-y)")).isEqualTo("nodeSelector: invalid label value \"-y\"");
    assertThat(error("a=" + "v".repeat(64))).isEqualTo("nodeSelector: invalid label value \"" + "v".repeat(64) + "\"");
  }

  @Test
  void errorsNameTheGivenPlace() {
    assertThatThrownBy(() -> Selectors.parse(new ConfigNode(null, "profiles[0].pluginConfig[0].args.nodeSelector"), "a=,"))
        .isInstanceOf(PolicyException.class)
        .hasMessage("profiles[0].pluginConfig[0].args.nodeSelector: invalid selector \"a=,\": empty requirement");
  }

  private static Map<String, String> with(Map<String, String> base, String key, String value) {
    Map<String, String> copy = new java.util.HashMap<>(base);
    copy.put(key, value);
    return copy;
  }

  /** Namespace globs: {@code *} any run (empty too), {@code ?} exactly one character, everything else literal. */
  @ParameterizedTest
  @CsvSource({
      "kube-*, kube-system, true", "kube-*, kube-, true", "kube-*, kube, false", "*-system, kube-system, true",
      "*, '', true", "'', '', true", "'', a, false", "?, a, true", "?, '', false", "?, ab, false",
      "web-?, web-1, true", "web-?, web-12, false", "web-??, web-12, true", "a*b*c, abxbc, true", "a*b*c, abxbcx, false",
      "a*b*c, ac, false", "a**c, ac, true", "ci-prod, ci-prod, true", "ci-prod, ci-prod2, false", "a.b, axb, false",
      "*a*, bab, true", "*a, ba, true", "*a, ab, false"})
  void namespaceGlobs(String glob, String namespace, boolean matches) {
    assertThat(new NamespaceFilter(List.of(glob), List.of()).matches(namespace)).isEqualTo(matches);
  }
}
