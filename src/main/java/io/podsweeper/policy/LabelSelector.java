package io.podsweeper.policy;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** A Kubernetes label selector (matchLabels and matchExpressions, ANDed); the empty selector matches everything. */
public record LabelSelector(Map<String, String> matchLabels, List<Requirement> matchExpressions) {
  public static final LabelSelector EVERYTHING = new LabelSelector(Map.of(), List.of());

  public LabelSelector {
    matchLabels = Map.copyOf(matchLabels);
    matchExpressions = List.copyOf(matchExpressions);
  }

  public enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist
  }

  public record Requirement(String key, Operator operator, Set<String> values) {
    public Requirement {
      values = Set.copyOf(values);
    }

    boolean matches(Map<String, String> labels) {
      String value = labels.get(key);
      return switch (operator) {
        case In -> value != null && values.contains(value);
        case NotIn -> value == null || !values.contains(value);
        case Exists -> value != null;
        case DoesNotExist -> value == null;
      };
    }
  }

  /**
   * The selector in the string syntax of {@code kubectl -l} and upstream's nodeSelector fields, labels sorted: what
   * policies are written with and what reasons show.
   */
  public String text() {
    Stream<String> labels = new TreeMap<>(matchLabels).entrySet().stream().map(e -> e.getKey() + "=" + e.getValue());
    Stream<String> expressions = matchExpressions.stream().map(r -> switch (r.operator()) {
      case In -> r.key() + " in (" + String.join(",", new TreeSet<>(r.values())) + ")";
      case NotIn -> r.key() + " notin (" + String.join(",", new TreeSet<>(r.values())) + ")";
      case Exists -> r.key();
      case DoesNotExist -> "!" + r.key();
    });
    return Stream.concat(labels, expressions).collect(Collectors.joining(","));
  }

  public boolean isEmpty() {
    return matchLabels.isEmpty() && matchExpressions.isEmpty();
  }

  /** Plain loops: this runs for every rule and every pod of a full pass. */
  public boolean matches(Map<String, String> labels) {
    for (Map.Entry<String, String> e : matchLabels.entrySet()) {
      if (!e.getValue().equals(labels.get(e.getKey()))) {
        return false;
      }
    }
    for (Requirement r : matchExpressions) {
      if (!r.matches(labels)) {
        return false;
      }
    }
    return true;
  }
}
