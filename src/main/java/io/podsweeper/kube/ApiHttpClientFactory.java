package io.podsweeper.kube;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.http.TlsVersion;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.Comparator;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;

/**
 * The JDK HTTP client of every client of the API server ({@link KubeClients}; its threads are named after this class),
 * as fabric8 builds it but offering ChaCha20-Poly1305 before AES-GCM in TLS.
 *
 * <p>Why: the Deployment runs the JVM with C1 only (-XX:TieredStopAtLevel=1), and AES-GCM's intrinsics are C2's. In
 * Java, AES-GCM costs two to three times what ChaCha20-Poly1305 does: 0.30 against 0.13 CPU-seconds for 8 MiB in a
 * fresh JVM (TlsCipherBenchmark; docs/benchmarks.md, eighth pass), and every byte of every list and watch crosses it.
 * The server still chooses: Go's TLS server follows a client that puts ChaCha20 first, and a server that does not offer
 * it still finds every suite the JDK offers, in the JDK's order.
 */
public final class ApiHttpClientFactory extends JdkHttpClientFactory {
  private final String[] protocols;

  /**
   * @param config whose TLS versions fabric8 would offer: the sslParameters this replaces carry them, and fabric8's
   *     builder cannot be asked for its own, so they are derived here as fabric8 derives them
   */
  public ApiHttpClientFactory(Config config) {
    TlsVersion[] versions = config.getTlsVersions();
    this.protocols = versions == null || versions.length == 0 ? null : Arrays.stream(versions).map(TlsVersion::javaName).toArray(String[]::new);
  }

  @Override
  protected void additionalConfig(java.net.http.HttpClient.Builder builder) {
    builder.sslParameters(new SSLParameters(chaCha20First(defaultSuites()), protocols));
  }

  /** The suites in the same order, but those with ChaCha20 first. */
  static String[] chaCha20First(String[] suites) {
    return Arrays.stream(suites).sorted(Comparator.comparing(suite -> !suite.contains("_CHACHA20_"))).toArray(String[]::new);
  }

  /** The JDK's own choice for a TLS client (which jdk.tls.client.cipherSuites and disabled algorithms shape). */
  private static String[] defaultSuites() {
    try {
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(new KeyManager[0], new TrustManager[0], null); // none: loads no key or trust store just to ask
      return context.getDefaultSSLParameters().getCipherSuites();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK offers no TLS", e);
    }
  }
}
