package io.podsweeper.cli;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;

/**
 * A command that could not do its work, said in one line that names what to fix (the server, the flag, the missing
 * permission) instead of the client's stack trace; exit code 1. The cause stays attached for debug logging.
 */
final class CommandFailure extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The API server's 403 message: {@code pods is forbidden: User "u" cannot list resource "pods" in API group ""...}. */
  private static final Pattern FORBIDDEN = Pattern.compile(
      "User \"([^\"]*)\" cannot (\\S+) resource \"([^\"]+)\"(?: in API group \"([^\"]*)\")?(?: in the namespace \"([^\"]*)\")?");

  CommandFailure(String message, Throwable cause) {
    super(message, cause);
  }

  /** Who was reading the cluster when a permission was missing, and so what to grant to whom. */
  enum Reader {
    /** {@code run}: the ServiceAccount the manifests (or the chart) bind their least-privilege roles to. */
    SERVICE {
      @Override
      String grant(String user) {
        return "apply manifests/rbac.yaml";
      }
    },
    /** {@code plan} and {@code explain}: whoever runs them, reading as themselves; ClusterRole podsweeper-viewer. */
    PERSON {
      @Override
      String grant(String user) {
        String name = "podsweeper-viewer-" + user.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9.-]+", "-").replaceAll("^[-.]+|[-.]+$", "");
        Matcher account = SERVICE_ACCOUNT.matcher(user);
        String subject = account.matches() ? "--serviceaccount=" + account.group(1) + ":" + account.group(2) : "--user=" + user;
        return "plan and explain read the cluster as you; ClusterRole podsweeper-viewer (manifests/rbac.yaml) grants what they read:"
            + " kubectl create clusterrolebinding " + name + " --clusterrole=podsweeper-viewer " + subject;
      }
    };

    private static final Pattern SERVICE_ACCOUNT = Pattern.compile("system:serviceaccount:([^:]+):([^:]+)");

    abstract String grant(String user);
  }

  /**
   * {@code e} as what to check when it comes from talking to the API server at {@code server} as {@code reader}:
   * unreachable, refused credentials, a missing permission (which read, for whom, and how to grant it), another
   * answer. Anything else is returned as it is.
   */
  static Exception fromCluster(String server, Exception e, Reader reader) {
    Optional<KubernetesClientException> answer = cause(e, KubernetesClientException.class).filter(k -> k.getCode() > 0);
    if (answer.isPresent()) {
      return new CommandFailure(answered(server, answer.get(), reader), e);
    }
    Optional<IOException> network = cause(e, IOException.class);
    if (network.isPresent()) {
      return new CommandFailure("cannot reach the API server at " + server + ": " + unreachable(network.get())
          + " — check the server and network, and the cluster in --kubeconfig", e);
    }
    return e;
  }

  private static String answered(String server, KubernetesClientException e, Reader reader) {
    String message = Optional.ofNullable(e.getStatus()).map(Status::getMessage).orElse(e.getMessage());
    if (e.getCode() == 401) {
      return "the API server at " + server + " refused the credentials (401 Unauthorized)"
          + " — check the user's token or certificate in --kubeconfig";
    }
    Matcher forbidden = FORBIDDEN.matcher(message);
    if (e.getCode() == 403 && forbidden.find()) {
      String group = forbidden.group(4) == null || forbidden.group(4).isEmpty() ? "" : "." + forbidden.group(4);
      String namespace = forbidden.group(5) == null ? "" : " in namespace " + forbidden.group(5);
      return "cannot " + forbidden.group(2) + " " + forbidden.group(3) + group + namespace + ": forbidden for "
          + forbidden.group(1) + " — " + reader.grant(forbidden.group(1));
    }
    return "the API server at " + server + " answered " + e.getCode() + ": " + message;
  }

  /** The first cause that says why, e.g. a ConnectException above the ClosedChannelException that ended it. */
  private static String unreachable(IOException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ConnectException) {
        return "connection refused";
      }
      if (t instanceof UnknownHostException) {
        return "unknown host " + t.getMessage();
      }
      if (t instanceof HttpTimeoutException || t instanceof SocketTimeoutException) {
        return "no answer in time";
      }
      if (t instanceof SSLException) {
        return "TLS failed: " + t.getMessage();
      }
    }
    return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
  }

  private static <T extends Throwable> Optional<T> cause(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return Optional.of(type.cast(t));
      }
    }
    return Optional.empty();
  }
}
