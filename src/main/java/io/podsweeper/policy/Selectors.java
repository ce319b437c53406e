package io.podsweeper.policy;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** Reads and validates Kubernetes label selectors with the API server's own syntax rules for keys and values. */
public final class Selectors {
  private static final Pattern NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]");
  private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
  private static final Pattern VALUE = Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?");

  private Selectors() {}

  public static LabelSelector read(ConfigNode parent, String field) {
    if (!parent.has(field)) {
      return LabelSelector.EVERYTHING;
    }
    ConfigNode node = parent.child(field).requireObject(Set.of("matchLabels", "matchExpressions"));
    Map<String, String> matchLabels = node.stringMap("matchLabels");
    matchLabels.forEach(
        (key, value) -> {
          checkKey(node.child("matchLabels").child(key), key);
          checkValue(node.child("matchLabels").child(key), value);
        });
    List<LabelSelector.Requirement> expressions = node.mapList("matchExpressions", Selectors::requirement);
    return new LabelSelector(matchLabels, expressions);
  }

  /**
   * A selector in the string syntax of {@code kubectl -l} and upstream's {@code nodeSelector}:
   * {@code a=b,c!=d,e in (x,y),f notin (z),g,!h}. The empty string selects everything.
   */
  public static LabelSelector parse(ConfigNode at, String text) {
    Map<String, String> matchLabels = new java.util.LinkedHashMap<>();
    List<LabelSelector.Requirement> expressions = new java.util.ArrayList<>();
    for (String part : splitTopLevel(text)) {
      String p = part.trim();
      if (p.isEmpty()) {
        if (text.isBlank()) {
          continue;
        }
        throw at.error("invalid selector \"" + text + "\": empty requirement");
      }
      java.util.regex.Matcher set = SET_REQUIREMENT.matcher(p);
      if (set.matches()) {
        String key = set.group(1);
        checkKey(at, key);
        List<String> values = java.util.Arrays.stream(set.group(3).split(",")).map(String::trim).toList();
        values.forEach(v -> checkValue(at, v));
        boolean in = set.group(2).equals("in");
        expressions.add(new LabelSelector.Requirement(key, in ? LabelSelector.Operator.In : LabelSelector.Operator.NotIn, new LinkedHashSet<>(values)));
      } else if (p.startsWith("!")) {
        checkKey(at, p.substring(1).trim());
        expressions.add(new LabelSelector.Requirement(p.substring(1).trim(), LabelSelector.Operator.DoesNotExist, Set.of()));
      } else if (p.contains("!=")) {
        String key = p.substring(0, p.indexOf("!=")).trim();
        String value = p.substring(p.indexOf("!=") + 2).trim();
        checkKey(at, key);
        checkValue(at, value);
        expressions.add(new LabelSelector.Requirement(key, LabelSelector.Operator.NotIn, Set.of(value)));
      } else if (p.contains("=")) {
        int eq = p.indexOf('=');
        String key = p.substring(0, eq).trim();
        String value = p.substring(p.startsWith("==", eq) ? eq + 2 : eq + 1).trim();
        checkKey(at, key);
        checkValue(at, value);
        matchLabels.put(key, value);
      } else {
        checkKey(at, p);
        expressions.add(new LabelSelector.Requirement(p, LabelSelector.Operator.Exists, Set.of()));
      }
    }
    return new LabelSelector(matchLabels, expressions);
  }

  private static final java.util.regex.Pattern SET_REQUIREMENT =
      java.util.regex.Pattern.compile("(\\S+)\\s+(in|notin)\\s*\\(([^()]*)\\)");

  private static List<String> splitTopLevel(String text) {
    List<String> parts = new java.util.ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      } else if (c == ',' && depth == 0) {
        parts.add(text.substring(start, i));
        start = i + 1;
      }
    }
    parts.add(text.substring(start));
    return parts;
  }

  private static LabelSelector.Requirement requirement(ConfigNode node) {
    node.requireObject(Set.of("key", "operator", "values"));
    String key = node.requiredString("key");
    checkKey(node.child("key"), key);
    String operatorName = node.requiredString("operator");
    LabelSelector.Operator operator;
    try {
      operator = LabelSelector.Operator.valueOf(operatorName);
    } catch (IllegalArgumentException e) {
      throw node.child("operator")
          .error("unknown operator \"" + operatorName + "\" (one of In, NotIn, Exists, DoesNotExist)");
    }
    List<ConfigNode> valueNodes = node.list("values");
    List<String> values = valueNodes.stream().map(ConfigNode::string).toList();
    for (int i = 0; i < values.size(); i++) {
      checkValue(valueNodes.get(i), values.get(i));
    }
    boolean needsValues = operator == LabelSelector.Operator.In || operator == LabelSelector.Operator.NotIn;
    if (needsValues && values.isEmpty()) {
      throw node.child("values").error("operator " + operator + " needs at least one value");
    }
    if (!needsValues && !values.isEmpty()) {
      throw node.child("values").error("operator " + operator + " takes no values");
    }
    return new LabelSelector.Requirement(key, operator, new LinkedHashSet<>(values));
  }

  private static void checkKey(ConfigNode at, String key) {
    int slash = key.indexOf('/');
    String prefix = slash < 0 ? null : key.substring(0, slash);
    String name = slash < 0 ? key : key.substring(slash + 1);
    if ((prefix != null && !DNS_SUBDOMAIN.matcher(prefix).matches()) || !NAME.matcher(name).matches()) {
      throw at.error("invalid label key \"" + key + "\"");
    }
  }

  private static void checkValue(ConfigNode at, String value) {
    if (!VALUE.matcher(value).matches()) {
      throw at.error("invalid label value \"" + value + "\"");
    }
  }
}
