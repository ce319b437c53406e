package io.podsweeper.strategy;

import java.util.List;
import java.util.Optional;

/**
 * What one pass decided. {@code skipped} says why the node-aware strategies did not run at all (fewer than two
 * Ready nodes, as upstream skips its cycle); {@code notes} say why a strategy that ran decided nothing (e.g. "no
 * node is underutilized"), for logs and {@code plan}; {@code faults} name each pod (or strategy) whose judging threw:
 * left alone, it stopped neither the pass nor another pod. {@code plans} are MakeRoom's: moves to be carried out one
 * step at a time, never decisions of the pass.
 */
public record PassResult(List<Decision> decisions, Optional<String> skipped, List<String> notes, List<String> faults,
    List<RoomPlan> plans) {
  public PassResult {
    decisions = List.copyOf(decisions);
    notes = List.copyOf(notes);
    faults = List.copyOf(faults);
    plans = List.copyOf(plans);
  }
}
