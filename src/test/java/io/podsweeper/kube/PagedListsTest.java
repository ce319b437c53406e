package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/** The next page is asked for before the one before is decoded, and a page is never one the informer did not ask for. */
class PagedListsTest {
  /** Every page asked for, by continue token ("" for a first page), and its response. */
  private final Map<String, CompletableFuture<byte[]>> asked = new LinkedHashMap<>();
  /** What had been asked for when each page was decoded. */
  private final List<String> decoded = new ArrayList<>();
  private final PagedLists<String> pages = new PagedLists<>(options -> {
    CompletableFuture<byte[]> body = new CompletableFuture<>();
    asked.put(options.getContinue() == null ? "" : options.getContinue(), body);
    return body;
  }, json -> {
    String page = read(json);
    decoded.add(page.substring(page.indexOf("items")) + " while asked " + asked.keySet());
    return page;
  });

  private static byte[] list(String continueToken, String items) {
    return ("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"7\"" + (continueToken == null ? "" : ",\"continue\":\"" + continueToken + "\"")
        + "},\"items\":[" + items + "]}").getBytes(StandardCharsets.UTF_8);
  }

  private static ListOptions page(String continueToken) {
    return new ListOptionsBuilder().withLimit(500L).withContinue(continueToken).build();
  }

  @Test
  void theNextPageIsAskedForBeforeThisOneIsDecoded() {
    CompletableFuture<String> first = pages.page(page(null));
    asked.get("").complete(list("c1", "\"p1\""));
    assertThat(first).isCompleted();
    assertThat(decoded).containsExactly("items\":[\"p1\"]} while asked [, c1]");

    CompletableFuture<String> second = pages.page(page("c1"));
    assertThat(asked).hasSize(2); // the page asked for ahead, not a second request for it
    asked.get("c1").complete(list(null, "\"p2\""));
    assertThat(second).isCompleted();
    assertThat(decoded).endsWith("items\":[\"p2\"]} while asked [, c1]"); // the last page: nothing asked ahead
  }

  @Test
  void aPageAskedForWithAnotherTokenIsAskedForAfreshAndTheOneAheadDropped() {
    pages.page(page(null));
    asked.get("").complete(list("c1", ""));
    CompletableFuture<byte[]> ahead = asked.get("c1");

    pages.page(page(null)); // the informer listed again from the start
    assertThat(ahead).isCancelled();
    assertThat(asked).hasSize(2);
    assertThat(asked.get("")).isNotCompleted(); // a new request for the first page
  }

  @Test
  void aFailedPageFailsTheListAsTheServerSaidIt() {
    pages.page(page(null));
    asked.get("").complete(list("c1", ""));
    CompletableFuture<String> second = pages.page(page("c1"));
    asked.get("c1").completeExceptionally(new KubernetesClientException("continue token expired", 410, null));
    assertThatThrownBy(second::join).isInstanceOf(CompletionException.class)
        .cause().isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(410));
  }

  @Test
  void closingDropsThePageAskedForAhead() {
    pages.page(page(null));
    asked.get("").complete(list("c1", ""));
    pages.close();
    assertThat(asked.get("c1")).isCancelled();
  }

  @Test
  void theContinueTokenIsReadFromTheMetadataOnly() {
    assertThat(PagedLists.continueToken(list("abc", "{\"metadata\":{\"continue\":\"not-this\"}}"))).contains("abc");
    assertThat(PagedLists.continueToken(list(null, "{\"metadata\":{\"continue\":\"not-this\"}}"))).isEmpty();
    assertThat(PagedLists.continueToken(list("", ""))).isEmpty();
    // Items before the metadata: no token rather than a read of the whole list (the page is still decoded).
    assertThat(PagedLists.continueToken("{\"items\":[],\"metadata\":{\"continue\":\"late\"}}".getBytes(StandardCharsets.UTF_8))).isEmpty();
    assertThat(PagedLists.continueToken("not json".getBytes(StandardCharsets.UTF_8))).isEmpty();
  }

  /** How a fence is read: the resourceVersion of a list of nothing (ResumingInformers). */
  @Test
  void theResourceVersionIsReadFromTheMetadataOnly() {
    assertThat(PagedLists.resourceVersion(list(null, "{\"metadata\":{\"resourceVersion\":\"9\"}}"))).contains("7");
    assertThat(PagedLists.resourceVersion("{\"kind\":\"PodList\",\"metadata\":{}}".getBytes(StandardCharsets.UTF_8))).isEmpty();
    assertThat(PagedLists.resourceVersion("not json".getBytes(StandardCharsets.UTF_8))).isEmpty();
  }

  /** A compressed page (as the server sends a list above 128 KiB) is inflated for its token and for its decoding. */
  @Test
  void aCompressedPageIsReadAsItsJson() throws IOException {
    CompletableFuture<String> first = pages.page(page(null));
    asked.get("").complete(gzip(list("c1", "\"p1\"")));
    assertThat(first.join()).isEqualTo(new String(list("c1", "\"p1\""), StandardCharsets.UTF_8));
    assertThat(asked).containsKey("c1");
  }

  @Test
  void aCorruptCompressedPageFailsTheList() throws IOException {
    byte[] corrupt = gzip(list(null, "\"p1\", \"p2\", \"p3\""));
    corrupt[corrupt.length / 2] ^= 0x55;
    CompletableFuture<String> first = pages.page(page(null));
    asked.get("").complete(corrupt);
    assertThatThrownBy(first::join).isInstanceOf(CompletionException.class);
  }

  /** A list in one answer (from the watch cache) is inflated as it arrives, compressed or not, and empty stays empty. */
  @Test
  void aStreamedListIsReadAsItsJson() throws IOException {
    byte[] json = list(null, "\"p1\"");
    assertThat(read(PagedLists.inflated(new ByteArrayInputStream(gzip(json))))).isEqualTo(new String(json, StandardCharsets.UTF_8));
    assertThat(read(PagedLists.inflated(new ByteArrayInputStream(json)))).isEqualTo(new String(json, StandardCharsets.UTF_8));
    assertThat(read(PagedLists.inflated(new ByteArrayInputStream(new byte[0])))).isEmpty();
  }

  /** The body as the API server compresses it. */
  static byte[] gzip(byte[] json) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (GZIPOutputStream gzip = new GZIPOutputStream(bytes)) {
      gzip.write(json);
    }
    return bytes.toByteArray();
  }

  private static String read(InputStream json) {
    try (json) {
      return new String(json.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
