package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.util.ContextInitializer;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The Kubernetes client's failures as logging lets them through: one line each, or none where we say it ourselves. */
class ClientTracesAtDebugTest {
  private static final String REFLECTOR = "io.fabric8.kubernetes.client.informers.impl.cache.Reflector";
  private final PrintStream stderr = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

  @BeforeEach
  void captureLogging() throws Exception {
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    configure();
  }

  @AfterEach
  void restoreLogging() throws Exception {
    System.setErr(stderr);
    configure();
  }

  private static void configure() throws Exception {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.reset();
    new ContextInitializer(context).autoConfig();
  }

  private String logged() {
    return captured.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aFailedFirstListIsLeftToTheCallerWhateverTheAnswer() {
    Logger reflector = LoggerFactory.getLogger(REFLECTOR);
    KubernetesClientException starting = new KubernetesClientException(
        new StatusBuilder().withCode(503).withMessage("server is starting").build());
    reflector.error("{} failed for {}, will stop", "listSyncAndWatch", "podsweeper.io/v1alpha1/podcleanuppolicies", starting);
    reflector.error("{} failed for {}, will stop", "listSyncAndWatch", "v1/pods",
        new KubernetesClientException(new StatusBuilder().withCode(403).withMessage("forbidden").build()));

    assertThat(logged()).isEmpty();
  }

  @Test
  void anyOtherFailureIsOneLineNamingTheRootCause() {
    LoggerFactory.getLogger(REFLECTOR).error("Watch closing with {}", "v1/pods",
        new IllegalStateException("watch failed", new ConnectException("Connection refused")));

    assertThat(logged().lines()).singleElement().asString()
        .contains(" ERROR ").contains("Watch closing with v1/pods (java.net.ConnectException: Connection refused)");
    assertThat(logged()).doesNotContain("\tat ");
  }
}
