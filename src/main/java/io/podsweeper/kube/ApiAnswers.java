package io.podsweeper.kube;

import io.fabric8.kubernetes.client.KubernetesClientException;

/** What the API server answered, for a log line or an error message. */
final class ApiAnswers {
  private ApiAnswers() {}

  /** Its code and message on one line, not the client's dump of the whole Status. */
  static String oneLine(KubernetesClientException e) {
    String message = e.getStatus() != null && e.getStatus().getMessage() != null ? e.getStatus().getMessage() : e.getMessage();
    return (e.getCode() > 0 ? e.getCode() + " " : "") + String.valueOf(message).replaceAll("\\s+", " ").trim();
  }
}
