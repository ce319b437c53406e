package io.podsweeper.safety;

import io.podsweeper.policy.Limits;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Counts removals against the policy's caps (in all, per node, per namespace) within one window; the engine starts
 * a new window with every full pass. Checked in the upstream descheduler's order: total, node, namespace.
 *
 * <p>Not thread-safe: its owner locks it (the removal ledger; a balance pass has one of its own).
 */
public final class RemovalBudget {
  public static final String TOTAL_REACHED = "maximum number of evicted pods per a descheduling cycle reached";
  public static final String NODE_REACHED = "maximum number of evicted pods per node reached";
  public static final String NAMESPACE_REACHED = "maximum number of evicted pods per namespace reached";
  /** Every cap's message, as upstream words them. */
  public static final java.util.List<String> CAPS = java.util.List.of(TOTAL_REACHED, NODE_REACHED, NAMESPACE_REACHED);

  private Limits limits;
  private final Map<String, Integer> perNode = new HashMap<>();
  private final Map<String, Integer> perNamespace = new HashMap<>();
  private int total;
  /** The removals refused since the last reset, by the cap that refused them. */
  private final Map<String, Integer> heldBack = new java.util.TreeMap<>();

  public RemovalBudget(Limits limits) {
    this.limits = limits;
  }

  /** Takes one removal from the budget, or says which cap is reached (and takes nothing). */
  public Optional<String> take(Removal decision) {
    Optional<String> cap = reached(decision);
    cap.ifPresentOrElse(c -> heldBack.merge(c, 1, Integer::sum), () -> carry(decision));
    return cap;
  }

  private Optional<String> reached(Removal decision) {
    if (reached(limits.maxTotal(), total)) {
      return Optional.of(TOTAL_REACHED);
    }
    if (!decision.node().isEmpty() && reached(limits.maxPerNode(), perNode.getOrDefault(decision.node(), 0))) {
      return Optional.of(NODE_REACHED);
    }
    if (reached(limits.maxPerNamespace(), perNamespace.getOrDefault(decision.namespace(), 0))) {
      return Optional.of(NAMESPACE_REACHED);
    }
    return Optional.empty();
  }

  /** The removals {@link #take} refused since the last {@link #reset}, by the cap that refused them (its message). */
  public Map<String, Integer> heldBack() {
    return Map.copyOf(heldBack);
  }

  /**
   * Counts, without a check, an eviction still in progress from an earlier window: it holds its place in every
   * window until it ends, as upstream counts its evictions in background every cycle.
   */
  public void carry(Removal decision) {
    total++;
    if (!decision.node().isEmpty()) {
      perNode.merge(decision.node(), 1, Integer::sum);
    }
    perNamespace.merge(decision.namespace(), 1, Integer::sum);
  }

  /** Gives back a removal that was taken but not carried out (the request failed or was refused). */
  public void giveBack(Removal decision) {
    total = Math.max(0, total - 1);
    if (!decision.node().isEmpty()) {
      perNode.computeIfPresent(decision.node(), (k, v) -> v > 1 ? v - 1 : null);
    }
    perNamespace.computeIfPresent(decision.namespace(), (k, v) -> v > 1 ? v - 1 : null);
  }

  /**
   * New caps over the same window's counts: a reload must not open the caps again. In place, not a copy, so a removal
   * taken or given back by another thread while the policy changes is counted in the window that stays in force.
   */
  public void setLimits(Limits newLimits) {
    limits = newLimits;
  }

  public void reset() {
    total = 0;
    perNode.clear();
    perNamespace.clear();
    heldBack.clear();
  }

  private static boolean reached(OptionalInt limit, int used) {
    return limit.isPresent() && used >= limit.getAsInt();
  }
}
