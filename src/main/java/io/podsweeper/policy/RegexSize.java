package io.podsweeper.policy;

/**
 * An upper bound of the program RE2 (com.google.re2j, what CEL's {@code matches} runs) compiles a pattern to, from
 * the pattern's text alone. RE2 matches in time linear in the input, times the program's size; but the program can
 * be far larger than the pattern, as a counted repetition copies what it repeats: {@code ((a{1000}){1000}){1000}}
 * compiles to 10⁹ instructions, and CEL for Java compiles the pattern at every call and checks its size only after.
 * So the size is bounded before anything compiles it.
 *
 * <p>Counts generously: a literal, class or assertion one instruction, a group three more, an alternative or a
 * {@code *}, {@code +}, {@code ?} two; {@code x{n,m}} is {@code m + 1} copies of x, each with a branch. An unknown
 * escape or a syntax error counts as a literal (RE2 refuses the pattern when it is used, cheaply, before compiling).
 */
final class RegexSize {
  private final String pattern;
  private int at;

  private RegexSize(String pattern) {
    this.pattern = pattern;
  }

  /** At least the number of instructions RE2 compiles {@code pattern} to. */
  static long bound(String pattern) {
    RegexSize parser = new RegexSize(pattern);
    long size = 4;
    while (parser.at < pattern.length()) {
      size = ValueBound.add(size, parser.alternation());
      if (parser.at < pattern.length()) {
        parser.at++; // an unmatched ')'
        size = ValueBound.add(size, 1);
      }
    }
    return size;
  }

  /** Alternatives up to a ')' or the end. */
  private long alternation() {
    long size = sequence();
    while (at < pattern.length() && pattern.charAt(at) == '|') {
      at++;
      size = ValueBound.add(size, 2 + sequence());
    }
    return size;
  }

  private long sequence() {
    long size = 0;
    while (at < pattern.length() && pattern.charAt(at) != '|' && pattern.charAt(at) != ')') {
      size = ValueBound.add(size, repeated(atom()));
    }
    return size;
  }

  private long atom() {
    char c = pattern.charAt(at++);
    switch (c) {
      case '(' -> {
        skipGroupFlags();
        long inner = alternation();
        if (at < pattern.length()) {
          at++; // ')'
        }
        return ValueBound.add(inner, 3);
      }
      case '[' -> {
        skipClass();
        return 1;
      }
      case '\\' -> {
        return escape();
      }
      default -> {
        return 1;
      }
    }
  }

  /** After '(': {@code ?:}, {@code ?i:}, {@code ?P<name>}, or a flag group {@code (?i)} that holds nothing. */
  private void skipGroupFlags() {
    if (at >= pattern.length() || pattern.charAt(at) != '?') {
      return;
    }
    if (pattern.startsWith("?P<", at)) {
      int end = pattern.indexOf('>', at);
      at = end < 0 ? pattern.length() : end + 1;
      return;
    }
    while (at < pattern.length() && pattern.charAt(at) != ':' && pattern.charAt(at) != ')') {
      at++;
    }
    if (at < pattern.length() && pattern.charAt(at) == ':') {
      at++;
    }
  }

  /** After '[': to the ']' that closes it; a ']' first is a member, as are escapes and {@code [:alpha:]}. */
  private void skipClass() {
    if (at < pattern.length() && pattern.charAt(at) == '^') {
      at++;
    }
    if (at < pattern.length() && pattern.charAt(at) == ']') {
      at++;
    }
    while (at < pattern.length() && pattern.charAt(at) != ']') {
      if (pattern.charAt(at) == '\\') {
        at++;
      } else if (pattern.startsWith("[:", at)) {
        int end = pattern.indexOf(":]", at + 2);
        at = end < 0 ? at : end + 1;
      }
      at++;
    }
    at = Math.min(pattern.length(), at + 1);
  }

  /** After '\': {@code \Q…\E} is its characters; {@code \p{Greek}}, {@code \x{41}} and the rest are one. */
  private long escape() {
    if (at >= pattern.length()) {
      return 1;
    }
    char c = pattern.charAt(at++);
    if (c == 'Q') {
      int end = pattern.indexOf("\\E", at);
      int stop = end < 0 ? pattern.length() : end;
      long literal = stop - at;
      at = end < 0 ? stop : end + 2;
      return Math.max(1, literal);
    }
    if ((c == 'p' || c == 'P' || c == 'x') && at < pattern.length() && pattern.charAt(at) == '{') {
      int end = pattern.indexOf('}', at);
      at = end < 0 ? pattern.length() : end + 1;
    }
    return 1;
  }

  /** An atom with what repeats it: {@code *}, {@code +}, {@code ?}, {@code {n}}, {@code {n,}}, {@code {n,m}}, lazy or not. */
  private long repeated(long atom) {
    long size = atom;
    while (at < pattern.length()) {
      char c = pattern.charAt(at);
      if (c == '*' || c == '+' || c == '?') {
        at++;
        size = ValueBound.add(size, 2);
      } else if (c == '{' && count() >= 0) {
        size = ValueBound.add(ValueBound.times(count() + 1, ValueBound.add(size, 1)), 2);
        at = pattern.indexOf('}', at) + 1;
      } else {
        return size;
      }
    }
    return size;
  }

  /** The most copies {@code {n}}, {@code {n,}} or {@code {n,m}} at {@code at} asks for (n for {@code {n,}}), or -1 if it is not one. */
  private long count() {
    int end = pattern.indexOf('}', at);
    if (end < 0) {
      return -1;
    }
    String body = pattern.substring(at + 1, end);
    if (!body.matches("\\d{1,9}(,\\d{0,9})?")) {
      return -1;
    }
    int comma = body.indexOf(',');
    return comma < 0 || comma == body.length() - 1 ? Long.parseLong(comma < 0 ? body : body.substring(0, comma))
        : Long.parseLong(body.substring(comma + 1));
  }
}
