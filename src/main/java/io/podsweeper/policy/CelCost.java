package io.podsweeper.policy;

import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.navigation.CelNavigableExpr;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Podsweeper's cost model of a CEL expression over {@link PodView} (CEL for Java has no estimator; cel-go's is not
 * ported), in units of about one evaluated node each. The same charges count before evaluation, over the bounds of
 * {@link PodView.Max} ({@link #estimate}), and during it, over the values themselves ({@link CostMeter}):
 *
 * <ul>
 *   <li>every node evaluated: 1, and {@value #READ_PER_ENTRY} per entry of a list or map it yields (CEL for Java adapts
 *       what it reads, entry by entry, twice: a pod's labels read in a loop are gone through at every turn);
 *   <li>a comprehension ({@code exists}, {@code all}, {@code exists_one}, {@code map}, {@code filter}): its body once
 *       per element, at most {@link PodMatch#MAX_ITERATIONS} elements (the runtime stops there), nested ones multiplying;
 *   <li>string work by length, {@value ValueBound#CHARACTERS_PER_UNIT} characters a unit: {@code +}, comparisons,
 *       {@code size}, {@code startsWith}, {@code endsWith}, conversions; {@code contains} the product of both
 *       lengths; {@code in} and equality on lists and maps by their entries;
 *   <li>{@code matches}: the size of the pattern's compiled program ({@link RegexSize}) times the input's length by
 *       {@value #REGEX_CHARACTERS_PER_UNIT}, as RE2 steps every instruction of the program over every character at worst.
 * </ul>
 *
 * <p>The factors are measured, not copied: with them a unit is within a few times the time of one evaluated node
 * whatever the expression spends it on (docs/benchmarks.md, "CEL match").
 */
final class CelCost {
  private CelCost() {}

  /** Units per entry of a list or map a node yields. */
  static final int READ_PER_ENTRY = 3;
  /** Characters of a {@code matches} input per unit and instruction of its program. */
  static final int REGEX_CHARACTERS_PER_UNIT = 10;

  /** What reading a value costs: {@link #READ_PER_ENTRY} per entry CEL for Java goes through ({@link ValueBound#walk()}). */
  static long read(long entries) {
    return ValueBound.times(READ_PER_ENTRY, entries);
  }

  /** The cost of calling {@code function} on operands of these sizes (target first), beyond the node's own 1. */
  static long charge(String function, List<ValueBound> operands, long regexProgram) {
    ValueBound a = operands.isEmpty() ? ValueBound.SCALAR : operands.get(0);
    ValueBound b = operands.size() < 2 ? ValueBound.SCALAR : operands.get(1);
    return switch (function) {
      case "_+_" -> switch (a.kind()) {
        case STRING -> ValueBound.add(a.weight(), b.weight());
        case LIST -> ValueBound.add(a.size(), b.size());
        default -> 0;
      };
      case "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_" -> Math.min(a.weight(), b.weight());
      case "@in" -> switch (b.kind()) {
        case LIST -> ValueBound.times(b.size(), 1 + Math.min(a.weight(), b.element().weight()));
        case MAP -> a.weight();
        default -> 0;
      };
      case "_[_]" -> a.kind() == ValueBound.Kind.MAP ? b.weight() : 0;
      case "size" -> a.kind() == ValueBound.Kind.STRING ? a.weight() : 0;
      case "contains" -> ValueBound.units(ValueBound.times(a.size(), b.size()), ValueBound.CHARACTERS_PER_UNIT);
      case "startsWith", "endsWith" -> b.weight();
      case "matches" -> ValueBound.times(regexProgram, 1 + ValueBound.units(a.size(), REGEX_CHARACTERS_PER_UNIT));
      case "string", "bytes", "int", "uint", "double", "bool", "timestamp", "duration" -> a.weight();
      default -> 0;
    };
  }

  /** Whether {@link #charge} can be more than 0 for {@code function}. */
  static boolean charged(String function) {
    return switch (function) {
      case "_+_", "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "@in", "_[_]", "size", "contains", "startsWith", "endsWith",
          "matches", "string", "bytes", "int", "uint", "double", "bool", "timestamp", "duration" -> true;
      default -> false;
    };
  }

  /** How large the result of {@code function} on these operands can be. */
  static ValueBound result(String function, List<ValueBound> operands) {
    ValueBound a = operands.isEmpty() ? ValueBound.SCALAR : operands.get(0);
    return switch (function) {
      case "_+_" -> switch (a.kind()) {
        case STRING -> ValueBound.string(ValueBound.add(a.size(), operands.get(1).size()));
        case LIST -> ValueBound.list(ValueBound.add(a.size(), operands.get(1).size()), a.element().join(operands.get(1).element()));
        default -> ValueBound.SCALAR;
      };
      case "_[_]" -> a.indexed();
      case "_?_:_" -> operands.get(1).join(operands.get(2));
      case "dyn", "bytes" -> a;
      case "string" -> a.kind() == ValueBound.Kind.STRING ? a : ValueBound.string(MAX_SCALAR_TEXT);
      default -> ValueBound.SCALAR;
    };
  }

  /** The longest text {@code string()} makes of a number, a bool, a timestamp or a duration. */
  private static final int MAX_SCALAR_TEXT = 40;

  /** A call whose cost depends on its operands' sizes: charged by the meter once its last operand is evaluated. */
  record Call(String function, long[] operands, List<ValueBound> bounds, long regexProgram) {
    long charge(Object[] values) {
      List<ValueBound> measured = new ArrayList<>(operands.length);
      for (int i = 0; i < operands.length; i++) {
        measured.add(bounds.get(i).measured(values[(int) operands[i]]));
      }
      return CelCost.charge(function, measured, regexProgram);
    }
  }

  /** What the meter needs of the checked expression, by node id: the call to charge after it, whether a call reads its value. */
  record Plan(Call[] after, boolean[] operand) {}

  /** The estimate of one expression: its cost, and its plan for the meter. */
  record Estimate(long cost, Plan plan) {}

  /**
   * A node the estimate refuses: a {@code matches} whose pattern is not a literal or compiles too large; a map's key
   * read as a field ({@code labels.app}, {@code has(labels.app)}), which CEL for Java evaluates without reporting the
   * map it reads whole, so it could not be metered (and a missing key would end it unreported).
   */
  static final class Refused extends RuntimeException {
    final long exprId;

    Refused(long exprId, String message) {
      super(message);
      this.exprId = exprId;
    }
  }

  /**
   * The estimated cost of evaluating the checked expression once, at most: every node as often as it can run, over
   * the bounds {@link PodView.Max} gives the view's fields.
   *
   * @throws Refused for a {@code matches} that cannot be bounded, a map's key read as a field
   */
  static Estimate estimate(CelExpr root, long maxRegexProgram) {
    Estimator e = new Estimator(maxId(root) + 1, maxRegexProgram);
    long cost = e.estimate(root, Map.of("pod", ValueBound.record(PodView.Pod.class), "namespaceObject", ValueBound.record(PodView.Namespace.class))).cost;
    return new Estimate(cost, new Plan(e.after, e.operand));
  }

  private static int maxId(CelExpr root) {
    return (int) CelNavigableExpr.fromExpr(root).allNodes().mapToLong(n -> n.expr().id()).max().orElse(0);
  }

  /** One pass over the checked expression, registering the meter's plan as it goes. */
  private static final class Estimator {
    private record Est(long cost, ValueBound bound) {}

    private final Call[] after;
    private final boolean[] operand;
    private final long maxRegexProgram;
    /** The list literals a comprehension appends to its accumulator, estimated before the rest of its step. */
    private final Map<Long, Est> appended = new HashMap<>();

    Estimator(int ids, long maxRegexProgram) {
      this.after = new Call[ids];
      this.operand = new boolean[ids];
      this.maxRegexProgram = maxRegexProgram;
    }

    Est estimate(CelExpr e, Map<String, ValueBound> scope) {
      Est known = appended.get(e.id());
      if (known != null) {
        return known;
      }
      return switch (e.exprKind().getKind()) {
        case CONSTANT -> new Est(1, constant(e.constant()));
        case IDENT -> {
          ValueBound b = scope.getOrDefault(e.ident().name(), ValueBound.SCALAR);
          yield new Est(ValueBound.add(1, read(b.walk())), b);
        }
        case SELECT -> select(e, scope);
        case CALL -> call(e, scope);
        case LIST -> {
          long cost = 1;
          ValueBound element = ValueBound.SCALAR;
          for (CelExpr item : e.list().elements()) {
            Est est = estimate(item, scope);
            cost = ValueBound.add(cost, est.cost);
            element = element.join(est.bound);
          }
          ValueBound b = ValueBound.list(e.list().elements().size(), element);
          yield new Est(ValueBound.add(cost, read(b.walk())), b);
        }
        case MAP -> {
          long cost = 1;
          ValueBound key = ValueBound.SCALAR;
          ValueBound value = ValueBound.SCALAR;
          for (CelExpr.CelMap.Entry entry : e.map().entries()) {
            Est k = estimate(entry.key(), scope);
            Est v = estimate(entry.value(), scope);
            cost = ValueBound.add(cost, ValueBound.add(k.cost, v.cost));
            key = key.join(k.bound);
            value = value.join(v.bound);
          }
          ValueBound b = ValueBound.map(e.map().entries().size(), key, value);
          yield new Est(ValueBound.add(cost, read(b.walk())), b);
        }
        case STRUCT -> {
          long cost = 1;
          for (CelExpr.CelStruct.Entry entry : e.struct().entries()) {
            cost = ValueBound.add(cost, estimate(entry.value(), scope).cost);
          }
          yield new Est(cost, viewRecord(e.struct().messageName()));
        }
        case COMPREHENSION -> comprehension(e, scope);
        default -> new Est(1, ValueBound.SCALAR);
      };
    }

    private static ValueBound constant(CelConstant c) {
      return switch (c.getKind()) {
        case STRING_VALUE -> ValueBound.string(c.stringValue().length());
        case BYTES_VALUE -> ValueBound.string(c.bytesValue().size());
        default -> ValueBound.SCALAR;
      };
    }

    private static ValueBound viewRecord(String name) {
      for (Class<?> type : PodView.TYPES) {
        if (type.getName().replace('$', '.').equals(name)) {
          return ValueBound.record(type);
        }
      }
      return ValueBound.SCALAR;
    }

    private Est select(CelExpr e, Map<String, ValueBound> scope) {
      CelExpr.CelSelect select = e.select();
      Est operand = estimate(select.operand(), scope);
      if (operand.bound.kind() == ValueBound.Kind.MAP) {
        throw new Refused(e.id(), "read a map's key as " + (select.testOnly() ? "'" + select.field() + "' in the map" : "map['" + select.field()
            + "']") + ", not as a field: CEL for Java reads the whole map for a field without reporting it, so its cost could not be metered");
      }
      if (select.testOnly()) {
        return new Est(ValueBound.add(operand.cost, 1), ValueBound.SCALAR);
      }
      ValueBound b = operand.bound.field(select.field());
      return new Est(ValueBound.add(operand.cost, ValueBound.add(1, read(b.walk()))), b);
    }

    private Est call(CelExpr e, Map<String, ValueBound> scope) {
      CelExpr.CelCall call = e.call();
      List<CelExpr> operands = new ArrayList<>();
      call.target().ifPresent(operands::add);
      operands.addAll(call.args());
      long cost = 1;
      List<ValueBound> bounds = new ArrayList<>(operands.size());
      for (CelExpr o : operands) {
        Est est = estimate(o, scope);
        cost = ValueBound.add(cost, est.cost);
        bounds.add(est.bound);
      }
      String function = call.function();
      long program = function.equals("matches") ? regexProgram(operands.get(operands.size() - 1)) : 0;
      if (CelCost.charged(function) && !operands.isEmpty()) {
        long[] ids = operands.stream().mapToLong(CelExpr::id).toArray();
        for (long id : ids) {
          operand[(int) id] = true;
        }
        after[(int) ids[ids.length - 1]] = new Call(function, ids, List.copyOf(bounds), program);
      }
      ValueBound result = CelCost.result(function, bounds);
      return new Est(ValueBound.add(cost, ValueBound.add(CelCost.charge(function, bounds, program), read(result.walk()))), result);
    }

    /** A {@code matches} pattern's program size; a pattern must be a literal, of a bounded program. */
    private long regexProgram(CelExpr pattern) {
      if (pattern.exprKind().getKind() != CelExpr.ExprKind.Kind.CONSTANT
          || pattern.constant().getKind() != CelConstant.Kind.STRING_VALUE) {
        throw new Refused(pattern.id(), "the pattern of matches must be a string literal: one read from a pod would be"
            + " chosen by whoever writes pods, and CEL compiles it anew at every call");
      }
      long program = RegexSize.bound(pattern.constant().stringValue());
      if (program > maxRegexProgram) {
        throw new Refused(pattern.id(), "the pattern of matches may compile to " + program + " instructions, more than "
            + maxRegexProgram + " (a counted repetition such as {100} copies what it repeats)");
      }
      return program;
    }

    private Est comprehension(CelExpr e, Map<String, ValueBound> scope) {
      CelExpr.CelComprehension c = e.comprehension();
      Est range = estimate(c.iterRange(), scope);
      boolean bounded = range.bound.kind() == ValueBound.Kind.LIST || range.bound.kind() == ValueBound.Kind.MAP;
      long iterations = bounded ? Math.min(range.bound.size(), PodMatch.MAX_ITERATIONS) : PodMatch.MAX_ITERATIONS;
      Est init = estimate(c.accuInit(), scope);
      Map<String, ValueBound> inner = new HashMap<>(scope);
      inner.put(c.iterVar(), range.bound.iterated());
      ValueBound accu = init.bound;
      if (accu.kind() == ValueBound.Kind.LIST) {
        // map and filter append a list literal that does not read the accumulator: estimated once, first.
        ValueBound element = accu.element();
        long items = 0;
        for (CelExpr literal : appendedLiterals(c.loopStep(), c.accuVar())) {
          Est est = estimate(literal, inner);
          appended.put(literal.id(), est);
          element = element.join(est.bound.element());
          items = Math.max(items, est.bound.size());
        }
        accu = ValueBound.list(ValueBound.add(accu.size(), ValueBound.times(iterations, items)), element);
      }
      inner.put(c.accuVar(), accu);
      long perIteration = ValueBound.add(estimate(c.loopCondition(), inner).cost, estimate(c.loopStep(), inner).cost);
      Map<String, ValueBound> after = new HashMap<>(scope);
      after.put(c.accuVar(), accu);
      Est result = estimate(c.result(), after);
      long cost = ValueBound.add(ValueBound.add(1, read(result.bound.walk())), ValueBound.add(range.cost, init.cost));
      cost = ValueBound.add(cost, ValueBound.add(ValueBound.times(iterations, perIteration), result.cost));
      return new Est(cost, result.bound);
    }

    /** The list literals appended to {@code accumulator} in a step ({@code accumulator + [x]}), outside nested comprehensions. */
    private static List<CelExpr> appendedLiterals(CelExpr step, String accumulator) {
      List<CelExpr> found = new ArrayList<>();
      if (step.exprKind().getKind() != CelExpr.ExprKind.Kind.CALL) {
        return found;
      }
      CelExpr.CelCall call = step.call();
      if (call.function().equals("_+_") && call.args().size() == 2
          && call.args().get(0).exprKind().getKind() == CelExpr.ExprKind.Kind.IDENT
          && call.args().get(0).ident().name().equals(accumulator)
          && call.args().get(1).exprKind().getKind() == CelExpr.ExprKind.Kind.LIST) {
        found.add(call.args().get(1));
        return found;
      }
      call.args().forEach(a -> found.addAll(appendedLiterals(a, accumulator)));
      return found;
    }
  }
}
