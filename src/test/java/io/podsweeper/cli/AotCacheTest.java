package io.podsweeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class AotCacheTest {
  @Test
  void aCacheAskedForAndNotMappedIsNamed() {
    assertThat(AotCache.unused(List.of("-Xms64m", "-XX:AOTCache=/app/podsweeper.aot"), "mixed mode")).contains("/app/podsweeper.aot");
  }

  @Test
  void aMappedCacheIsNot() {
    assertThat(AotCache.unused(List.of("-XX:AOTCache=/app/podsweeper.aot"), "mixed mode, sharing")).isEmpty();
  }

  /** Java 17's class-data archive is dropped as silently, and said the same way. */
  @Test
  void aClassDataArchiveIsJudgedAlike() {
    assertThat(AotCache.unused(List.of("-XX:SharedArchiveFile=/app/podsweeper.jsa"), "mixed mode")).contains("/app/podsweeper.jsa");
    assertThat(AotCache.unused(List.of("-XX:SharedArchiveFile=/app/podsweeper.jsa"), "mixed mode, sharing")).isEmpty();
  }

  @Test
  void noCacheAskedForAndSharingTurnedOffAreNotWarnedAbout() {
    assertThat(AotCache.unused(List.of("-Xms64m"), "mixed mode")).isEmpty();
    assertThat(AotCache.unused(List.of("-XX:AOTCache=/app/podsweeper.aot", "-Xshare:off"), "mixed mode")).isEmpty();
    assertThat(AotCache.unused(List.of("-XX:AOTCache=/app/podsweeper.aot", "-XX:AOTMode=off"), "mixed mode")).isEmpty();
  }

  @Test
  void theLastCacheFlagIsTheOneTheJvmTried() {
    assertThat(AotCache.unused(List.of("-XX:AOTCache=/a.aot", "-XX:AOTCache=/b.aot"), "interpreted mode")).contains("/b.aot");
  }
}
