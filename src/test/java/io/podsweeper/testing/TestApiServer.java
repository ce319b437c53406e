package io.podsweeper.testing;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real kube-apiserver + etcd on loopback, started by {@code scripts/test-apiserver.sh} once per test run and
 * stopped when the run ends. Tests isolate themselves with a fresh namespace each ({@link #newNamespace}).
 */
public final class TestApiServer implements ExtensionContext.Store.CloseableResource, AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Path runDir;
  private final Path kubeconfig;
  private final KubernetesClient client;

  private TestApiServer(Path runDir) {
    this.runDir = runDir;
    this.kubeconfig = runDir.resolve("kubeconfig");
    this.client = newClient();
  }

  static TestApiServer start() {
    return start(Map.of());
  }

  /**
   * A server of a test's own, with these API groups' built-in versions switched off ({@code --runtime-config}, e.g.
   * {@code coordination.k8s.io/v1=false}): a built-in group answers 404 for any version of its own, so only then can
   * a CRD serve a new version of it. The test closes it.
   */
  public static TestApiServer startWithRuntimeConfig(String runtimeConfig) {
    return start(Map.of("KUBE_RUNTIME_CONFIG", runtimeConfig));
  }

  /**
   * A server of a test's own with a real kube-scheduler and kube-controller-manager against it (its ReplicaSet,
   * Deployment and Job controllers and the garbage collector; {@code scripts/test-apiserver.sh scheduling}): pods are
   * recreated and bound as in a cluster, and, with no kubelet, bound pods stay Pending. Nodes come from
   * {@link TestNodes}. The test closes it.
   */
  public static TestApiServer startWithScheduling() {
    TestApiServer server = start(Map.of());
    try {
      script("scheduling", server.runDir);
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
    return server;
  }

  /** A control-plane component's log so far ({@code scheduler} or {@code controller-manager}): what it says it did. */
  public List<String> log(String component) {
    try {
      return Files.readAllLines(runDir.resolve(component + ".log"));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the " + component + " log", e);
    }
  }

  /** The end of a component's log, for a failure's message. */
  public String logTail(String component, int lines) {
    List<String> all = log(component);
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }

  private static TestApiServer start(Map<String, String> env) {
    try {
      Path runDir = Files.createTempDirectory("podsweeper-apiserver-");
      script("start", runDir, env);
      return new TestApiServer(runDir);
    } catch (IOException e) {
      throw new IllegalStateException("cannot start the test API server", e);
    }
  }

  private static void script(String verb, Path runDir) {
    script(verb, runDir, Map.of());
  }

  private static void script(String verb, Path runDir, Map<String, String> env) {
    Path project = Path.of(System.getProperty("podsweeper.projectDir", "."));
    ProcessBuilder pb = new ProcessBuilder("bash", project.resolve("scripts/test-apiserver.sh").toString(), verb, runDir.toString())
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.INHERIT);
    pb.environment().putAll(env);
    try {
      Process p = pb.start();
      if (!p.waitFor(15, TimeUnit.MINUTES) || p.exitValue() != 0) {
        throw new IllegalStateException("scripts/test-apiserver.sh " + verb + " failed; see its output above");
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot run scripts/test-apiserver.sh", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Fault injection: the API server goes away (etcd keeps the data). */
  public void down() {
    script("down", runDir);
  }

  /** The API server comes back on the same address, with the same data. */
  public void up() {
    script("up", runDir);
  }

  /**
   * One request as the API server's audit log recorded it (scripts/test-apiserver.sh logs writes to pods,
   * evictions, ConfigMaps, namespaces and Leases, lists and watches of ConfigMaps, and lists of what the cache's
   * informers list): the witness of what a test's subject really sent. {@code body} is what was sent (e.g. the patch),
   * logged only for writes to EvictionRequests; else missing. {@code uri} is the request's path and query.
   */
  public record AuditEvent(String verb, String resource, String subresource, String namespace, String name, String user,
      String userAgent, int code, Instant received, boolean dryRun, JsonNode body, String uri) {
    /** A DELETE of a pod or an eviction of it, whatever the answer; not a server-side dry-run, which removes nothing. */
    public boolean isRemoval() {
      return !dryRun && "pods".equals(resource) && ("delete".equals(verb) || ("create".equals(verb) && "eviction".equals(subresource)));
    }
  }

  /**
   * Every request the audit log holds so far, in the order received; a last line the API server is still writing (no
   * newline yet) is left for the next read.
   */
  public List<AuditEvent> audit() {
    Path log = runDir.resolve("audit.log");
    List<AuditEvent> events = new ArrayList<>();
    try {
      if (!Files.exists(log)) {
        return events;
      }
      String written = Files.readString(log);
      for (String line : written.substring(0, written.lastIndexOf('\n') + 1).split("\n")) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode e = JSON.readTree(line);
        JsonNode ref = e.path("objectRef");
        events.add(new AuditEvent(e.path("verb").asText(), ref.path("resource").asText(), ref.path("subresource").asText(),
            ref.path("namespace").asText(), ref.path("name").asText(), e.path("user").path("username").asText(),
            e.path("userAgent").asText(), e.path("responseStatus").path("code").asInt(),
            Instant.parse(e.path("requestReceivedTimestamp").asText()), e.path("requestURI").asText().contains("dryRun=All"),
            e.path("requestObject"), e.path("requestURI").asText()));
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the audit log " + log, e);
    }
    events.sort(java.util.Comparator.comparing(AuditEvent::received));
    return events;
  }

  /** The requests that removed (or tried to remove) a pod of {@code namespace}. */
  public List<AuditEvent> removalRequests(String namespace) {
    return audit().stream().filter(e -> namespace.equals(e.namespace()) && e.isRemoval()).toList();
  }

  /**
   * Fault injection: every client's connections to the API server are cut at once (reset, as a network blip would
   * leave them), while the server stays up: watches resume from where they were, and the server replays what they
   * missed. Needs root ({@code ss -K}).
   */
  public void cutConnections() {
    run(List.of("ss", "-K", "dst", "127.0.0.1", "dport", "=", ":" + env("APISERVER_PORT")), Map.of());
  }

  /**
   * Runs {@code etcdctl} (which {@code scripts/test-apiserver.sh install} installs) against the etcd behind the API
   * server, for what no API request can do: change the stored objects while the API server is down, or compact the
   * history so that every older watch ends in 410 Gone.
   */
  public String etcdctl(String... args) {
    List<String> command = new ArrayList<>(List.of("etcdctl", "--endpoints", "http://127.0.0.1:" + env("ETCD_PORT")));
    command.addAll(List.of(args));
    return run(command, Map.of("ETCDCTL_API", "3"));
  }

  /** Runs {@code command} for at most 30 s; its output goes to a file, so that a command that hangs cannot hang the read. */
  private static String run(List<String> command, Map<String, String> environment) {
    try {
      Path output = Files.createTempFile("podsweeper-command-", ".out");
      try {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        pb.environment().putAll(environment);
        Process p = pb.start();
        boolean exited = p.waitFor(30, TimeUnit.SECONDS);
        if (!exited) {
          p.destroyForcibly();
        }
        String out = Files.readString(output);
        if (!exited || p.exitValue() != 0) {
          throw new IllegalStateException(String.join(" ", command) + (exited ? " failed: " : " did not end in 30 s: ") + out);
        }
        return out;
      } finally {
        Files.deleteIfExists(output);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + command.get(0), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Compacts etcd's history up to now: a watch from any earlier resourceVersion gets 410 Gone and must relist. */
  public void compactEtcd() {
    JsonNode status;
    try {
      status = JSON.readTree(etcdctl("endpoint", "status", "--write-out", "json"));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    etcdctl("compaction", status.get(0).path("Status").path("header").path("revision").asText(), "--physical");
  }

  private String env(String name) {
    try {
      for (String line : Files.readAllLines(runDir.resolve("env"))) {
        if (line.startsWith(name + "=")) {
          return line.substring(name.length() + 1);
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    throw new IllegalStateException(name + " missing from " + runDir.resolve("env"));
  }

  public Path kubeconfig() {
    return kubeconfig;
  }

  /** The admin client shared by tests (system:masters). */
  public KubernetesClient client() {
    return client;
  }

  /** A client configuration from the test kubeconfig, for code under test that builds its own clients. */
  public Config config() {
    try {
      return Config.fromKubeconfig(Files.readString(kubeconfig));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public KubernetesClient newClient() {
    return new KubernetesClientBuilder().withConfig(config()).build();
  }

  /** A namespace of its own for one test: namespaces are never really deleted here (no namespace controller). */
  public String newNamespace(String prefix, Map<String, String> labels) {
    String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).withLabels(labels).endMetadata().build()).create();
    return name;
  }

  public String newNamespace(String prefix) {
    return newNamespace(prefix, Map.of());
  }

  @Override
  public void close() {
    client.close();
    script("stop", runDir);
  }
}
