package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.StandardHttpRequest;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

class CompressedResponsesTest {
  private static final String JSON = "{\"kind\":\"PodList\",\"items\":[" + "{\"metadata\":{\"name\":\"p\"}},".repeat(5000) + "{}]}";
  private final HttpRequest request = new StandardHttpRequest.Builder().uri(URI.create("https://example.invalid/api/v1/pods")).build();

  @Test
  void asksForGzip() {
    StandardHttpRequest.Builder builder = new StandardHttpRequest.Builder().uri(URI.create("https://example.invalid/api/v1/pods"));
    new CompressedResponses().before(builder, request, null);
    assertThat(builder.build().headers("Accept-Encoding")).containsExactly("gzip");
  }

  @Test
  void aGzipBodyArrivesInflatedWhereverItsChunksAreCut() throws Exception {
    byte[] gzip = gzip(JSON);
    for (int chunk : new int[] {1, 7, 10, 4096, gzip.length}) {
      assertThat(received(gzip, chunk)).as("chunks of %d bytes", chunk).isEqualTo(JSON);
    }
  }

  @Test
  void aPlainBodyPassesUnchanged() throws Exception {
    assertThat(received(JSON.getBytes(StandardCharsets.UTF_8), 100)).isEqualTo(JSON);
  }

  @Test
  void aCorruptGzipBodyFailsInsteadOfPassingGarbage() throws Exception {
    byte[] gzip = gzip(JSON);
    gzip[gzip.length / 2] ^= 0x55;
    assertThatThrownBy(() -> received(gzip, 512)).isInstanceOf(Exception.class);
  }

  private String received(byte[] sent, int chunk) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    AsyncBody.Consumer<List<ByteBuffer>> sink = (buffers, asyncBody) -> buffers.forEach(b -> {
      byte[] bytes = new byte[b.remaining()];
      b.get(bytes);
      out.writeBytes(bytes);
    });
    AsyncBody.Consumer<List<ByteBuffer>> consumer = new CompressedResponses().consumer(sink, request);
    CompletableFuture<Void> done = new CompletableFuture<>();
    AsyncBody body = new AsyncBody() {
      @Override
      public void consume() {}

      @Override
      public CompletableFuture<Void> done() {
        return done;
      }

      @Override
      public void cancel() {}
    };
    for (int at = 0; at < sent.length; at += chunk) {
      List<ByteBuffer> buffers = new ArrayList<>();
      buffers.add(ByteBuffer.wrap(sent, at, Math.min(chunk, sent.length - at)).slice());
      consumer.consume(buffers, body);
    }
    done.complete(null);
    return out.toString(StandardCharsets.UTF_8);
  }

  private static byte[] gzip(String text) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (GZIPOutputStream gzip = new GZIPOutputStream(bytes)) {
      gzip.write(text.getBytes(StandardCharsets.UTF_8));
    }
    return bytes.toByteArray();
  }
}
