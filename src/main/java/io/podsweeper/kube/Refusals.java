package io.podsweeper.kube;

import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.net.URI;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The last read the API server refused (401 or 403) to any client of the service, with its verb and resource: when
 * RBAC is revoked under a running replica, its watches end and cannot start again, and the log says so, naming the
 * refusal, instead of calling the server unreachable. An interceptor of the HTTP client every client shares
 * ({@link KubeClients}), so it sees the informers' lists and watches whoever made them.
 */
public final class Refusals implements Interceptor {
  /**
   * A refused read: its answer ({@code 403 Forbidden}) and what it asked, e.g. {@code watch pods at the cluster scope};
   * {@code sequence} counts the refusals, from 1.
   */
  public record Refusal(long sequence, String answer, String request) {}

  private final AtomicReference<Refusal> last = new AtomicReference<>();

  /** How many reads were refused so far. */
  public long count() {
    Refusal now = last.get();
    return now == null ? 0 : now.sequence();
  }

  /** The last refused read (get, list or watch) after the first {@code count} refusals; writes are the removal path's to report. */
  public Optional<Refusal> lastAfter(long count) {
    return Optional.ofNullable(last.get()).filter(r -> r.sequence() > count);
  }

  @Override
  public CompletableFuture<Boolean> afterFailure(BasicBuilder builder, HttpResponse<?> response, RequestTags tags) {
    int code = response.code();
    HttpRequest request = response.request();
    if ((code == 401 || code == 403) && request != null && "GET".equals(request.method())) {
      last.updateAndGet(before -> new Refusal(before == null ? 1 : before.sequence() + 1,
          code + (code == 401 ? " Unauthorized" : " Forbidden"), describe(request.uri())));
    }
    return CompletableFuture.completedFuture(false);
  }

  /**
   * A read as RBAC names it: {@code list pods at the cluster scope}, {@code watch configmaps in namespace podsweeper},
   * {@code get leases.coordination.k8s.io podsweeper in namespace podsweeper}.
   */
  static String describe(URI uri) {
    List<String> parts = Arrays.stream(uri.getPath().split("/")).filter(p -> !p.isEmpty()).toList();
    boolean core = !parts.isEmpty() && parts.get(0).equals("api");
    int start = core ? 2 : 3;
    if (parts.size() <= start) {
      return "get " + uri.getPath();
    }
    List<String> rest = parts.subList(start, parts.size());
    String namespace = null;
    if (rest.size() > 2 && rest.get(0).equals("namespaces")) {
      namespace = rest.get(1);
      rest = rest.subList(2, rest.size());
    }
    String resource = rest.get(0) + (core ? "" : "." + parts.get(1)) + (rest.size() > 2 ? "/" + rest.get(2) : "");
    String name = rest.size() > 1 ? rest.get(1) : null;
    String query = Optional.ofNullable(uri.getQuery()).orElse("");
    boolean watch = Arrays.asList(query.split("&")).contains("watch=true") || Arrays.asList(query.split("&")).contains("watch=1");
    String verb = watch ? "watch" : name == null ? "list" : "get";
    return verb + " " + resource + (name == null ? "" : " " + name)
        + (namespace == null ? (name == null ? " at the cluster scope" : "") : " in namespace " + namespace);
  }
}
