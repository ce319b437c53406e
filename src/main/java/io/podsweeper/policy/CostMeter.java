package io.podsweeper.policy;

import dev.cel.common.ast.CelExpr;
import dev.cel.runtime.CelEvaluationListener;
import java.util.Optional;

/**
 * One evaluation's cost, counted by {@link CelCost}'s charges as CEL for Java reports each node it evaluated, and
 * its stop: past the limit the report throws, so the evaluation ends with an error within one node of it. A call
 * whose cost grows with its operands (a {@code matches} over a long string) is charged when its last operand is
 * reported, before it runs, and not run if that would pass the limit. Once stopped, every later report throws too,
 * so that an operator that forgives an error ({@code ||}, {@code &&}) cannot go on.
 */
final class CostMeter implements CelEvaluationListener {
  /** Thrown from the listener to end the evaluation; CEL reports it as the evaluation's error. */
  static final class OverLimit extends RuntimeException {
    OverLimit(String message) {
      super(message, null, false, false);
    }
  }

  private final CelCost.Plan plan;
  private final long limit;
  private final Object[] values;
  private long spent;
  private String stop;

  CostMeter(CelCost.Plan plan, long limit) {
    this.plan = plan;
    this.limit = limit;
    this.values = new Object[plan.after().length];
  }

  @Override
  public void callback(CelExpr expr, Object value) {
    if (stop != null) {
      throw new OverLimit(stop);
    }
    spent = ValueBound.add(spent, ValueBound.add(1, CelCost.read(ValueBound.walk(value))));
    int id = (int) expr.id();
    CelCost.Call call = id >= 0 && id < values.length ? plan.after()[id] : null;
    if (id >= 0 && id < values.length && plan.operand()[id]) {
      values[id] = value;
    }
    if (call != null) {
      long charge = call.charge(values);
      if (ValueBound.add(spent, charge) > limit) {
        throw stop("stopped before " + call.function() + ", which would cost " + charge + " more than the " + spent + " spent: the limit is "
            + limit + " per evaluation");
      }
      spent += charge;
    }
    if (spent > limit) {
      throw stop("stopped: cost " + spent + " is over the limit " + limit + " per evaluation");
    }
  }

  private OverLimit stop(String why) {
    stop = why;
    return new OverLimit(why);
  }

  /** What the evaluation has cost so far: the nodes it evaluated, not a call it was stopped before. */
  long spent() {
    return spent;
  }

  /** Why the meter stopped the evaluation; empty while it has not. */
  Optional<String> stopped() {
    return Optional.ofNullable(stop);
  }
}
