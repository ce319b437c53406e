package io.podsweeper.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.URLUtils;
import java.util.Optional;

/**
 * The benchmarks' reference LIST of every pod, asked for as the tools ask for theirs, bytes read and discarded: the
 * server's share of a start (docs/benchmarks.md). In the kube package for the very continue-token reader the
 * informers page with ({@link PagedLists#continueToken}).
 */
public final class ReferenceList {
  private ReferenceList() {}

  /** How long and how many bytes (as sent, compressed): the answer to one list. */
  public record Timing(double seconds, long bytes, int requests) {}

  /**
   * Every pod, as protobuf, compressed: from etcd in pages of {@link ResumingInformers#PAGE} (a consistent read, as
   * Podsweeper's consistent lists ask for it), or from the API server's watch cache in one answer
   * ({@code resourceVersion=0}: how client-go's informers, so the descheduler, and Podsweeper's informers list at start).
   */
  public static Timing pods(KubernetesClient client, boolean fromWatchCache) throws Exception {
    HttpClient http = client.getHttpClient();
    String base = client.getMasterUrl().toString().replaceAll("/$", "") + "/api/v1/pods";
    long started = System.nanoTime();
    long bytes = 0;
    int requests = 0;
    Optional<String> next = Optional.empty();
    do {
      URLUtils.URLBuilder url = new URLUtils.URLBuilder(base);
      if (fromWatchCache) {
        url.addQueryParameter("resourceVersion", "0");
      } else {
        url.addQueryParameter("limit", String.valueOf(ResumingInformers.PAGE));
        next.ifPresent(token -> url.addQueryParameter("continue", token));
      }
      HttpRequest request = http.newHttpRequestBuilder().url(url.build()).header("Accept", KubeProtobuf.ACCEPT)
          .header("Accept-Encoding", "gzip").build();
      HttpResponse<byte[]> response = http.sendAsync(request, byte[].class).get();
      if (!response.isSuccessful()) {
        throw new IllegalStateException("LIST " + url.build() + ": " + response.code());
      }
      bytes += response.body().length;
      requests++;
      next = fromWatchCache ? Optional.empty() : PagedLists.continueToken(response.body());
    } while (next.isPresent());
    return new Timing((System.nanoTime() - started) / 1e9, bytes, requests);
  }
}
