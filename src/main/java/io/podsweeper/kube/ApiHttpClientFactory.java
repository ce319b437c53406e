package io.podsweeper.kube;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.TlsVersion;
import io.fabric8.kubernetes.client.internal.CertUtils;
import io.fabric8.kubernetes.client.internal.SSLUtils;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.utils.HttpClientUtils;
import io.fabric8.kubernetes.client.utils.Utils;
import java.io.IOException;
import java.io.InputStream;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.Optional;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JDK HTTP client of every client of the API server ({@link KubeClients}; its threads are named after this class),
 * as fabric8 builds it but offering ChaCha20-Poly1305 before AES-GCM in TLS.
 *
 * <p>Why: the Deployment runs the JVM with C1 only (-XX:TieredStopAtLevel=1), and AES-GCM's intrinsics are C2's. In
 * Java, AES-GCM costs two to three times what ChaCha20-Poly1305 does: 0.30 against 0.13 CPU-seconds for 8 MiB in a
 * fresh JVM (TlsCipherBenchmark; docs/benchmarks.md, eighth pass), and every byte of every list and watch crosses it.
 * The server still chooses: Go's TLS server follows a client that puts ChaCha20 first, and a server that does not offer
 * it still finds every suite the JDK offers, in the JDK's order.
 *
 * <p>And trusting the cluster's CA alone, where the configuration names one ({@link #trustingTheClusterCa}).
 */
public final class ApiHttpClientFactory extends JdkHttpClientFactory {
  private static final Logger LOG = LoggerFactory.getLogger(ApiHttpClientFactory.class);
  private final String[] protocols;

  /**
   * @param config whose TLS versions fabric8 would offer: the sslParameters this replaces carry them, and fabric8's
   *     builder cannot be asked for its own, so they are derived here as fabric8 derives them
   */
  public ApiHttpClientFactory(Config config) {
    TlsVersion[] versions = config.getTlsVersions();
    this.protocols = versions == null || versions.length == 0 ? null : Arrays.stream(versions).map(TlsVersion::javaName).toArray(String[]::new);
  }

  /**
   * fabric8's configuration, except that the API server's certificate is checked against the cluster's CA alone when
   * the configuration names one (a kubeconfig's {@code certificate-authority(-data)}, a pod's service-account
   * {@code ca.crt}), as client-go and kubectl check it. fabric8 adds that CA to the JDK's default trust store, so about
   * 150 public CAs could also vouch for an impostor of the API server; and it reads and parses that store at every start,
   * on the main thread before the first request (docs/benchmarks.md, "The start, in order"). With no CA named, a
   * trust store file of the operator's, or {@code trustCerts}, or a CA that holds no certificate this can read, it is
   * fabric8's own configuration.
   */
  @Override
  public HttpClient.Builder newBuilder(Config config) {
    Optional<TrustManager[]> clusterCa = trustingTheClusterCa(config);
    HttpClient.Builder builder = newBuilder();
    if (clusterCa.isEmpty()) {
      HttpClientUtils.applyCommonConfiguration(config, builder, this); // as HttpClient.Factory's own newBuilder(Config)
      return builder;
    }
    // Everything but the trust and the keys from fabric8, given a configuration that asks it to build neither.
    HttpClientUtils.applyCommonConfiguration(new ConfigBuilder(config).withTrustCerts(true).withCaCertData(null).withCaCertFile(null)
        .withClientCertData(null).withClientCertFile(null).withClientKeyData(null).withClientKeyFile(null).withKeyStoreFile(null).build(),
        builder, this);
    // The interceptors (credentials, their refresh, impersonation) of the configuration itself, in place of those.
    HttpClientUtils.createApplicableInterceptors(config, this).forEach(builder::addOrReplaceInterceptor);
    try {
      return builder.sslContext(SSLUtils.keyManagers(config), clusterCa.get());
    } catch (GeneralSecurityException | IOException e) {
      throw KubernetesClientException.launderThrowable(e);
    }
  }

  /** Trust managers of the configuration's CA certificates alone; empty where fabric8's own trust applies (above). */
  static Optional<TrustManager[]> trustingTheClusterCa(Config config) {
    if (config.isTrustCerts() || Utils.isNotNullOrEmpty(config.getTrustStoreFile())
        || (Utils.isNullOrEmpty(config.getCaCertData()) && Utils.isNullOrEmpty(config.getCaCertFile()))) {
      return Optional.empty();
    }
    try (InputStream pem = CertUtils.getInputStreamFromDataOrFile(config.getCaCertData(), config.getCaCertFile())) {
      Collection<? extends Certificate> cas = CertificateFactory.getInstance("X.509").generateCertificates(pem);
      if (cas.isEmpty()) {
        return widerTrust("it holds no certificate");
      }
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int n = 0;
      for (Certificate ca : cas) {
        store.setCertificateEntry("cluster-ca-" + n++, ca);
      }
      TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init(store);
      return Optional.of(trust.getTrustManagers());
    } catch (GeneralSecurityException | IOException | RuntimeException e) {
      return widerTrust(e.toString()); // fabric8's own reading then says what is wrong with it, or reads what this could not
    }
  }

  /** fabric8's trust after all, which adds the JDK's default CAs: said, as it trusts more than the CA named. */
  private static Optional<TrustManager[]> widerTrust(String why) {
    LOG.warn("cannot read the cluster's CA certificates here ({}): TLS to the API server falls back to fabric8's trust, the named CA "
        + "and the JDK's default CAs beside it", why);
    return Optional.empty();
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
