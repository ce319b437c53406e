package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.spi.ILoggingEvent;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.internal.CertUtils;
import io.fabric8.kubernetes.client.internal.SSLUtils;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientImpl;
import io.podsweeper.testing.ApiServerExtension;
import io.podsweeper.testing.LogLines;
import io.podsweeper.testing.TestApiServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.Collections;
import java.util.Optional;
import java.util.Properties;
import javax.net.ssl.SSLSession;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the real API server (Go's TLS) chooses for the service's clients: ChaCha20-Poly1305, where fabric8's own get
 * AES-GCM; and whom they trust: the cluster's CA alone, where fabric8's own trust every CA of the JDK's default store too.
 */
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

  @Test
  void theServiceClientsTrustTheClusterCaAlone(TestApiServer server) throws Exception {
    X509TrustManager ours = (X509TrustManager) ApiHttpClientFactory.trustingTheClusterCa(server.config()).orElseThrow()[0];
    assertThat(ours.getAcceptedIssuers()).extracting(ca -> ca.getSubjectX500Principal().getName()).containsExactly("CN=podsweeper-test-ca");
    // The control: fabric8's own trust adds the JDK's default store, every public CA, to the cluster's.
    X509TrustManager fabric8s = (X509TrustManager) SSLUtils.trustManagers(server.config())[0];
    assertThat(fabric8s.getAcceptedIssuers()).hasSizeGreaterThan(100);
    assertThat(ApiHttpClientFactory.trustingTheClusterCa(new ConfigBuilder(server.config()).withTrustCerts(true).build()))
        .as("trustCerts asked for: fabric8's own").isEmpty();
    assertThat(ApiHttpClientFactory.trustingTheClusterCa(new ConfigBuilder(server.config()).withCaCertData(null).withCaCertFile(null).build()))
        .as("no CA named: the JDK's default trust, as fabric8's").isEmpty();
    try (LogLines lines = LogLines.of(ApiHttpClientFactory.class)) {
      assertThat(ApiHttpClientFactory.trustingTheClusterCa(new ConfigBuilder(server.config())
          .withCaCertData(Base64.getEncoder().encodeToString("not a certificate".getBytes(StandardCharsets.US_ASCII))).build()))
          .as("a CA this cannot read: fabric8 reads it and says what is wrong").isEmpty();
      assertThat(lines.events()).extracting(ILoggingEvent::getFormattedMessage).singleElement().asString()
          .as("and the wider trust is said").contains("falls back to fabric8's trust");
    }
  }

  /**
   * The attack the narrower trust closes: a CA of the JDK's default trust store (here a store that holds the test
   * server's CA, standing in for the public CAs) vouches for a server that the configured CA (here a public root) did
   * not sign. fabric8's own client accepts that server; the service's refuses it.
   */
  @Test
  void aCaOfTheDefaultTrustStoreVouchesForNoApiServer(TestApiServer server, @TempDir Path dir) throws Exception {
    Certificate serverCa;
    try (InputStream pem = CertUtils.getInputStreamFromDataOrFile(server.config().getCaCertData(), server.config().getCaCertFile())) {
      serverCa = CertificateFactory.getInstance("X.509").generateCertificate(pem);
    }
    Path store = dir.resolve("default-trust.p12");
    KeyStore defaults = KeyStore.getInstance("PKCS12");
    defaults.load(null, null);
    defaults.setCertificateEntry("vouching", serverCa);
    try (OutputStream out = Files.newOutputStream(store)) {
      defaults.store(out, "changeit".toCharArray());
    }
    Config unrelatedCa = new ConfigBuilder(server.config()).withCaCertData(pemBase64(aPublicRoot())).withRequestRetryBackoffLimit(0).build();
    Properties before = (Properties) System.getProperties().clone();
    System.setProperty("javax.net.ssl.trustStore", store.toString());
    System.setProperty("javax.net.ssl.trustStorePassword", "changeit");
    try {
      try (KubernetesClient plain = new KubernetesClientBuilder().withConfig(unrelatedCa).build()) {
        assertThat(plain.namespaces().list().getItems()).as("fabric8's own client, vouched for by the default store").isNotEmpty();
      }
      try (KubeClients clients = KubeClients.of(unrelatedCa)) {
        assertThatThrownBy(() -> clients.main().namespaces().list()).hasStackTraceContaining("SSLHandshakeException")
            .hasStackTraceContaining("unable to find valid certification path");
      }
    } finally {
      System.setProperties(before);
    }
  }

  /** Any CA of the JDK's own store: one that did not sign the test server's certificate. */
  private static X509Certificate aPublicRoot() throws Exception {
    KeyStore cacerts = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(Path.of(System.getProperty("java.home"), "lib", "security", "cacerts"))) {
      cacerts.load(in, null);
    }
    return (X509Certificate) cacerts.getCertificate(Collections.list(cacerts.aliases()).get(0));
  }

  private static String pemBase64(Certificate ca) throws Exception {
    String pem = "-----BEGIN CERTIFICATE-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(ca.getEncoded())
        + "\n-----END CERTIFICATE-----\n";
    return Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.US_ASCII));
  }
}
