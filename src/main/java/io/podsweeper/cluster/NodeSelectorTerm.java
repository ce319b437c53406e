package io.podsweeper.cluster;

import java.util.List;
import java.util.Map;

/**
 * One term of a pod's required node affinity: all its requirements must hold on the node's labels (terms are
 * ORed). Operators In, NotIn, Exists, DoesNotExist, Gt, Lt, as in the API.
 */
public record NodeSelectorTerm(List<Requirement> requirements) {
  public record Requirement(String key, String operator, List<String> values) {
    boolean matches(Map<String, String> labels) {
      String v = labels.get(key);
      return switch (operator) {
        case "In" -> v != null && values.contains(v);
        case "NotIn" -> v == null || !values.contains(v);
        case "Exists" -> v != null;
        case "DoesNotExist" -> v == null;
        case "Gt", "Lt" -> v != null && compare(v, operator);
        default -> false;
      };
    }

    private boolean compare(String v, String op) {
      try {
        long have = Long.parseLong(v);
        long want = Long.parseLong(values.get(0));
        return op.equals("Gt") ? have > want : have < want;
      } catch (NumberFormatException | IndexOutOfBoundsException e) {
        return false;
      }
    }
  }

  public NodeSelectorTerm {
    requirements = List.copyOf(requirements);
  }

  public boolean matches(Map<String, String> labels) {
    return requirements.stream().allMatch(r -> r.matches(labels));
  }
}
