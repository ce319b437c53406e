package io.podsweeper.kube;

import com.fasterxml.jackson.databind.node.TextNode;
import io.podsweeper.removal.RequestResult;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;

/**
 * A JSON patch (RFC 6902) as text, its tests first, sent as it is: not through fabric8's patch, which reads the object
 * first (a {@code get} the service's RBAC does not grant). The writes to pods' status and to nodes go this way.
 */
final class JsonPatch {
  private final List<String> ops = new ArrayList<>();

  /** The value at {@code path} must be {@code value}, or nothing of the patch is applied (422). */
  JsonPatch test(String path, String value) {
    return op("test", path, quoted(value));
  }

  /** {@code add}, {@code replace} ({@code json}: the value, as JSON) or {@code remove} ({@code json}: null). */
  JsonPatch op(String op, String path, String json) {
    ops.add("{\"op\":\"" + op + "\",\"path\":" + quoted(path) + (json == null ? "" : ",\"value\":" + json) + "}");
    return this;
  }

  /**
   * Sends it to {@code path} with {@code http} (its client has no HTTP-layer retries); anything but success is logged
   * on {@code log} as "cannot {what} ({on}): code message" and answers false.
   */
  boolean send(PodRemover http, String path, Logger log, String what, String on) {
    RequestResult result = http.exchange(http.request(path).patch("application/json-patch+json", toString()));
    if (result.outcome() != RequestResult.Outcome.REMOVED) {
      // 404: gone; 422: a test failed (the object changed since it was read); 403: not allowed.
      log.warn("cannot {} ({}): {} {}", what, on, result.code(), result.message());
      return false;
    }
    return true;
  }

  static String quoted(String value) {
    return TextNode.valueOf(value).toString();
  }

  @Override
  public String toString() {
    return "[" + String.join(",", ops) + "]";
  }
}
