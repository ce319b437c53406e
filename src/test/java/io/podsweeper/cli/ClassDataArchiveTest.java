package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ClassDataArchiveTest {
  @Test
  void anArchiveAskedForAndNotMappedIsNamed() {
    assertThat(ClassDataArchive.unused(List.of("-Xms64m", "-XX:SharedArchiveFile=/app/podsweeper.jsa"), "mixed mode"))
        .contains("/app/podsweeper.jsa");
  }

  @Test
  void aMappedArchiveIsNot() {
    assertThat(ClassDataArchive.unused(List.of("-XX:SharedArchiveFile=/app/podsweeper.jsa"), "mixed mode, sharing")).isEmpty();
  }

  @Test
  void noArchiveAskedForAndSharingTurnedOffAreNotWarnedAbout() {
    assertThat(ClassDataArchive.unused(List.of("-Xms64m"), "mixed mode")).isEmpty();
    assertThat(ClassDataArchive.unused(List.of("-XX:SharedArchiveFile=/app/podsweeper.jsa", "-Xshare:off"), "mixed mode")).isEmpty();
  }

  @Test
  void theLastArchiveFlagIsTheOneTheJvmTried() {
    assertThat(ClassDataArchive.unused(List.of("-XX:SharedArchiveFile=/a.jsa", "-XX:SharedArchiveFile=/b.jsa"), "interpreted mode"))
        .contains("/b.jsa");
  }
}
