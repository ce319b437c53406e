package io.podsweeper.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import org.slf4j.LoggerFactory;

/** {@code --log-format}: text lines (logback.xml) or one JSON object per line (logback-json.xml). */
enum LogFormat {
  text,
  json;

  void apply() {
    if (this == text) {
      return;
    }
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.reset();
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(context);
    try {
      configurator.doConfigure(LogFormat.class.getResource("/logback-json.xml"));
    } catch (JoranException e) {
      throw new IllegalStateException("cannot configure JSON logging", e);
    }
  }
}
