package io.podsweeper.testing;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.Release;
import com.marcnuri.helm.UpgradeCommand;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The Helm chart ({@code manifests/helm/podsweeper}) through Helm itself: helm-java calls Helm's own Go library, so
 * lint, template, install and upgrade are Helm's, not a reimplementation.
 */
public final class Chart {
  public static final Path DIR = Manifests.BASE.resolve("helm/podsweeper");

  private Chart() {}

  public static LintResult lint() {
    return new Helm(DIR).lint().strict().call();
  }

  /**
   * {@code helm template RELEASE -n NAMESPACE [-f values] [--set k=v ...]}: the release's manifest (helm-java prints it
   * without the hooks). The chart's {@code lookup}s find nothing, as with {@code helm template}: helm-java's template
   * asks a cluster, and {@link NoObjects} is one that holds none.
   */
  public static String template(String release, String namespace, Path values, Map<String, Object> set) {
    var template = new Helm(DIR).template().withName(release).withNamespace(namespace);
    if (values != null) {
      template.withValuesFile(values);
    }
    set.forEach(template::set);
    NoObjects.serve();
    return template.call();
  }

  /** {@code helm install RELEASE -n NAMESPACE --create-namespace -f values} onto the test API server, as its admin. */
  public static Release install(TestApiServer server, String release, String namespace, Path values) {
    InstallCommand install = new Helm(DIR).install().withName(release).withNamespace(namespace).createNamespace()
        .withKubeConfig(server.kubeconfig()).withValuesFile(values);
    return install.call();
  }

  /** {@code helm upgrade RELEASE -n NAMESPACE -f values [--set k=v ...]} on the test API server, as its admin. */
  public static Release upgrade(TestApiServer server, String release, String namespace, Path values, Map<String, Object> set) {
    UpgradeCommand upgrade = new Helm(DIR).upgrade().withName(release).withNamespace(namespace)
        .withKubeConfig(server.kubeconfig()).withValuesFile(values);
    set.forEach(upgrade::set);
    return upgrade.call();
  }

  /**
   * An API server that holds no object: discovery of {@code v1} names ConfigMaps and Secrets (the kinds the chart looks
   * up), any other request is 404. Served once per test run; {@code $KUBECONFIG} (pom.xml sets it for the tests) names
   * it, since helm-java's template reads the cluster from the environment only.
   */
  private static final class NoObjects {
    private static final String DISCOVERY = """
        {"kind":"APIResourceList","apiVersion":"v1","groupVersion":"v1","resources":[
        {"name":"configmaps","singularName":"","namespaced":true,"kind":"ConfigMap","verbs":["get"]},
        {"name":"secrets","singularName":"","namespaced":true,"kind":"Secret","verbs":["get"]}]}""";
    private static final String NOT_FOUND = """
        {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404}""";
    private static HttpServer server;

    static synchronized void serve() {
      if (server != null) {
        return;
      }
      String kubeconfig = System.getenv("KUBECONFIG");
      if (kubeconfig == null || kubeconfig.isBlank()) {
        throw new IllegalStateException("helm template (helm-java) reads its cluster from $KUBECONFIG: set it to a writable file"
            + " (pom.xml does, for mvn test and verify)");
      }
      try {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
          boolean discovery = exchange.getRequestURI().getPath().equals("/api/v1");
          byte[] body = (discovery ? DISCOVERY : NOT_FOUND).getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(discovery ? 200 : 404, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
        server.start();
        Path file = Path.of(kubeconfig);
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, """
            apiVersion: v1
            kind: Config
            clusters: [{name: no-objects, cluster: {server: "http://127.0.0.1:%d"}}]
            users: [{name: anyone, user: {}}]
            contexts: [{name: no-objects, context: {cluster: no-objects, user: anyone}}]
            current-context: no-objects
            """.formatted(server.getAddress().getPort()));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
