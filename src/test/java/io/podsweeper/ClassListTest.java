package io.podsweeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The image's class list ({@code manifests/container/podsweeper.classlist}, from {@code scripts/cds-classlist.sh}):
 * the class-data archive is made from it at image build, and a class it names that the code no longer has is only
 * skipped, so start-up would quietly lose what the archive saves. This says when Podsweeper's own classes have moved.
 */
class ClassListTest {
  private static final Path CLASS_LIST =
      Path.of(System.getProperty("podsweeper.projectDir", ".")).resolve("manifests/container/podsweeper.classlist");

  @Test
  void namesOnlyClassesTheCodeHasAndCoversARealStart() throws IOException {
    List<String> ours = Files.readAllLines(CLASS_LIST).stream()
        .filter(line -> line.startsWith("io/podsweeper/"))
        .map(line -> line.split(" ")[0].replace('/', '.'))
        .toList();

    assertThat(ours).as("a start's classes, not only the offline commands'")
        .contains("io.podsweeper.app.Service", "io.podsweeper.kube.ResumingInformers", "io.podsweeper.kube.PodRemover",
            "io.podsweeper.kube.Leadership", "io.podsweeper.http.HttpApi");
    assertThat(ours).as("classes in %s that the code no longer has: run scripts/cds-classlist.sh", CLASS_LIST)
        .filteredOn(name -> !exists(name))
        .isEmpty();
  }

  private static boolean exists(String name) {
    try {
      Class.forName(name, false, ClassListTest.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }
}
