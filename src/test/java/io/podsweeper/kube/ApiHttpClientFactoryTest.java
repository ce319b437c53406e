package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ApiHttpClientFactoryTest {
  @Test
  void chaCha20SuitesComeFirstAndTheRestKeepTheJdksOrder() {
    String[] jdk = {"TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_RSA_WITH_AES_256_GCM_SHA384"};
    assertThat(ApiHttpClientFactory.chaCha20First(jdk)).containsExactly("TLS_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_RSA_WITH_AES_256_GCM_SHA384");
  }

  @Test
  void withoutChaCha20TheOrderIsUnchanged() {
    String[] suites = {"TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256"};
    assertThat(ApiHttpClientFactory.chaCha20First(suites)).containsExactly(suites);
  }
}
