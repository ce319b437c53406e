package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.RequestConfig;
import io.fabric8.kubernetes.client.http.StandardHttpClient;
import java.io.ByteArrayOutputStream;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Each purpose keeps its own request settings on the shared HTTP client, and closing the lot closes every one. */
class KubeClientsTest {
  private final KubeClients clients = KubeClients.of(new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build());

  @AfterEach
  void close() {
    clients.close();
  }

  /** The HTTP layer's retries are read from the HTTP client's tag, so a derived HTTP client must carry its own. */
  private static RequestConfig httpLayer(KubernetesClient client) {
    return ((StandardHttpClient<?, ?, ?>) client.getHttpClient()).getTag(RequestConfig.class);
  }

  @Test
  void removalsAndTheLeaseAreNotRetriedByTheHttpLayerAndTheLeaseIsBoundedByItsDeadline() {
    assertThat(httpLayer(clients.main()).getRequestRetryBackoffLimit()).isPositive(); // fabric8's default retries

    KubernetesClient removals = clients.unretried(Optional.empty());
    assertThat(httpLayer(removals).getRequestRetryBackoffLimit()).isZero();
    assertThat(removals.getConfiguration().getRequestTimeout()).isEqualTo(clients.main().getConfiguration().getRequestTimeout());

    KubernetesClient lease = clients.unretried(Optional.of(Duration.ofSeconds(3)));
    assertThat(httpLayer(lease).getRequestRetryBackoffLimit()).isZero();
    assertThat(lease.getConfiguration().getRequestTimeout()).isEqualTo(3000);
    assertThat(httpLayer(clients.main()).getRequestRetryBackoffLimit()).as("the main client keeps its retries").isPositive();
  }

  @Test
  void theInformersWatchesEndInsteadOfResumingAndTheirListsAreDecodedSlim() {
    KubernetesClient informers = clients.informers();
    assertThat(informers.getConfiguration().getWatchReconnectLimit()).isZero();
    assertThat(clients.main().getConfiguration().getWatchReconnectLimit()).isNotZero();
    assertThat(informers.getKubernetesSerialization()).isNotSameAs(clients.main().getKubernetesSerialization());
  }

  @Test
  void aClientKeyIsKeptInMemoryUnderOneRoundOfPbkdf2UnlessTheOperatorSetACount() throws Exception {
    // the service's clients are built: the setting is in place before fabric8 builds a key store
    assertThat(System.getProperty(KubeClients.KEY_ROUNDS)).isEqualTo("1");
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setKeyEntry("client", new SecretKeySpec(new byte[16], "AES"), "changeit".toCharArray(), null);
    ByteArrayOutputStream written = new ByteArrayOutputStream();
    store.store(written, "changeit".toCharArray());
    // What the JDK wrote for the key: its PBKDF2 parameters name the rounds it was encrypted with.
    assertThat(pbkdf2Rounds(written.toByteArray())).containsExactly(1);

    System.setProperty(KubeClients.KEY_ROUNDS, "5000");
    try {
      KubeClients.oneRoundForInMemoryKeys();
      assertThat(System.getProperty(KubeClients.KEY_ROUNDS)).as("the operator's count is kept").isEqualTo("5000");
    } finally {
      System.setProperty(KubeClients.KEY_ROUNDS, "1");
    }
  }

  @Test
  void tlsOffersTheJdksDefaultGroupsWithP384BeforeP256UnlessTheOperatorSetThem() {
    // the service's clients are built: the setting is in place before the JDK first reads it
    assertThat(System.getProperty(KubeClients.NAMED_GROUPS)).isEqualTo(KubeClients.P384_BEFORE_P256);
    assertThat(List.of(KubeClients.P384_BEFORE_P256.split(",")))
        .as("the JDK's default groups, the same set").containsExactlyInAnyOrder("x25519", "secp256r1", "secp384r1", "secp521r1", "x448",
            "ffdhe2048", "ffdhe3072", "ffdhe4096", "ffdhe6144", "ffdhe8192")
        .startsWith("x25519", "secp384r1", "secp256r1");

    System.setProperty(KubeClients.NAMED_GROUPS, "secp256r1");
    try {
      KubeClients.p384KeyShareBeforeP256();
      assertThat(System.getProperty(KubeClients.NAMED_GROUPS)).as("the operator's groups are kept").isEqualTo("secp256r1");
    } finally {
      System.setProperty(KubeClients.NAMED_GROUPS, KubeClients.P384_BEFORE_P256);
    }
  }

  /** The iteration counts of every PBKDF2 parameter set in a DER encoding: OID, then SEQUENCE { OCTET STRING salt, INTEGER count, ... }. */
  private static List<Integer> pbkdf2Rounds(byte[] der) {
    byte[] oid = {0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x05, 0x0c};
    List<Integer> rounds = new ArrayList<>();
    for (int i = 0; i + oid.length < der.length; i++) {
      if (Arrays.equals(der, i, i + oid.length, oid, 0, oid.length)) {
        int at = i + oid.length + 2; // the parameters' SEQUENCE tag and (short) length
        at += 2 + der[at + 1]; // the salt
        int count = 0;
        for (int b = 0; b < der[at + 1]; b++) {
          count = count << 8 | der[at + 2 + b] & 0xff;
        }
        rounds.add(count);
      }
    }
    return rounds;
  }

  @Test
  void closingClosesEveryClient() {
    KubernetesClient removals = clients.unretried(Optional.empty());
    KubernetesClient informers = clients.informers();
    clients.close();
    assertThat(clients.main().getHttpClient().isClosed()).isTrue();
    assertThat(removals.getHttpClient().isClosed()).isTrue();
    assertThat(informers.getHttpClient().isClosed()).isTrue();
  }
}
