package io.podsweeper.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager;
import io.fabric8.kubernetes.client.dsl.internal.BaseOperation;
import io.fabric8.kubernetes.client.dsl.internal.OperationContext;
import io.fabric8.kubernetes.client.dsl.internal.WatchHTTPManager;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.net.MalformedURLException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A watch as client-go makes one: a streamed GET, one stream of the client's HTTP/2 connection to the API server, where
 * fabric8's informers open a WebSocket. The JDK's WebSockets are HTTP/1.1, a TLS connection each: every informer held a
 * connection of its own (eight at start, eight TLS handshakes on both sides), and every renewal of a watch (each every 5
 * to 10 minutes) made a new one. Streamed, the watches share the one connection the lists and removals already use.
 *
 * <p>It is fabric8's HTTP watch, with two things of fabric8's that do not hold for it put right here:
 * <ul>
 *   <li>fabric8 counts that watch as started only once the first bytes arrive, so the watch of a quiet kind (no
 *       PriorityClass changes for an hour) would never count as watching. Here it is watching from the server's 2xx
 *       answer until the end of that answer's body (its {@link Answers}), as a WebSocket is from its upgrade to its close;
 *   <li>fabric8 decodes each chunk of the body as UTF-8 alone, into a buffer whose unused end it keeps (a character of
 *       two or more bytes leaves NULs behind) and which splits a character that straddles two chunks. Here the body is
 *       decoded across chunks and passed on as ASCII, each other character as JSON's {@code \}{@code uXXXX} escape
 *       ({@link AsciiJson}): the same JSON, read the same, whatever a label or a kill switch's reason says.
 * </ul>
 *
 * <p>A first request the server refuses ends the watch there, without retries, and fails {@link #opened()}, as a
 * refused WebSocket fails fabric8's: the informer lists again later. A refusal of a later request is retried by fabric8,
 * as for a WebSocket.
 */
class StreamedWatch<T extends HasMetadata, L extends KubernetesResourceList<T>> extends WatchHTTPManager<T, L> {
  private final Answers answers;

  /**
   * @param answers new, for this watch alone: it sees every answer of the client made for this watch
   * @param http the client whose connection the watch shares (a client for this watch is derived from it)
   * @param reconnectLimit how often fabric8 may start it again by itself after it ends (-1: always), unless its watcher
   *     is {@link Watcher#reconnecting()}
   */
  StreamedWatch(Answers answers, HttpClient http, BaseOperation<T, L, ?> source, ListOptions options, Watcher<T> watcher,
      int reconnectLimit) throws MalformedURLException {
    super(http.newBuilder().addOrReplaceInterceptor(Answers.class.getName(), answers).build(), source, options, watcher,
        source.getWatchReconnectInterval(), reconnectLimit);
    this.answers = answers;
  }

  /**
   * A watch of what {@code operation} selects (its name, fields and labels), with its client's reconnect limit, as
   * fabric8's own watch of it would be; it completes once the server has answered 2xx ({@link #opened()}).
   */
  static <T extends HasMetadata, L extends KubernetesResourceList<T>> CompletableFuture<AbstractWatchManager<T>> of(
      BaseOperation<T, L, ?> operation, ListOptions options, Watcher<T> watcher) {
    OperationContext context = operation.getOperationContext();
    options.setWatch(true);
    Optional.ofNullable(context.getFieldQueryParam()).ifPresent(options::setFieldSelector);
    Optional.ofNullable(context.getLabelQueryParam()).ifPresent(options::setLabelSelector);
    try {
      return new StreamedWatch<>(new Answers(), context.getHttpClient(), operation, options, watcher,
          operation.getRequestConfig().getWatchReconnectLimit()).opened();
    } catch (MalformedURLException e) {
      return CompletableFuture.failedFuture(KubernetesClientException.launderThrowable(e));
    }
  }

  /** Completes with this watch once the server has answered its first request 2xx; fails if it refused it. */
  CompletableFuture<AbstractWatchManager<T>> opened() {
    return answers.first.thenApply(answered -> this);
  }

  /** From the server's 2xx answer to the end of its body. */
  @Override
  public boolean isWatching() {
    return answers != null && answers.open();
  }

  /**
   * A refusal of the first request ends this watch ({@code true}: fabric8 neither retries nor tells the watcher) and
   * fails {@link #opened()}. Everything else, as fabric8 handles it.
   */
  @Override
  protected boolean onStatus(Status status, WatchRequestState state) {
    if (answers == null || answers.everOpen()) {
      return super.onStatus(status, state);
    }
    answers.first.completeExceptionally(new KubernetesClientException(status));
    return true;
  }

  /** What the server answered this watch's requests, seen by an interceptor of the watch's own client. */
  static final class Answers implements Interceptor {
    final CompletableFuture<Void> first = new CompletableFuture<>();
    /** The body of the answer being read; null between answers. */
    private final AtomicReference<AsyncBody> open = new AtomicReference<>();

    @Override
    public void after(HttpRequest request, HttpResponse<?> response, AsyncBody.Consumer<List<ByteBuffer>> consumer) {
      if (response.isSuccessful() && response.body() instanceof AsyncBody body) {
        open.set(body);
        body.done().whenComplete((ended, failed) -> open.compareAndSet(body, null));
        first.complete(null);
      }
    }

    @Override
    public AsyncBody.Consumer<List<ByteBuffer>> consumer(AsyncBody.Consumer<List<ByteBuffer>> consumer, HttpRequest request) {
      return new AsciiJson(consumer);
    }

    boolean open() {
      AsyncBody body = open.get();
      return body != null && !body.done().isDone();
    }

    boolean everOpen() {
      return first.isDone() && !first.isCompletedExceptionally();
    }
  }

  /**
   * Hands a body of UTF-8 JSON on as ASCII: decoded across chunk borders, each character beyond ASCII as its
   * {@code \}{@code uXXXX} escape (a character beyond the BMP as its two surrogates' escapes), which JSON reads as the
   * character itself. Outside a string no such character is valid JSON anyway.
   */
  static final class AsciiJson implements AsyncBody.Consumer<List<ByteBuffer>> {
    private static final char[] HEX = "0123456789abcdef".toCharArray();
    private final AsyncBody.Consumer<List<ByteBuffer>> next;
    private final CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPLACE).onUnmappableCharacter(CodingErrorAction.REPLACE);
    /** The start of a character whose other bytes come in the next chunk (at most three bytes). */
    private ByteBuffer carried = ByteBuffer.allocate(0);

    AsciiJson(AsyncBody.Consumer<List<ByteBuffer>> next) {
      this.next = next;
    }

    @Override
    public void consume(List<ByteBuffer> chunks, AsyncBody body) throws Exception {
      StringBuilder ascii = new StringBuilder();
      for (ByteBuffer chunk : chunks) {
        ByteBuffer in = chunk;
        if (carried.hasRemaining()) {
          in = ByteBuffer.allocate(carried.remaining() + chunk.remaining()).put(carried).put(chunk).flip();
        }
        CharBuffer chars = CharBuffer.allocate(in.remaining());
        utf8.decode(in, chars, false);
        carried = in.hasRemaining() ? ByteBuffer.allocate(in.remaining()).put(in).flip() : ByteBuffer.allocate(0);
        chars.flip();
        while (chars.hasRemaining()) {
          char c = chars.get();
          if (c < 0x80) {
            ascii.append(c);
          } else {
            ascii.append('\\').append('u').append(HEX[c >> 12]).append(HEX[(c >> 8) & 0xf]).append(HEX[(c >> 4) & 0xf]).append(HEX[c & 0xf]);
          }
        }
      }
      next.consume(List.of(ByteBuffer.wrap(ascii.toString().getBytes(StandardCharsets.US_ASCII))), body);
    }
  }
}
