package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientImpl;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.TestApiServer;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Optional;
import javax.net.ssl.SSLSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** What the real API server (Go's TLS) chooses for the service's clients: ChaCha20-Poly1305, where fabric8's own get AES-GCM. */
@ExtendWith(ApiServerExtension.class)
class ApiHttpClientFactoryIT {

  @Test
  void theServiceClientsGetChaCha20(TestApiServer server) throws Exception {
    try (KubeClients clients = KubeClients.of(server.config())) {
      assertThat(cipherSuite(clients.main(), server)).contains("TLS_CHACHA20_POLY1305_SHA256");
      assertThat(clients.main().namespaces().list().getItems()).as("and the API still answers").isNotEmpty();
    }
  }

  @Test
  void fabric8sOwnClientGetsAesGcm(TestApiServer server) throws Exception {
    // The control: without ApiHttpClientFactory the same server chooses AES-GCM, so the test above sees the difference it makes.
    try (KubernetesClient plain = new KubernetesClientBuilder().withConfig(server.config()).build()) {
      assertThat(cipherSuite(plain, server)).hasValueSatisfying(suite -> assertThat(suite).contains("_AES_").contains("_GCM_"));
    }
  }

  /** The suite of a TLS session to the server on the client's own JDK HTTP client, which fabric8 does not expose. */
  private static Optional<String> cipherSuite(KubernetesClient client, TestApiServer server) throws Exception {
    Method jdkClient = JdkHttpClientImpl.class.getDeclaredMethod("getHttpClient");
    jdkClient.setAccessible(true);
    HttpClient http = (HttpClient) jdkClient.invoke(client.getHttpClient());
    HttpResponse<Void> response = http.send(HttpRequest.newBuilder(URI.create(server.config().getMasterUrl() + "version")).build(),
        HttpResponse.BodyHandlers.discarding());
    return response.sslSession().map(SSLSession::getCipherSuite);
  }
}
