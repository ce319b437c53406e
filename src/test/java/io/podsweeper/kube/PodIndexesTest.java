package io.podsweeper.kube;

import static io.podsweeper.cluster.PodFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.policy.LabelSelector;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PodIndexesTest {
  private final PodIndexes indexes = new PodIndexes();

  @Test
  void aPodIsFiledUnderItsNamespaceAndTheNodeItIsBoundTo() {
    PodRecord pending = pod("p").ns("team").unscheduled().build();
    indexes.changed("team/p", null, pending);
    assertThat(indexes.inNamespace("team")).containsExactly(pending);
    assertThat(indexes.onNode("node-a")).isEmpty();

    PodRecord bound = pod("p").ns("team").on("node-a").rv("2").build();
    indexes.changed("team/p", pending, bound);
    assertThat(indexes.inNamespace("team")).containsExactly(bound);
    assertThat(indexes.onNode("node-a")).containsExactly(bound);

    // Recreated under the same name on another node: it has left the first node.
    PodRecord elsewhere = pod("p").ns("team").on("node-b").uid("other").build();
    indexes.changed("team/p", bound, elsewhere);
    assertThat(indexes.onNode("node-a")).isEmpty();
    assertThat(indexes.onNode("node-b")).containsExactly(elsewhere);

    indexes.changed("team/p", elsewhere, null);
    assertThat(indexes.inNamespace("team")).isEmpty();
    assertThat(indexes.onNode("node-b")).isEmpty();
  }

  @Test
  void onlyPodsWithRequiredAntiAffinityAreKeptAsSuch() {
    Scheduling.PodAffinityTerm term = new Scheduling.PodAffinityTerm(new LabelSelector(java.util.Map.of("app", "db"), java.util.List.of()),
        Set.of(), Optional.empty(), "kubernetes.io/hostname");
    PodRecord holding = pod("db-0").antiAffinity(term).build();
    indexes.changed("default/db-0", null, holding);
    assertThat(indexes.withAntiAffinity()).containsExactly(holding);

    PodRecord released = pod("db-0").rv("2").build();
    indexes.changed("default/db-0", holding, released);
    assertThat(indexes.withAntiAffinity()).isEmpty();
  }
}
