package io.podsweeper.cli;

import io.podsweeper.strategy.Decision;
import java.util.ArrayList;
import java.util.List;

/** Decisions as an aligned text table, for people. */
final class DecisionTable {
  private static final String[] HEADER = {"NAMESPACE", "POD", "ACTION", "STRATEGY", "RULE", "REASON"};

  private DecisionTable() {}

  static String render(List<Decision> decisions) {
    List<String[]> rows = new ArrayList<>();
    rows.add(HEADER);
    for (Decision d : decisions) {
      rows.add(new String[] {d.namespace(), d.name(), d.action().wireName(), d.strategy(), d.rule(), d.reason()});
    }
    int[] widths = new int[HEADER.length];
    for (String[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    StringBuilder out = new StringBuilder();
    for (String[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        out.append(i == row.length - 1 ? row[i] : String.format("%-" + (widths[i] + 2) + "s", row[i]));
      }
      out.append('\n');
    }
    return out.toString();
  }
}
