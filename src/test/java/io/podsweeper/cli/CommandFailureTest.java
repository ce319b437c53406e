package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.junit.jupiter.api.Test;

/** A 403 names the read and the identity, and asks for the grant that fits who was reading (ViewerIT: on a real server). */
class CommandFailureTest {
  private static KubernetesClientException forbidden(String user) {
    return new KubernetesClientException(new StatusBuilder().withCode(403).withMessage("pods is forbidden: User \"" + user
        + "\" cannot list resource \"pods\" in API group \"\" at the cluster scope").build());
  }

  @Test
  void theServiceIsToldToApplyTheManifestsRbac() {
    assertThat(CommandFailure.fromCluster("https://api", forbidden("system:serviceaccount:podsweeper:podsweeper"), CommandFailure.Reader.SERVICE))
        .hasMessage("cannot list pods: forbidden for system:serviceaccount:podsweeper:podsweeper — apply manifests/rbac.yaml");
  }

  @Test
  void aPersonIsGivenTheBindingOfTheViewerRoleForThemselves() {
    assertThat(CommandFailure.fromCluster("https://api", forbidden("Alice@Example.com"), CommandFailure.Reader.PERSON).getMessage())
        .endsWith("kubectl create clusterrolebinding podsweeper-viewer-alice-example.com --clusterrole=podsweeper-viewer --user=Alice@Example.com");
    // A ServiceAccount running plan (a CI job, say) is bound as one.
    assertThat(CommandFailure.fromCluster("https://api", forbidden("system:serviceaccount:ci:planner"), CommandFailure.Reader.PERSON).getMessage())
        .endsWith("kubectl create clusterrolebinding podsweeper-viewer-system-serviceaccount-ci-planner --clusterrole=podsweeper-viewer"
            + " --serviceaccount=ci:planner");
  }
}
