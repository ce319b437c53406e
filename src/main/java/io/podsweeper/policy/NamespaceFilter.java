package io.podsweeper.policy;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Namespaces a rule applies to: every namespace matching an include glob (all when none is given) and no
 * exclude glob. Globs know {@code *} (any run of characters) and {@code ?} (one character).
 */
public record NamespaceFilter(List<String> include, List<String> exclude) {
  public static final NamespaceFilter ALL = new NamespaceFilter(List.of(), List.of());

  public NamespaceFilter {
    include = List.copyOf(include);
    exclude = List.copyOf(exclude);
  }

  public boolean matches(String namespace) {
    return (include.isEmpty() || include.stream().anyMatch(g -> globMatches(g, namespace)))
        && exclude.stream().noneMatch(g -> globMatches(g, namespace));
  }

  static boolean globMatches(String glob, String value) {
    return COMPILED.computeIfAbsent(glob, g -> toRegex(g, ".")).matcher(value).matches();
  }

  /**
   * Compiled globs, shared: a pass evaluates every pod against every rule, and compiling a pattern per match was
   * a fifth of a full pass (docs/benchmarks.md). Bounded by the distinct globs of the loaded policies.
   */
  private static final java.util.Map<String, Pattern> COMPILED = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * True if every namespace {@code inner} matches is matched by {@code outer} as well. Tests inner's text against
   * outer, where outer's {@code ?} (one character) cannot stand for inner's {@code *} (any run): {@code a*} is not
   * covered by {@code a?}. Sound (never claims coverage wrongly), though not complete.
   */
  static boolean globCovers(String outer, String inner) {
    return toRegex(outer, "[^*]").matcher(inner).matches();
  }

  private static Pattern toRegex(String glob, String oneChar) {
    StringBuilder regex = new StringBuilder();
    for (char c : glob.toCharArray()) {
      switch (c) {
        case '*' -> regex.append(".*");
        case '?' -> regex.append(oneChar);
        default -> regex.append(Pattern.quote(String.valueOf(c)));
      }
    }
    return Pattern.compile(regex.toString());
  }
}
