package io.podsweeper.kube;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.RequestConfigBuilder;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.impl.KubernetesClientImpl;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The service's clients of the API server (and the CLI's), all on one HTTP client: one TLS context and one pool of
 * connections, offering ChaCha20 first ({@link ApiHttpClientFactory}).
 *
 * <p>Why: a client per purpose (informers, removals, leader election, the rest) built a TLS context each (with a
 * client certificate, a key store whose key fabric8 encrypts with 10,000 rounds of PBKDF2) and opened connections of
 * its own: about 0.35 CPU-seconds of a start more than one client costs (docs/benchmarks.md, fourth pass). Each
 * purpose keeps its own request settings: fabric8 reads the HTTP layer's retries from the HTTP client (so each purpose
 * gets a derived one, sharing the connections), and timeouts and watch reconnects from the Kubernetes client's
 * configuration.
 *
 * <p>Closing this closes them all; nothing else may close them, as closing one HTTP client closes those derived from it.
 */
public final class KubeClients implements AutoCloseable {
  private final KubernetesClient main;
  private final Refusals refusals;
  private final List<KubernetesClient> derived = new CopyOnWriteArrayList<>();

  /**
   * @param main the client the others are derived from, with its HTTP client's interceptors; closed by {@link #close}
   * @param refusals told of the reads its HTTP client's answers refuse, if it is one of its interceptors
   */
  public KubeClients(KubernetesClient main, Refusals refusals) {
    this.main = main;
    this.refusals = refusals;
  }

  /** Clients of {@code main}, whose refusals nobody hears of. */
  public KubeClients(KubernetesClient main) {
    this(main, new Refusals());
  }

  public static KubeClients of(Config config) {
    oneRoundForInMemoryKeys();
    p384KeyShareBeforeP256();
    Refusals refusals = new Refusals();
    return new KubeClients(new KubernetesClientBuilder().withConfig(config).withKubernetesSerialization(KubeSerialization.of(new ObjectMapper()))
        .withHttpClientFactory(new ApiHttpClientFactory(config))
        .withHttpClientBuilderConsumer(http -> http.addOrReplaceInterceptor(Refusals.class.getSimpleName(), refusals)).build(), refusals);
  }

  /** The JDK's setting for how many rounds of PBKDF2 protect a key put into a PKCS12 key store (default 10,000). */
  static final String KEY_ROUNDS = "keystore.pkcs12.keyPbeIterationCount";

  /**
   * One round of PBKDF2 for a key put into a PKCS12 key store, unless the operator set a count.
   *
   * <p>Why: with a kubeconfig that holds a client certificate, fabric8 puts its key into a key store in memory, under
   * its configured passphrase (by default the constant "changeit"), to hand it to the TLS context, and the JDK encrypts
   * it there with 10,000 rounds of PBKDF2-HMAC-SHA256 and decrypts it with as many again: about 0.1 CPU-seconds of a
   * start, on the main thread, that protect nothing, as the store never leaves memory (docs/benchmarks.md, issue 36).
   * The JDK reads this setting whenever a key is put into such a store, and this process writes no other key store.
   */
  static void oneRoundForInMemoryKeys() {
    if (System.getProperty(KEY_ROUNDS) == null) {
      System.setProperty(KEY_ROUNDS, "1");
    }
  }

  /** The JDK's setting for the TLS groups it offers, in order of preference. */
  static final String NAMED_GROUPS = "jdk.tls.namedGroups";

  /** The JDK's default groups (Java 17 to 25), with P-384 moved before P-256. */
  static final String P384_BEFORE_P256 = "x25519,secp384r1,secp256r1,secp521r1,x448,ffdhe2048,ffdhe3072,ffdhe4096,ffdhe6144,ffdhe8192";

  /**
   * The TLS groups the JDK offers by default, with P-384 before P-256, unless the operator set them.
   *
   * <p>Why: the JDK's ClientHello carries a key share for the first group of each family it offers, X25519 and by
   * default P-256, before the server has chosen one (the API server chooses X25519). The first P-256 key pair of a process
   * costs 0.1–0.2 CPU-seconds, as the JDK builds its tables for that curve, and the first connection, on the way to
   * the pods' list, waited for it; the first P-384 key pair costs about 0.02 (docs/benchmarks.md, issue 36, thirteenth
   * session). P-256 is still offered: a server that speaks only P-256 asks for it (a TLS 1.3 HelloRetryRequest) and
   * gets its share one round trip later ({@code KeySharesTest}). The JDK reads this setting when TLS is first used, for
   * the whole process.
   */
  static void p384KeyShareBeforeP256() {
    if (System.getProperty(NAMED_GROUPS) == null) {
      System.setProperty(NAMED_GROUPS, P384_BEFORE_P256);
    }
  }

  /** The reads the API server refused to any of these clients. */
  public Refusals refusals() {
    return refusals;
  }

  /** For everything without settings of its own: Events, ConfigMaps, policies, discovery. */
  public KubernetesClient main() {
    return main;
  }

  /**
   * For the informers ({@link ResumingInformers}): lists decoded slim ({@link PodRecords#serialization}); the watches of
   * {@link ResumingInformers#unresumed} end instead of resuming (a watcher that does not reconnect itself is held to this
   * reconnect limit of 0), while the cache's informers resume theirs under their own terms.
   */
  KubernetesClient informers() {
    Config config = new ConfigBuilder(main.getConfiguration()).withWatchReconnectLimit(0).build();
    return derive(config, main.getHttpClient().newBuilder(), PodRecords.serialization());
  }

  /**
   * For requests that must not be repeated behind the caller's back (removals, the lease): the HTTP layer does not
   * retry them; fabric8 retries a refused connection for ~19 s by default, far past a renew deadline.
   *
   * @param timeout how long one request may take, if not the configured request timeout
   */
  public KubernetesClient unretried(Optional<Duration> timeout) {
    ConfigBuilder config = new ConfigBuilder(main.getConfiguration()).withRequestRetryBackoffLimit(0);
    timeout.ifPresent(t -> config.withRequestTimeout((int) t.toMillis()));
    Config settings = config.build();
    HttpClient.DerivedClientBuilder http = main.getHttpClient().newBuilder().tag(new RequestConfigBuilder(settings.getRequestConfig()).build());
    return derive(settings, http, main.getKubernetesSerialization());
  }

  private KubernetesClient derive(Config config, HttpClient.DerivedClientBuilder http, KubernetesSerialization serialization) {
    // As KubernetesClientBuilder builds a client, with an HTTP client derived here instead of built from the config.
    KubernetesClient client = new KubernetesClientImpl(http.build(), config, null, serialization);
    derived.add(client);
    return client;
  }

  @Override
  public void close() {
    derived.forEach(KubernetesClient::close);
    main.close();
  }
}
