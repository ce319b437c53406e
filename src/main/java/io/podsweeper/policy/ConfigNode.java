package io.podsweeper.policy;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.Function;

/**
 * A node of a parsed YAML/JSON document together with its path ({@code rules[2].states[0]}), so every reading
 * and validation error names the exact place. Readers are strict: wrong types are errors, never coerced.
 */
public final class ConfigNode {
  private final JsonNode node;
  private final String path;
  /** Paths of fields that came from elsewhere in the document (see {@link #assembled}). */
  private final Map<String, String> fieldPaths;

  public ConfigNode(JsonNode node, String path) {
    this(node, path, Map.of());
  }

  private ConfigNode(JsonNode node, String path, Map<String, String> fieldPaths) {
    this.node = node;
    this.path = path;
    this.fieldPaths = fieldPaths;
  }

  /**
   * An object a format conversion assembled from several places of a document: each field named in
   * {@code fieldPaths} keeps the path it was written at, so errors point into the file the user wrote.
   */
  static ConfigNode assembled(JsonNode node, String path, Map<String, String> fieldPaths) {
    return new ConfigNode(node, path, Map.copyOf(fieldPaths));
  }

  public String path() {
    return path;
  }

  /** The underlying node, for formats that rearrange a document before reading it. */
  public JsonNode raw() {
    return node;
  }

  /** A copy of this object node (empty if absent), to rearrange. */
  public com.fasterxml.jackson.databind.node.ObjectNode objectCopy() {
    if (node == null || node.isNull()) {
      return com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
    }
    if (!node.isObject()) {
      throw error("must be an object, got " + describe());
    }
    return ((com.fasterxml.jackson.databind.node.ObjectNode) node).deepCopy();
  }

  /** This object without {@code fields}, every other field keeping its path; anything else as it is. */
  ConfigNode without(Set<String> fields) {
    if (node == null || !node.isObject()) {
      return this;
    }
    return new ConfigNode(((com.fasterxml.jackson.databind.node.ObjectNode) node).deepCopy().remove(fields), path, fieldPaths);
  }

  /** The field names of this object node, in document order. */
  public List<String> fieldNames() {
    if (node == null || !node.isObject()) {
      throw error("must be an object, got " + describe());
    }
    List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }

  public PolicyException error(String message) {
    return new PolicyException(path, message);
  }

  public boolean has(String field) {
    if (node == null || !node.isObject()) {
      return false;
    }
    JsonNode value = node.get(field);
    return value != null && !value.isNull();
  }

  public ConfigNode child(String field) {
    String at = fieldPaths.get(field);
    return new ConfigNode(node == null ? null : node.get(field), at != null ? at : path.isEmpty() ? field : path + "." + field);
  }

  /** Fails on any field not in {@code known}, naming it: a misspelt field must not be silently ignored. */
  public ConfigNode requireObject(Set<String> known) {
    if (node == null || !node.isObject()) {
      throw error("must be an object, got " + describe());
    }
    Iterator<String> names = node.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      if (!known.contains(name)) {
        throw child(name).error("unknown field (known: " + String.join(", ", known.stream().sorted().toList()) + ")");
      }
    }
    return this;
  }

  /** Like {@link #requireObject}, but a missing node (no args given) is fine and reads as empty. */
  public ConfigNode requireObjectOrAbsent(Set<String> known) {
    if (node == null || node.isNull() || node.isMissingNode()) {
      return this;
    }
    return requireObject(known);
  }

  /** This node as a whole number in [min, max]. */
  public int intValue(int min, int max) {
    if (node == null || !node.isIntegralNumber() || !node.canConvertToLong()) {
      throw error("must be a whole number, got " + describe());
    }
    long value = node.longValue();
    if (value < min || value > max) {
      throw error("must be between " + min + " and " + max + ", got " + value);
    }
    return (int) value;
  }

  public String string() {
    if (node == null || !node.isTextual()) {
      throw error("must be a string, got " + describe());
    }
    return node.asText();
  }

  public Optional<String> optionalString(String field) {
    return has(field) ? Optional.of(child(field).string()) : Optional.empty();
  }

  public String requiredString(String field) {
    if (!has(field)) {
      throw child(field).error("is required");
    }
    String value = child(field).string();
    if (value.isBlank()) {
      throw child(field).error("must not be empty");
    }
    return value;
  }

  public boolean bool(String field, boolean fallback) {
    if (!has(field)) {
      return fallback;
    }
    ConfigNode c = child(field);
    if (!c.node.isBoolean()) {
      throw c.error("must be true or false, got " + c.describe());
    }
    return c.node.booleanValue();
  }

  /** A whole number in [min, max]; huge or fractional numbers are errors, not silently truncated. */
  public OptionalInt optionalInt(String field, int min, int max) {
    java.util.OptionalLong value = optionalLong(field, min, max);
    return value.isPresent() ? OptionalInt.of((int) value.getAsLong()) : OptionalInt.empty();
  }

  /** A whole number in [min, max] as a long (seconds, thresholds). */
  public java.util.OptionalLong optionalLong(String field, long min, long max) {
    if (!has(field)) {
      return java.util.OptionalLong.empty();
    }
    ConfigNode c = child(field);
    if (!c.node.isIntegralNumber() || !c.node.canConvertToLong()) {
      throw c.error("must be a whole number, got " + c.describe());
    }
    long value = c.node.longValue();
    if (value < min || value > max) {
      throw c.error("must be between " + min + " and " + max + ", got " + value);
    }
    return java.util.OptionalLong.of(value);
  }

  public Optional<Double> optionalNumber(String field, double minExclusive, double max) {
    return optionalNumber(field, v -> v > minExclusive && v <= max, "greater than " + minExclusive + " and at most " + max);
  }

  /** A number within [min, max], both inclusive. */
  public Optional<Double> optionalNumberBetween(String field, double min, double max) {
    return optionalNumber(field, v -> v >= min && v <= max, "between " + min + " and " + max);
  }

  private Optional<Double> optionalNumber(String field, java.util.function.DoublePredicate valid, String range) {
    if (!has(field)) {
      return Optional.empty();
    }
    ConfigNode c = child(field);
    if (!c.node.isNumber()) {
      throw c.error("must be a number, got " + c.describe());
    }
    double value = c.node.doubleValue();
    if (!valid.test(value)) {
      throw c.error("must be " + range + ", got " + c.node.asText());
    }
    return Optional.of(value);
  }

  /** A positive Go-style duration such as {@code 90s}, {@code 1h30m} or {@code 7d}. */
  public Optional<Duration> optionalDuration(String field) {
    if (!has(field)) {
      return Optional.empty();
    }
    ConfigNode c = child(field);
    String text = c.string();
    return Optional.of(
        Durations.parse(text)
            .orElseThrow(() -> c.error("invalid duration \"" + text + "\" (a positive duration such as 90s, 1h30m or 7d)")));
  }

  /**
   * A duration where upstream has a {@code metav1.Duration}: Go's syntax ({@code 0s}, {@code 1.5h}, {@code 1h30m},
   * {@code 250ms}), not negative; and, so that a file this reader accepted before still loads, the native syntax too
   * ({@code 7d}), which upstream refuses.
   */
  public Optional<Duration> optionalGoDuration(String field) {
    if (!has(field)) {
      return Optional.empty();
    }
    ConfigNode c = child(field);
    String text = c.string();
    return Optional.of(Durations.parseGo(text).or(() -> Durations.parse(text)).filter(d -> !d.isNegative())
        .orElseThrow(() -> c.error("invalid duration \"" + text
            + "\" (a Go duration that is not negative, such as 0s, 90s, 1.5h or 1h30m; units ns, us, ms, s, m, h)")));
  }

  public List<ConfigNode> list(String field) {
    if (!has(field)) {
      return List.of();
    }
    ConfigNode c = child(field);
    if (c.node == null || !c.node.isArray()) {
      throw c.error("must be a list, got " + c.describe());
    }
    List<ConfigNode> items = new ArrayList<>();
    for (int i = 0; i < c.node.size(); i++) {
      items.add(new ConfigNode(c.node.get(i), c.path + "[" + i + "]"));
    }
    return items;
  }

  public List<String> stringList(String field) {
    return list(field).stream().map(ConfigNode::string).toList();
  }

  public <T> List<T> mapList(String field, Function<ConfigNode, T> reader) {
    return list(field).stream().map(reader).toList();
  }

  /** A map of string keys to string values (labels, matchLabels). */
  public Map<String, String> stringMap(String field) {
    if (!has(field)) {
      return Map.of();
    }
    ConfigNode c = child(field);
    if (!c.node.isObject()) {
      throw c.error("must be a map of strings, got " + c.describe());
    }
    Map<String, String> out = new LinkedHashMap<>();
    c.node.fields().forEachRemaining(e -> out.put(e.getKey(), c.child(e.getKey()).string()));
    return out;
  }

  private String describe() {
    if (node == null || node.isNull()) {
      return "nothing";
    }
    if (node.isTextual()) {
      return "\"" + node.asText() + "\"";
    }
    if (node.isObject()) {
      return "an object";
    }
    if (node.isArray()) {
      return "a list";
    }
    return node.toString();
  }
}
