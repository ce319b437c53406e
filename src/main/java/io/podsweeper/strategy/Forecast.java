package io.podsweeper.strategy;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.podsweeper.policy.Durations;
import io.podsweeper.policy.PolicyException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * What the pod-by-pod strategies and the finished-pod budgets will remove between {@code now} and {@code now + within}
 * if the pods stay as they are, sorted by when ({@link PolicyEvaluator#forecast}); pods already due are in it with a
 * {@code dueAt} in the past (a budget's: {@code now}). {@code plans} are MakeRoom's plans as a pass would make them now:
 * moves carried out one step at a time.
 */
public record Forecast(Instant now, Duration within, boolean dryRun, List<Decision> removals, List<String> faults,
    List<RoomPlan> plans) {
  /** A forecast further out would mostly be about pods that will have changed by then. */
  public static final Duration MAX_WITHIN = Duration.ofDays(30);

  public static final String NOTE = "pod-by-pod rules only, and the finished-pod budgets, for the pods as they are now (a pod that"
      + " finishes later is not foreseen): node-aware strategies decide per pass and are not forecast (MakeRoom's plans are, as a"
      + " pass would make them now); limits, the blast-radius guard"
      + " and the rate may delay a removal; a pod that changes is judged again";

  public Forecast {
    removals = List.copyOf(removals);
    faults = List.copyOf(faults);
    plans = List.copyOf(plans);
  }

  /** A forecast's horizon as given ({@code place} names the flag or parameter): a Go-style duration up to 30d. */
  public static Duration within(String place, String text) {
    Duration within = Durations.parse(text)
        .orElseThrow(() -> new PolicyException(place, "not a duration such as 90m, 6h or 7d: \"" + text + "\""));
    if (within.compareTo(MAX_WITHIN) > 0) {
      throw new PolicyException(place, Durations.format(within) + " is longer than " + Durations.format(MAX_WITHIN));
    }
    return within;
  }

  public Instant until() {
    return now.plus(within);
  }

  /** The one JSON shape of a forecast, for {@code plan --output json} and the HTTP API; each removal as a decision. */
  public ObjectNode writeTo(ObjectNode o) {
    o.put("now", now.toString())
        .put("within", Durations.format(within))
        .put("until", until().toString())
        .put("dryRun", dryRun)
        .put("note", NOTE);
    ArrayNode array = o.putArray("removals");
    removals.forEach(d -> d.writeTo(array.addObject()));
    if (!faults.isEmpty()) {
      ArrayNode failed = o.putArray("faults");
      faults.forEach(failed::add);
    }
    ArrayNode planned = o.putArray("plans");
    plans.forEach(p -> p.writeTo(planned.addObject()));
    return o;
  }
}
