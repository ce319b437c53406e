package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.util.ContextInitializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ServiceLoader;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service's logging ({@link Logging}, which logback finds itself) and {@code --log-format json} as log stores read it:
 * one object per line, key-value pairs as top-level keys.
 */
class LogFormatTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final PrintStream stderr = System.err;

  @AfterEach
  void restoreLogging() throws Exception {
    System.setErr(stderr);
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.reset();
    new ContextInitializer(context).autoConfig();
  }

  @Test
  void jsonHasTopLevelKeysAndAnRfc3339Time() throws Exception {
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    LogFormat.json.apply();

    Logger log = LoggerFactory.getLogger("io.podsweeper.engine.Sweeper");
    log.atInfo().addKeyValue("namespace", "web").addKeyValue("pod", "canary-0").addKeyValue("result", "pdb-refused")
        .log("evict PodLifeTime pod web/canary-0");

    String[] lines = captured.toString(StandardCharsets.UTF_8).split("\n");
    assertThat(lines).hasSize(1);
    JsonNode line = JSON.readTree(lines[0]);
    assertThat(line.path("message").asText()).isEqualTo("evict PodLifeTime pod web/canary-0");
    assertThat(line.path("level").asText()).isEqualTo("INFO");
    assertThat(line.path("namespace").asText()).isEqualTo("web");
    assertThat(line.path("pod").asText()).isEqualTo("canary-0");
    assertThat(line.path("result").asText()).isEqualTo("pdb-refused");
    String time = line.path("@timestamp").asText();
    assertThat(OffsetDateTime.parse(time, DateTimeFormatter.ISO_OFFSET_DATE_TIME).getOffset().getTotalSeconds()).isZero();
    assertThat(time).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
    assertThat(lines[0]).as("slashes unescaped").contains("web/canary-0");
  }

  @Test
  void textIsALinePerEventWithItsTimeInUtc() {
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.reset();
    Logging.configure(context, LogFormat.text);

    LoggerFactory.getLogger("io.podsweeper.engine.Sweeper").info("evict PodLifeTime pod web/canary-0");
    LoggerFactory.getLogger("io.fabric8.kubernetes.client.informers.impl.cache.Reflector").warn("watch closed");
    LoggerFactory.getLogger("io.vertx.core.Vertx").info("starting");

    assertThat(captured.toString(StandardCharsets.UTF_8))
        .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z INFO  \\[" + Pattern.quote(Thread.currentThread().getName())
            + "\\] i\\.p\\.engine\\.Sweeper - evict PodLifeTime pod web/canary-0\n");
  }

  /**
   * As text, a line's key-value pairs follow its message (a removal's message names only the pod: OutcomesTest), and a
   * line without any ends with its message.
   */
  @Test
  void textAppendsTheKeyValuePairs() {
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.reset();
    Logging.configure(context, LogFormat.text);

    Logger log = LoggerFactory.getLogger("io.podsweeper.engine.Sweeper");
    log.atInfo().addKeyValue("rule", "crashloop").addKeyValue("reason", "CrashLoopBackOff for 2h").log("evict pod web/canary-0");
    log.info("no keys");

    String[] lines = captured.toString(StandardCharsets.UTF_8).split("\n");
    assertThat(lines[0]).endsWith(" - evict pod web/canary-0 rule=\"crashloop\" reason=\"CrashLoopBackOff for 2h\"");
    assertThat(lines[1]).endsWith(" - no keys");
  }

  @Test
  void logbackFindsTheServicesLogging() {
    assertThat(ServiceLoader.load(Configurator.class)).anyMatch(Logging.class::isInstance);
  }
}
