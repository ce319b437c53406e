package io.podsweeper.policy;

import dev.cel.bundle.Cel;
import dev.cel.bundle.CelFactory;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelIssue;
import dev.cel.common.CelOptions;
import dev.cel.common.CelSourceLocation;
import dev.cel.common.CelValidationException;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.StructTypeReference;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import java.util.Map;
import java.util.Optional;

/**
 * A rule's {@code match}: a CEL expression over {@link PodView} ({@code pod}, and {@code namespaceObject} as in
 * ValidatingAdmissionPolicy, {@code namespace} being reserved in CEL) that must be true for the rule to select a pod.
 * Compiled once, when the policy is read: a syntax or type error (an unknown field, a string compared with a number, a
 * result that is not a bool) is an error naming the rule and the column. Evaluated by the CEL library (dev.cel),
 * never by hand.
 *
 * <p>Its cost is bounded twice, in the units of {@link CelCost}. During evaluation: every evaluation, whoever wrote
 * the expression, is metered ({@link CostMeter}) and stopped past {@value #MAX_COST}, and capped at
 * {@value #MAX_ITERATIONS} comprehension iterations; a stopped evaluation is an error, which selects nothing. Before:
 * {@link #cost} is the most one evaluation can cost over the largest pod the API server accepts ({@link PodView.Max});
 * a PodCleanupPolicy's expression may cost at most {@value #MAX_NAMESPACED_COST} there, which admits a few passes over
 * a pod's lists and refuses passes within passes and regular expressions over unbounded strings in a loop. A
 * {@code matches} pattern, in any policy, must be a literal that compiles to at most {@value #MAX_REGEX_PROGRAM}
 * instructions.
 */
public final class PodMatch {
  /**
   * The most one evaluation may cost, a few tens of milliseconds of a core (docs/benchmarks.md): any expression is
   * stopped there. An ordinary pod is far from it: one pass over a thousand labels costs about 13,000.
   */
  public static final long MAX_COST = 200_000;
  /**
   * The most a PodCleanupPolicy's expression may be estimated to cost over the largest pod the API server accepts: a
   * few passes over its lists (one over its 393,216 labels estimates about 1,300,000 there), not passes within passes
   * nor a regular expression over a 3 MiB string in a loop.
   */
  public static final long MAX_NAMESPACED_COST = 10_000_000;
  /** The most instructions a {@code matches} pattern may compile to ({@link RegexSize}). */
  public static final long MAX_REGEX_PROGRAM = 1000;
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
  private final CelCost.Estimate estimate;

  private PodMatch(String source, CelRuntime.Program program, CelCost.Estimate estimate) {
    this.source = source;
    this.program = program;
    this.estimate = estimate;
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
    CelAbstractSyntaxTree ast;
    try {
      ast = CEL.compile(source).getAst();
    } catch (CelValidationException e) {
      CelIssue issue = e.getErrors().get(0);
      throw error(node, rule, issue.getSourceLocation(), issue.getMessage());
    }
    CelCost.Estimate estimate;
    try {
      estimate = CelCost.estimate(ast.getExpr(), MAX_REGEX_PROGRAM);
    } catch (CelCost.Refused e) {
      throw error(node, rule, Optional.ofNullable(ast.getSource().getPositionsMap().get(e.exprId))
          .flatMap(offset -> ast.getSource().getOffsetLocation(offset)).orElse(CelSourceLocation.NONE), e.getMessage());
    }
    try {
      return new PodMatch(source, CEL.createProgram(ast), estimate);
    } catch (dev.cel.common.CelException e) {
      throw node.error(e.getMessage());
    }
  }

  private static PolicyException error(ConfigNode node, String rule, CelSourceLocation at, String message) {
    return node.error("rule " + rule + ", line " + at.getLine() + ", column " + (at.getColumn() + 1) + ": " + message);
  }

  /**
   * The expression's value for a pod: true, false, or an error (a missing map key, too many iterations, a cost over
   * the limit), which selects nothing.
   *
   * @param error why it has no value, e.g. "key 'app' is not present in map"
   * @param cost what the evaluation cost, in {@link CelCost}'s units
   */
  public record Result(boolean matches, Optional<String> error, long cost) {
    @Override
    public String toString() {
      return error.map(e -> "error: " + e).orElse(String.valueOf(matches));
    }
  }

  /** The expression on a pod, metered: an evaluation past {@value #MAX_COST} is stopped there, an error. */
  public Result evaluate(PodView.Pod pod, PodView.Namespace namespace) {
    CostMeter meter = new CostMeter(estimate.plan(), MAX_COST);
    try {
      boolean matches = (Boolean) program.trace(Map.of("pod", pod, "namespaceObject", namespace), meter);
      return new Result(matches, Optional.empty(), meter.spent());
    } catch (CelEvaluationException e) {
      return new Result(false, Optional.of(meter.stopped().orElse(e.getMessage())), meter.spent());
    }
  }

  public String source() {
    return source;
  }

  /** The most one evaluation can cost, over any pod the API server accepts (see the class comment). */
  public long cost() {
    return estimate.cost();
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
