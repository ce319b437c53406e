package io.podsweeper.policy;

import java.util.List;

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

  /** Plain loops, no streams or regex: this runs for every rule and every pod of a full pass (docs/benchmarks.md). */
  public boolean matches(String namespace) {
    boolean included = include.isEmpty();
    for (int i = 0; i < include.size() && !included; i++) {
      included = globMatches(include.get(i), namespace);
    }
    if (!included) {
      return false;
    }
    for (String glob : exclude) {
      if (globMatches(glob, namespace)) {
        return false;
      }
    }
    return true;
  }

  static boolean globMatches(String glob, String namespace) {
    return wildcardMatches(glob, namespace, false);
  }

  /**
   * True if every namespace {@code inner} matches is matched by {@code outer} as well. Tests inner's text against
   * outer, where outer's {@code ?} (one character) cannot stand for inner's {@code *} (any run): {@code a*} is not
   * covered by {@code a?}. Sound (never claims coverage wrongly), though not complete.
   */
  static boolean globCovers(String outer, String inner) {
    return wildcardMatches(outer, inner, true);
  }

  /**
   * {@code *} and {@code ?} wildcard matching: on a mismatch, the last {@code *} takes one more character. At most
   * glob length × text length steps, where a regex backtracks exponentially in the number of {@code *}.
   * {@code textStarIsWildcard}: a {@code *} in the text is itself a glob's, which a {@code ?} cannot stand for.
   */
  private static boolean wildcardMatches(String glob, String text, boolean textStarIsWildcard) {
    int g = 0;
    int t = 0;
    int star = -1;
    int starMatched = 0;
    while (t < text.length()) {
      char c = text.charAt(t);
      if (g < glob.length() && glob.charAt(g) == '*') {
        star = g++;
        starMatched = t;
      } else if (g < glob.length() && (glob.charAt(g) == c || glob.charAt(g) == '?' && !(textStarIsWildcard && c == '*'))) {
        g++;
        t++;
      } else if (star >= 0) {
        g = star + 1;
        t = ++starMatched;
      } else {
        return false;
      }
    }
    while (g < glob.length() && glob.charAt(g) == '*') {
      g++;
    }
    return g == glob.length();
  }
}
