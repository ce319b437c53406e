package io.podsweeper.kube;

import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.compression.JdkZlibDecoder;
import io.netty.handler.codec.compression.ZlibWrapper;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Asks the API server for gzip-compressed responses and inflates them before fabric8 reads them, as client-go does.
 *
 * <p>Why: a list of 10,000 pods is 77 MiB of JSON, about a tenth of that compressed. With the JIT limited to C1
 * (docs/benchmarks.md), AES-GCM runs without its intrinsics, and decrypting the uncompressed bytes was ~40 % of the
 * decoding threads' CPU at start; inflating is native zlib. The server compresses only what is worth it (lists above
 * 128 KiB; never a watch), so each response is looked at: gzip's first byte, 0x1f, is never the first byte of JSON.
 * fabric8's JDK client neither asks for nor inflates compressed responses, and its interceptors see the body before
 * its headers, hence the sniffing.
 */
final class CompressedResponses implements Interceptor {
  static final String NAME = "gzip";
  private static final byte GZIP_FIRST_BYTE = 0x1f;

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    builder.setHeader("Accept-Encoding", "gzip");
  }

  @Override
  public AsyncBody.Consumer<List<ByteBuffer>> consumer(AsyncBody.Consumer<List<ByteBuffer>> consumer, HttpRequest request) {
    return new Inflating(consumer);
  }

  /** Passes a plain body through; inflates a gzip one, chunk by chunk, as it arrives. */
  private static final class Inflating implements AsyncBody.Consumer<List<ByteBuffer>> {
    private final AsyncBody.Consumer<List<ByteBuffer>> next;
    /** Null until the first byte has been seen; then a gzip decoder, or none for a plain body. */
    private EmbeddedChannel inflater;
    private boolean plain;

    Inflating(AsyncBody.Consumer<List<ByteBuffer>> next) {
      this.next = next;
    }

    @Override
    public void consume(List<ByteBuffer> buffers, AsyncBody body) throws Exception {
      if (inflater == null && !plain) {
        ByteBuffer first = buffers.stream().filter(ByteBuffer::hasRemaining).findFirst().orElse(null);
        if (first == null) {
          next.consume(buffers, body);
          return;
        }
        if (first.get(first.position()) == GZIP_FIRST_BYTE) {
          inflater = new EmbeddedChannel(new JdkZlibDecoder(ZlibWrapper.GZIP, 0));
          body.done().whenComplete((ok, failure) -> inflater.finishAndReleaseAll());
        } else {
          plain = true;
        }
      }
      if (plain) {
        next.consume(buffers, body);
        return;
      }
      List<ByteBuffer> inflated = new ArrayList<>();
      for (ByteBuffer buffer : buffers) {
        inflater.writeInbound(Unpooled.copiedBuffer(buffer));
        for (ByteBuf out = inflater.readInbound(); out != null; out = inflater.readInbound()) {
          ByteBuffer copy = ByteBuffer.allocate(out.readableBytes());
          out.readBytes(copy);
          out.release();
          inflated.add(copy.flip());
        }
      }
      if (inflated.isEmpty()) {
        body.consume(); // a chunk of header or trailer: nothing to hand on yet, ask for more
      } else {
        next.consume(inflated, body);
      }
    }

    @Override
    public <U> U unwrap(Class<U> target) {
      return target.isInstance(this) ? target.cast(this) : next.unwrap(target);
    }
  }
}
