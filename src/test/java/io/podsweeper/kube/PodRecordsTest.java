package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import org.junit.jupiter.api.Test;

/** The API object becomes the slim record the decision core reads. */
class PodRecordsTest {
  private static PodBuilder pod() {
    return new PodBuilder().withNewMetadata().withName("p").withNamespace("ns").withUid("u").withResourceVersion("1")
        .withCreationTimestamp("2026-01-01T00:00:00Z").endMetadata()
        .withNewSpec().withNodeName("n1").addNewContainer().withName("main").withImage("busybox").endContainer().endSpec();
  }

  /** DefaultEvictor's PodsWithResourceClaims protection reads this. */
  @Test
  void resourceClaimsAreSeen() {
    Pod claiming = pod().editSpec().addNewResourceClaim().withName("gpu").endResourceClaim().endSpec().build();
    assertThat(PodRecords.pod(claiming).volumes().resourceClaims()).isTrue();
    assertThat(PodRecords.pod(pod().build()).volumes().resourceClaims()).isFalse();
  }
}
