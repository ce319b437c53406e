package io.podsweeper.engine;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every decision and its outcome as one JSON line (time, pod, UID, node, owner, strategy, rule, policy source,
 * reason, action, result, message, dry-run), appended to a file or written to stdout, for shipping to a log store.
 */
public final class AuditLog implements OutcomeListener, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AuditLog.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final PrintStream out;
  private final boolean ownsStream;

  private AuditLog(PrintStream out, boolean ownsStream) {
    this.out = out;
    this.ownsStream = ownsStream;
  }

  /** {@code -} for stdout, else a file appended to (created if missing). */
  public static AuditLog open(String target) throws IOException {
    if (target.equals("-")) {
      return new AuditLog(System.out, false);
    }
    OutputStream file = Files.newOutputStream(Path.of(target), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    return new AuditLog(new PrintStream(file, true, StandardCharsets.UTF_8), true);
  }

  @Override
  public void outcome(Outcome o) {
    ObjectNode line = o.decision().writeTo(JSON.createObjectNode());
    line.put("time", o.time().toString());
    line.put("result", o.result().label());
    line.put("message", o.message());
    line.put("dryRun", o.dryRun());
    line.put("policy", o.policySource());
    synchronized (out) {
      out.println(line);
      if (out.checkError()) {
        LOG.error("cannot write the audit log");
      }
    }
  }

  @Override
  public void close() {
    if (ownsStream) {
      out.close();
    }
  }
}
