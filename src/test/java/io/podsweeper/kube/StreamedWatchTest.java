package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A streamed watch's body reaches fabric8's line reader as ASCII JSON that reads as the server's UTF-8 did, however the
 * body is cut into chunks ({@link StreamedWatch.AsciiJson}).
 */
class StreamedWatchTest {
  private static final String REASON = "Wartung – nicht löschen ✓ 🚧";
  private static final String EVENT = "{\"type\":\"MODIFIED\",\"object\":{\"data\":{\"reason\":\"" + REASON + "\"}}}\n";

  /** What fabric8's HTTP watch does with each chunk it is handed: decodes it alone, and keeps the buffer's whole array. */
  private static String asFabric8ReadsIt(List<ByteBuffer> chunks) {
    StringBuilder read = new StringBuilder();
    for (ByteBuffer chunk : chunks) {
      read.append(StandardCharsets.UTF_8.decode(chunk).array());
    }
    return read.toString();
  }

  private static List<String> handedOn(byte[] body, int... cuts) throws Exception {
    List<ByteBuffer> passed = new ArrayList<>();
    StreamedWatch.AsciiJson ascii = new StreamedWatch.AsciiJson((chunks, asyncBody) -> passed.addAll(chunks));
    int from = 0;
    for (int cut : cuts) {
      ascii.consume(List.of(ByteBuffer.wrap(Arrays.copyOfRange(body, from, cut))), null);
      from = cut;
    }
    ascii.consume(List.of(ByteBuffer.wrap(Arrays.copyOfRange(body, from, body.length))), null);
    return List.of(asFabric8ReadsIt(passed));
  }

  @Test
  void aCharacterBeyondAsciiReadsAsItself() throws Exception {
    byte[] body = EVENT.getBytes(StandardCharsets.UTF_8);
    String read = handedOn(body).get(0);

    assertThat(read).isEqualTo(read.strip() + "\n").doesNotContain("\0").matches("\\p{ASCII}*");
    assertThat(reason(read)).isEqualTo(REASON);
  }

  @Test
  void aCharacterCutBetweenTwoChunksReadsAsItself() throws Exception {
    byte[] body = EVENT.getBytes(StandardCharsets.UTF_8);
    int dash = EVENT.indexOf('–');
    int at = EVENT.substring(0, dash).getBytes(StandardCharsets.UTF_8).length;
    int emoji = EVENT.substring(0, EVENT.indexOf("🚧")).getBytes(StandardCharsets.UTF_8).length;
    // One byte into the dash (three bytes), two and three bytes into the emoji (four bytes).
    assertThat(reason(handedOn(body, at + 1, emoji + 2, emoji + 3).get(0))).isEqualTo(REASON);
  }

  /** The control: handed the server's bytes as they are, fabric8 reads NULs and replacement characters. */
  @Test
  void fabric8AloneReadsTheSameBodyWrong() {
    byte[] body = EVENT.getBytes(StandardCharsets.UTF_8);
    int dash = EVENT.substring(0, EVENT.indexOf('–')).getBytes(StandardCharsets.UTF_8).length;
    String whole = asFabric8ReadsIt(List.of(ByteBuffer.wrap(body)));
    String cut = asFabric8ReadsIt(List.of(ByteBuffer.wrap(body, 0, dash + 1), ByteBuffer.wrap(body, dash + 1, body.length - dash - 1)));

    assertThat(whole).contains("\0");
    assertThat(cut).contains("\uFFFD");
  }

  @SuppressWarnings("unchecked")
  private static String reason(String line) throws Exception {
    Map<String, Object> event = new ObjectMapper().readValue(line.strip(), Map.class);
    return ((Map<String, Map<String, String>>) event.get("object")).get("data").get("reason");
  }

  /** Nothing of a chunk is lost when it ends inside a character: the next chunk completes it. */
  @Test
  void aBodyCutAtEveryByteReadsAsItself() throws Exception {
    byte[] body = EVENT.getBytes(StandardCharsets.UTF_8);
    int[] everyByte = new int[body.length - 1];
    Arrays.setAll(everyByte, i -> i + 1);
    assertThat(reason(handedOn(body, everyByte).get(0))).isEqualTo(REASON);
  }
}
