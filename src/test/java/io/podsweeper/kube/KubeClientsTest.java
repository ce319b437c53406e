package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.RequestConfig;
import io.fabric8.kubernetes.client.http.StandardHttpClient;
import java.time.Duration;
import java.util.Optional;
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
  void closingClosesEveryClient() {
    KubernetesClient removals = clients.unretried(Optional.empty());
    KubernetesClient informers = clients.informers();
    clients.close();
    assertThat(clients.main().getHttpClient().isClosed()).isTrue();
    assertThat(removals.getHttpClient().isClosed()).isTrue();
    assertThat(informers.getHttpClient().isClosed()).isTrue();
  }
}
