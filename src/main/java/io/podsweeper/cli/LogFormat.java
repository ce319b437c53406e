package io.podsweeper.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.encoder.Encoder;
import net.logstash.logback.encoder.LogstashEncoder;
import org.slf4j.LoggerFactory;

/** {@code --log-format}: how a log line is written. */
enum LogFormat {
  /** A line of text: time (UTC), level, thread, logger, message, and the line's key-value pairs as {@code key="value"}. */
  text {
    @Override
    Encoder<ILoggingEvent> unstarted() {
      PatternLayoutEncoder encoder = new PatternLayoutEncoder();
      encoder.setPattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSX,UTC} %-5level [%thread] %logger{20} - %msg" + KEY_VALUES + "%n");
      return encoder;
    }
  },
  /**
   * One JSON object per line, for log stores (Loki, Elasticsearch): every key-value pair of a line (e.g. namespace,
   * pod, rule, result of a removal) is a top-level key, and @timestamp is RFC 3339 in UTC.
   */
  json {
    @Override
    Encoder<ILoggingEvent> unstarted() {
      LogstashEncoder encoder = new LogstashEncoder();
      encoder.setTimestampPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX");
      encoder.setTimeZone("UTC");
      // Logstash's schema version and the level as a number say nothing a log store needs.
      encoder.getFieldNames().setVersion("[ignore]");
      encoder.getFieldNames().setLevelValue("[ignore]");
      return encoder;
    }
  };

  /** A space and the key-value pairs, or nothing for a line without any. */
  static final String KEY_VALUES = "%replace( %kvp){'^ $', ''}";

  /** The encoder with this format's settings, before it has a context and is started. */
  abstract Encoder<ILoggingEvent> unstarted();

  Encoder<ILoggingEvent> encoder(LoggerContext context) {
    Encoder<ILoggingEvent> encoder = unstarted();
    encoder.setContext(context);
    encoder.start();
    return encoder;
  }

  /** Logs from now on in this format (logging starts as text, {@link Logging}). */
  void apply() {
    if (this == text) {
      return;
    }
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.reset();
    Logging.configure(context, this);
  }
}
