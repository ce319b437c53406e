package io.podsweeper.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives integration tests the one {@link TestApiServer} of this test run (started on first use, stopped when the
 * run ends) and its admin {@link KubernetesClient}, as constructor or method parameters.
 */
public final class ApiServerExtension implements ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(ApiServerExtension.class);

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return type == TestApiServer.class || type == KubernetesClient.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    TestApiServer server = server(context);
    return parameter.getParameter().getType() == TestApiServer.class ? server : server.client();
  }

  /** The server of this test run, for other extensions. */
  static TestApiServer server(ExtensionContext context) {
    return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent("server", k -> TestApiServer.start(), TestApiServer.class);
  }
}
