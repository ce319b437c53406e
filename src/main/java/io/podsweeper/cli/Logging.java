package io.podsweeper.cli;

import ch.qos.logback.classic.ClassicConstants;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import java.util.Map;

/**
 * The service's logging: lines to stderr as {@link LogFormat} writes them, the Kubernetes client's failures as one line
 * each ({@link ClientTracesAtDebug}), and the libraries held to what an operator acts on.
 *
 * <p>Why in code and not in a logback.xml: reading XML cost about 0.1 CPU-second of each start, twice that with
 * {@code --log-format json}, which read a second file (docs/benchmarks.md, fifth pass). logback finds this class through
 * ServiceLoader (META-INF/services) before it looks for files; an operator's file ({@code -Dlogback.configurationFile})
 * or a logback-test.xml on the class path still takes its place.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_HIGH_PRIORITY)
public final class Logging extends ContextAwareBase implements Configurator {
  private static final Map<String, Level> LEVELS = Map.ofEntries(
      Map.entry("io.fabric8", Level.WARN),
      // Every failed watch and reconnect attempt, with its stack trace: hundreds of lines in a 30 s API outage. The
      // service says it once itself ("API server ... unreachable ..., holding removals", then "... reachable again").
      // DEBUG shows them.
      Map.entry("io.fabric8.kubernetes.client.informers.impl.cache.Reflector", Level.ERROR),
      Map.entry("io.fabric8.kubernetes.client.informers.impl.DefaultSharedIndexInformer", Level.ERROR),
      Map.entry("io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager", Level.ERROR),
      Map.entry("io.fabric8.kubernetes.client.dsl.internal.WatchConnectionManager", Level.ERROR),
      Map.entry("io.fabric8.kubernetes.client.dsl.internal.WatcherWebSocketListener", Level.ERROR),
      Map.entry("io.fabric8.kubernetes.client.jdkhttp.JdkWebSocketImpl", Level.ERROR),
      // Each failed attempt at the Lease, every retry period, with its stack trace: 17 WARN and ERROR lines in a 45 s API
      // outage. The service says the outage once (as above), a lost leadership once, and a refused Lease once
      // (kube/Leadership); DEBUG shows them.
      Map.entry("io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector", Level.OFF),
      // "unstable version v1alpha1" for our own CRDs: known, and nothing an operator can act on.
      Map.entry("io.fabric8.kubernetes.client.dsl.internal.VersionUsageUtils", Level.ERROR),
      Map.entry("io.vertx", Level.WARN),
      Map.entry("io.netty", Level.WARN));

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (System.getProperty(ClassicConstants.CONFIG_FILE_PROPERTY) != null
        || Logging.class.getResource("/" + ClassicConstants.TEST_AUTOCONFIG_FILE) != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    configure(context, LogFormat.text);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /** Sets up a context that has nothing set up yet (new, or reset). */
  static void configure(LoggerContext context, LogFormat format) {
    ClientTracesAtDebug traces = new ClientTracesAtDebug();
    traces.setContext(context);
    traces.start();
    context.addTurboFilter(traces);
    ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
    stderr.setContext(context);
    stderr.setName("STDERR");
    stderr.setTarget("System.err");
    stderr.setEncoder(format.encoder(context));
    stderr.start();
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.INFO);
    root.addAppender(stderr);
    LEVELS.forEach((name, level) -> context.getLogger(name).setLevel(level));
  }
}
