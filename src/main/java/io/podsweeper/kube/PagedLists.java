package io.podsweeper.kube;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PushbackInputStream;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.zip.GZIPInputStream;

/**
 * A paged list that asks for the next page while it decodes the one before.
 *
 * <p>Why: fabric8's informer asks for page N+1 only once page N is decoded and stored, so the API server waits while
 * the client decodes, and the client waits while the server reads etcd and encodes: at 10,000 pods, 20 pages of 500
 * took 4.5 s where either side alone needed about half (docs/benchmarks.md, fourth pass). A page's continue token
 * comes before its items (the API server writes a list's metadata first), so it is read from the body's first bytes,
 * the next page is asked for, and only then is the body decoded. The informer still asks for each page itself, in
 * order; it gets the one already asked for when its continue token matches, and a fresh request otherwise. At most
 * one page is asked for ahead, so at most two are held at once, as before.
 *
 * @param <L> the decoded list
 */
final class PagedLists<L> implements AutoCloseable {
  private static final JsonFactory JSON = new JsonFactory();
  private static final byte GZIP_FIRST_BYTE = 0x1f;
  private static final int INFLATE_BUFFER = 64 * 1024;

  /**
   * The body of a successful list response as the server sent it, gzip-compressed if it was asked to be and found the
   * list worth compressing; exceptionally a KubernetesClientException, as fabric8's list fails.
   */
  interface Fetch {
    CompletableFuture<byte[]> page(ListOptions options);
  }

  private final Fetch fetch;
  /** Reads a page from its body (JSON, or the API server's protobuf where that was asked for), inflated as it is read. */
  private final Function<InputStream, L> decode;
  /** The next page, asked for before the informer asks for it; null when there is none. */
  private final AtomicReference<Ahead> ahead = new AtomicReference<>();

  private record Ahead(String continueToken, CompletableFuture<byte[]> body) {}

  PagedLists(Fetch fetch, Function<InputStream, L> decode) {
    this.fetch = fetch;
    this.decode = decode;
  }

  /** One page, as the informer asks for it: the first with no continue token, the next ones with the token of the last. */
  CompletableFuture<L> page(ListOptions options) {
    Ahead asked = ahead.getAndSet(null);
    CompletableFuture<byte[]> body;
    if (asked != null && asked.continueToken().equals(options.getContinue())) {
      body = asked.body();
    } else {
      drop(asked); // a list that started over, or an informer that went on without it
      body = fetch.page(options);
    }
    return body.thenApply(bytes -> {
      continueToken(bytes).ifPresent(token -> askAhead(options, token));
      return decode.apply(inflated(bytes));
    });
  }

  private void askAhead(ListOptions options, String token) {
    ListOptions next = new ListOptionsBuilder().withLimit(options.getLimit()).withContinue(token).build();
    drop(ahead.getAndSet(new Ahead(token, fetch.page(next))));
  }

  /** Gives up a page asked for ahead, if there is one: nothing waits for it any more. */
  private static void drop(Ahead asked) {
    if (asked != null) {
      asked.body().cancel(false);
    }
  }

  /**
   * The list's continue token, if its metadata comes before its items (as the API server writes it) and has one.
   * Reads no further than the metadata.
   */
  static Optional<String> continueToken(byte[] list) {
    try (InputStream in = inflated(list)) {
      KubeProtobuf.Body body = KubeProtobuf.body(in);
      return body.protobuf() ? KubeProtobuf.continueToken(body.in()) : jsonListMetadata(body.in(), "continue");
    } catch (IOException | IllegalArgumentException e) {
      // Not a list that far: the decoder will say what is wrong with it.
      return Optional.empty();
    }
  }

  /** The resourceVersion of a list's JSON, if its metadata comes before its items and has one. */
  static Optional<String> resourceVersion(byte[] list) {
    try (InputStream in = inflated(list)) {
      return jsonListMetadata(in, "resourceVersion");
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** A field of a JSON list's metadata, if the metadata comes before the items and has it. Reads no further than the metadata. */
  private static Optional<String> jsonListMetadata(InputStream json, String wanted) throws IOException {
    try (JsonParser parser = JSON.createParser(json)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return Optional.empty();
      }
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        parser.nextToken();
        if (field.equals("items")) {
          return Optional.empty();
        }
        if (field.equals("metadata") && parser.currentToken() == JsonToken.START_OBJECT) {
          while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String name = parser.currentName();
            parser.nextToken();
            if (name.equals(wanted)) {
              return Optional.ofNullable(parser.getValueAsString()).filter(token -> !token.isEmpty());
            }
            parser.skipChildren();
          }
          return Optional.empty();
        }
        parser.skipChildren();
      }
      return Optional.empty();
    }
  }

  /**
   * A list's body, inflated as it is read if the server compressed it (gzip's first byte, 0x1f, begins neither JSON nor
   * the API server's protobuf).
   *
   * <p>Why inflated here, as it is decoded, and not as it arrives: a page of 500 pods is about 4 MB of JSON, and
   * 2.5 % (the load test's pods) to 10 % (realistic ones) of that compressed. Inflated first, it was copied three
   * times on its way to the decoder, and these copies were a quarter of the bytes allocated while 10,000 pods were
   * listed (docs/benchmarks.md, fifth pass).
   */
  static InputStream inflated(byte[] body) {
    try {
      return inflated(new ByteArrayInputStream(body));
    } catch (IOException e) {
      throw new UncheckedIOException("a list response that is not valid gzip", e);
    }
  }

  /** The same of a body that is still arriving: a list in one answer, from the watch cache ({@link ResumingInformers}). */
  static InputStream inflated(InputStream body) throws IOException {
    PushbackInputStream in = new PushbackInputStream(body, 1);
    int first = in.read();
    if (first < 0) {
      return in;
    }
    in.unread(first);
    return first == GZIP_FIRST_BYTE ? new GZIPInputStream(in, INFLATE_BUFFER) : in;
  }

  @Override
  public void close() {
    drop(ahead.getAndSet(null));
  }
}
