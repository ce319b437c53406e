package io.podsweeper.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * The lines one class's logger writes while this is open: open it before the work, read {@link #events()}, close it
 * (a try-with-resources block or an {@code @AfterEach}) so that no later test's lines land in it.
 */
public final class LogLines implements AutoCloseable {
  private final Logger logger;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  private LogLines(Logger logger) {
    this.logger = logger;
    appender.start();
    logger.addAppender(appender);
  }

  /** Captures what {@code type}'s logger writes from now until {@link #close()}. */
  public static LogLines of(Class<?> type) {
    return new LogLines((Logger) LoggerFactory.getLogger(type));
  }

  /**
   * The lines so far, a copy: the service's threads may still be writing, and the appender adds under its own lock,
   * so a copy taken under that lock is whole.
   */
  public List<ILoggingEvent> events() {
    synchronized (appender) {
      return List.copyOf(appender.list);
    }
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
  }
}
