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
    List<String> values = node.stringList("values");
    for (int i = 0; i < values.size(); i++) {
      checkValue(node.child("values"), values.get(i));
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
