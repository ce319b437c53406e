package io.podsweeper.policy;

import dev.cel.bundle.Cel;
import dev.cel.bundle.CelFactory;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelIssue;
import dev.cel.common.CelOptions;
import dev.cel.common.CelValidationException;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.StructTypeReference;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import java.util.Map;
import java.util.Optional;

/**
 * A rule's {@code match}: a CEL expression over {@link PodView} ({@code pod}, and {@code namespaceObject} as in
 * ValidatingAdmissionPolicy, {@code namespace} being reserved in CEL) that must be true for the rule to select a pod. Compiled once, when the policy is read: a syntax or type error (an unknown field, a
 * string compared with a number, a result that is not a bool) is an error naming the rule and the column. Evaluated
 * by the CEL library (dev.cel), never by hand.
 *
 * <p>CEL for Java has no cost estimator (cel-go's is not ported), so {@link #cost} is Podsweeper's own bound over the
 * checked expression: one per node, a comprehension's (exists, all, map, filter) per-element part times
 * {@value #LIST_BOUND} elements, nested comprehensions multiplying. Namespaced policies are held under a limit of it;
 * every evaluation is also capped at {@value #MAX_ITERATIONS} comprehension iterations by the runtime.
 */
public final class PodMatch {
  /** What the estimate assumes a pod's lists (containers, statuses, conditions, owners, labels) hold at most. */
  public static final long LIST_BOUND = 32;
  /** The most cost a PodCleanupPolicy's expression may have: one pass over a list with a body of ~300 nodes. */
  public static final long MAX_NAMESPACED_COST = 10_000;
  static final int MAX_ITERATIONS = 10_000;
  static final int MAX_LENGTH = 2048;

  private static final Cel CEL = CelFactory.plannerCelBuilder()
      .setOptions(CelOptions.current().enableHeterogeneousNumericComparisons(true).comprehensionMaxIterations(MAX_ITERATIONS).maxExpressionCodePointSize(MAX_LENGTH).build())
      .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
      .addCompilerLibraries(CelExtensions.nativeTypes(PodView.TYPES))
      .addRuntimeLibraries(CelExtensions.nativeTypes(PodView.TYPES))
      .addVar("pod", type(PodView.Pod.class))
      .addVar("namespaceObject", type(PodView.Namespace.class))
      .setResultType(SimpleType.BOOL)
      .build();

  private final String source;
  private final CelRuntime.Program program;
  private final long cost;

  private PodMatch(String source, CelRuntime.Program program, long cost) {
    this.source = source;
    this.program = program;
    this.cost = cost;
  }

  private static StructTypeReference type(Class<?> c) {
    return StructTypeReference.create(c.getName().replace('$', '.'));
  }

  /** Compiles {@code node}'s string, rule {@code rule}'s; a problem is an error at {@code node} naming the rule and the column. */
  static PodMatch compile(ConfigNode node, String rule) {
    String source = node.string();
    if (source.isBlank()) {
      throw node.error("an empty expression; leave match out to select every pod");
    }
    if (source.length() > MAX_LENGTH) {
      throw node.error("longer than " + MAX_LENGTH + " characters");
    }
    try {
      CelAbstractSyntaxTree ast = CEL.compile(source).getAst();
      return new PodMatch(source, CEL.createProgram(ast), cost(ast.getExpr()));
    } catch (CelValidationException e) {
      CelIssue issue = e.getErrors().get(0);
      throw node.error("rule " + rule + ", line " + issue.getSourceLocation().getLine() + ", column " + (issue.getSourceLocation().getColumn() + 1)
          + ": " + issue.getMessage());
    } catch (dev.cel.common.CelException e) {
      throw node.error(e.getMessage());
    }
  }

  /** Where the estimate stops counting: far past any limit, and far from overflowing as sums of it add up. */
  private static final long COST_CAP = 1L << 40;

  private static long cost(CelExpr e) {
    return Math.min(COST_CAP, uncappedCost(e));
  }

  private static long uncappedCost(CelExpr e) {
    return switch (e.exprKind().getKind()) {
      case SELECT -> 1 + cost(e.select().operand());
      case CALL -> 1 + e.call().target().map(PodMatch::cost).orElse(0L) + e.call().args().stream().mapToLong(PodMatch::cost).sum();
      case LIST -> 1 + e.list().elements().stream().mapToLong(PodMatch::cost).sum();
      case MAP -> 1 + e.map().entries().stream().mapToLong(m -> cost(m.key()) + cost(m.value())).sum();
      case STRUCT -> 1 + e.struct().entries().stream().mapToLong(f -> cost(f.value())).sum();
      case COMPREHENSION -> {
        CelExpr.CelComprehension c = e.comprehension();
        long perElement = cost(c.loopCondition()) + cost(c.loopStep());
        yield 1 + cost(c.iterRange()) + cost(c.accuInit()) + cost(c.result()) + perElement * LIST_BOUND;
      }
      default -> 1;
    };
  }

  /**
   * The expression's value for a pod: true, false, or an error (a missing map key, too many iterations), which
   * selects nothing.
   *
   * @param error why it has no value, e.g. "key 'app' is not present in map"
   */
  public record Result(boolean matches, Optional<String> error) {
    @Override
    public String toString() {
      return error.map(e -> "error: " + e).orElse(String.valueOf(matches));
    }
  }

  public Result evaluate(PodView.Pod pod, PodView.Namespace namespace) {
    try {
      return new Result((Boolean) program.eval(Map.of("pod", pod, "namespaceObject", namespace)), Optional.empty());
    } catch (CelEvaluationException e) {
      return new Result(false, Optional.of(e.getMessage()));
    }
  }

  public String source() {
    return source;
  }

  /** The estimated cost of one evaluation (see the class comment). */
  public long cost() {
    return cost;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PodMatch m && m.source.equals(source);
  }

  @Override
  public int hashCode() {
    return source.hashCode();
  }

  @Override
  public String toString() {
    return source;
  }
}
