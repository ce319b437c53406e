package io.podsweeper.cli;

import io.podsweeper.strategy.Decision;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** Decisions as an aligned text table, for people. */
final class DecisionTable {
  private record Column(String header, Function<Decision, String> value) {}

  private static final List<Column> DECISION = List.of(
      new Column("NAMESPACE", Decision::namespace),
      new Column("POD", Decision::name),
      new Column("ACTION", d -> d.action().wireName()),
      new Column("STRATEGY", Decision::strategy),
      new Column("RULE", Decision::rule),
      new Column("REASON", Decision::reason));

  private DecisionTable() {}

  static String render(List<Decision> decisions) {
    return render(DECISION, decisions);
  }

  /** A forecast's removals: the same columns after when each is due. */
  static String renderWithDueAt(List<Decision> removals) {
    List<Column> columns = new ArrayList<>();
    columns.add(new Column("DUE AT", d -> d.dueAt().toString()));
    columns.addAll(DECISION);
    return render(columns, removals);
  }

  private static String render(List<Column> columns, List<Decision> decisions) {
    List<String[]> rows = new ArrayList<>();
    rows.add(columns.stream().map(Column::header).toArray(String[]::new));
    for (Decision d : decisions) {
      rows.add(columns.stream().map(c -> c.value().apply(d)).toArray(String[]::new));
    }
    int[] widths = new int[columns.size()];
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
