package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.api.Test;

/** A refused read, named as RBAC names it: verb, resource (with its group), name and scope. */
class RefusalsTest {
  @Test
  void aReadIsNamedByItsVerbResourceAndScope() {
    assertThat(Refusals.describe(URI.create("https://k:6443/api/v1/pods?limit=500"))).isEqualTo("list pods at the cluster scope");
    assertThat(Refusals.describe(URI.create("https://k:6443/api/v1/pods?resourceVersion=9&watch=true")))
        .isEqualTo("watch pods at the cluster scope");
    assertThat(Refusals.describe(URI.create("https://k:6443/api/v1/namespaces/podsweeper/configmaps?fieldSelector=metadata.name%3Dc&watch=true")))
        .isEqualTo("watch configmaps in namespace podsweeper");
    assertThat(Refusals.describe(URI.create("https://k:6443/apis/coordination.k8s.io/v1/namespaces/podsweeper/leases/podsweeper")))
        .isEqualTo("get leases.coordination.k8s.io podsweeper in namespace podsweeper");
    assertThat(Refusals.describe(URI.create("https://k:6443/apis/policy/v1/poddisruptionbudgets"))).isEqualTo("list poddisruptionbudgets.policy at the cluster scope");
    assertThat(Refusals.describe(URI.create("https://k:6443/api/v1/namespaces"))).isEqualTo("list namespaces at the cluster scope");
    assertThat(Refusals.describe(URI.create("https://k:6443/api/v1/nodes/node-a"))).isEqualTo("get nodes node-a");
  }
}
