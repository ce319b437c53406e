package io.podsweeper.testing;

import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A user (for impersonation) with the shipped ClusterRole's rights, whose right to watch one resource can be taken away
 * and given back: how a test keeps one informer from watching again after its connections were cut.
 */
public record WatchGrant(KubernetesClient admin, String user) {
  /** Grants the shipped ClusterRole, less {@code watch} on the rule naming {@code resource} unless {@code watch}. */
  public void allow(String resource, boolean watch) throws IOException {
    ClusterRole shipped;
    try (InputStream manifests = Files.newInputStream(Path.of(System.getProperty("podsweeper.projectDir", "."), "manifests/rbac.yaml"))) {
      shipped = admin.load(manifests).items().stream().filter(ClusterRole.class::isInstance).map(ClusterRole.class::cast)
          .findFirst().orElseThrow();
    }
    List<PolicyRule> rules = shipped.getRules().stream().map(r -> !watch && r.getResources().get(0).equals(resource)
        ? new PolicyRuleBuilder(r).withVerbs(r.getVerbs().stream().filter(v -> !v.equals("watch")).toList()).build() : r).toList();
    admin.rbac().clusterRoles().resource(new ClusterRoleBuilder().withNewMetadata().withName(user).endMetadata().withRules(rules).build())
        .serverSideApply();
    admin.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata().withName(user).endMetadata()
        .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", user)
        .addNewSubject().withKind("User").withName(user).withApiGroup("rbac.authorization.k8s.io").endSubject().build()).serverSideApply();
  }
}
