package io.podsweeper.removal;

import io.podsweeper.strategy.Decision;
import java.time.Instant;

/**
 * An eviction in background: accepted by the eviction endpoint to be carried out later (an evacuation), asked for by an
 * EvictionRequest, or a PodMigrationJob's. It keeps its reservation until it ends, and holds a place in every limits
 * window it lasts into. Its mutable parts belong to the {@link Ledger} and change only under its lock.
 */
public final class InProgress {
  enum Kind { EVACUATION, REQUEST, JOB }

  final Decision decision;
  /** The pod's controller's UID, for maxInFlightPerOwner; empty for a bare pod. */
  final String owner;
  /** Made by a node-aware strategy: judged again by its profile's protections, not a deadline. */
  final boolean balance;
  final Reservation reservation;
  final Kind kind;
  /** The limits window it holds a place in: its reservation's, or the one it was last carried into. */
  long countedIn;
  /** A job's eviction that got no answer, as sent (it may have been carried out), until the pod shows it was not. */
  Decision unanswered;
  /** When it was put in progress, for its timeout. */
  Instant since;

  InProgress(Decision decision, String owner, boolean balance, Reservation reservation, Kind kind) {
    this.decision = decision;
    this.owner = owner;
    this.balance = balance;
    this.reservation = reservation;
    this.kind = kind;
    this.countedIn = reservation.window();
  }

  public Decision decision() {
    return decision;
  }

  boolean requested() {
    return kind == Kind.REQUEST;
  }

  String what() {
    return requested() ? "EvictionRequest " + decision.uid() : "eviction in background";
  }
}
