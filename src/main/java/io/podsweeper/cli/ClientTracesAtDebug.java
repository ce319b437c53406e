package io.podsweeper.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import java.util.Arrays;
import org.slf4j.Marker;

/**
 * The Kubernetes client logs a failed list or watch with its whole stack trace (40 frames and a Status dump); here it
 * becomes one line naming the root cause, and the trace is kept for a logger set to DEBUG. An informer whose first list
 * fails is not logged by the client at all: every caller of an informer's start waits for it and says once what failed
 * and what happens now (the command names the verb, the resource and what to apply, {@link CommandFailure}; optional
 * APIs say what applies until they can be listed), where the client would add a line per informer. Installed by
 * {@link Logging}.
 */
public final class ClientTracesAtDebug extends TurboFilter {
  private static final String CLIENT = "io.fabric8.kubernetes.client";
  private static final int MAX_CAUSE = 300;
  /** fabric8's Reflector, when the first list of an informer fails: the informer does not start. */
  private static final String START_FAILED = "{} failed for {}, will stop";

  @Override
  public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
    // SLF4J passes log.warn("... {}", arg, e)'s exception as the last argument, not as t.
    boolean lastIsThrown = t == null && params != null && params.length > 0 && params[params.length - 1] instanceof Throwable;
    Throwable thrown = lastIsThrown ? (Throwable) params[params.length - 1] : t;
    if (thrown == null || level == null || format == null || !logger.getName().startsWith(CLIENT) || logger.isDebugEnabled()
        || !logger.isEnabledFor(level)) {
      return FilterReply.NEUTRAL;
    }
    Throwable root = thrown;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    if (format.equals(START_FAILED)) {
      return FilterReply.DENY;
    }
    String cause = root.toString();
    String line = format + " (" + (cause.length() > MAX_CAUSE ? cause.substring(0, MAX_CAUSE) + "…" : cause) + ")";
    Object[] args = lastIsThrown ? Arrays.copyOf(params, params.length - 1) : params;
    // Logged again without the throwable, which this filter lets through.
    logger.log(marker, Logger.class.getName(), Level.toLocationAwareLoggerInteger(level), line, args, null);
    return FilterReply.DENY;
  }
}
