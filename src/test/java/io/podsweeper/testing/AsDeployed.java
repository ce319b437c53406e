package io.podsweeper.testing;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A Deployment's container, as stored on the test API server, run as the kubelet would run it: the real
 * {@code podsweeper} jar in a process of its own on the image's JVM, with the container's arguments and environment, its ConfigMap and
 * Secret volumes written where it mounts them, and the credentials of the pod's ServiceAccount. What a test proves
 * with it holds for the manifests as shipped, not for arguments the test chose. The only changes, each needed on a
 * machine shared by tests: the paths of the mounts (under a directory of the test's), the HTTP port (a free one) on
 * loopback, and {@code --kubeconfig} (the ServiceAccount's client certificate; no kubelet mounts a token here).
 */
public final class AsDeployed implements AutoCloseable {
  private final Process process;
  private final Path log;
  private final int port;
  private final HttpClient http = HttpClient.newHttpClient();

  private AsDeployed(Process process, Path log, int port) {
    this.process = process;
    this.log = log;
    this.port = port;
  }

  /** Starts the first container of Deployment {@code namespace/name} as its pod {@code pod} would run it. */
  public static AsDeployed start(TestApiServer server, String namespace, String name, String pod, Path dir) throws Exception {
    KubernetesClient admin = server.client();
    Deployment deployment = admin.apps().deployments().inNamespace(namespace).withName(name).require();
    PodSpec spec = deployment.getSpec().getTemplate().getSpec();
    Container container = spec.getContainers().get(0);
    Map<String, Path> mounts = new HashMap<>();
    for (VolumeMount mount : container.getVolumeMounts()) {
      Volume volume = spec.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
      Path target = dir.resolve("mounts").resolve(mount.getMountPath().substring(1));
      Files.createDirectories(target);
      mounts.put(mount.getMountPath(), target);
      if (volume.getConfigMap() != null) {
        ConfigMap configMap = admin.configMaps().inNamespace(namespace).withName(volume.getConfigMap().getName()).require();
        for (Map.Entry<String, String> key : configMap.getData().entrySet()) {
          Files.writeString(target.resolve(key.getKey()), key.getValue());
        }
      } else if (volume.getSecret() != null) {
        Secret secret = admin.secrets().inNamespace(namespace).withName(volume.getSecret().getSecretName()).require();
        for (Map.Entry<String, String> key : secret.getData().entrySet()) {
          Files.write(target.resolve(key.getKey()), Base64.getDecoder().decode(key.getValue()));
        }
      }
    }
    int port = freePort();
    List<String> args = new ArrayList<>();
    List<String> declared = container.getArgs();
    for (int i = 0; i < declared.size(); i++) {
      String arg = declared.get(i);
      if (i > 0 && declared.get(i - 1).equals("--http-port")) {
        arg = String.valueOf(port);
      }
      for (Map.Entry<String, Path> mount : mounts.entrySet()) {
        if (arg.startsWith(mount.getKey() + "/")) {
          arg = mount.getValue() + arg.substring(mount.getKey().length());
          break;
        }
      }
      args.add(arg);
    }
    var identity = Manifests.serviceAccountConfig(server, namespace, spec.getServiceAccountName());
    args.addAll(List.of("--http-host", "127.0.0.1",
        "--kubeconfig", Manifests.kubeconfig(server, identity, dir.resolve("kubeconfig")).toString()));
    Map<String, String> environment = new HashMap<>();
    for (EnvVar variable : container.getEnv()) {
      if (variable.getValue() != null) {
        environment.put(variable.getName(), variable.getValue());
      } else {
        String field = variable.getValueFrom().getFieldRef().getFieldPath();
        environment.put(variable.getName(), switch (field) {
          case "metadata.name" -> pod;
          case "metadata.namespace" -> namespace;
          case "status.podIP" -> "127.0.0.1";
          default -> throw new IllegalStateException("a kubelet would give " + field + "; this test does not");
        });
      }
    }
    Path log = dir.resolve(pod + ".log");
    // On the image's runtime: the Deployment's JAVA_TOOL_OPTIONS are Java 25's (compact object headers).
    if (!Files.isExecutable(PodsweeperProcess.JAVA_25)) {
      throw new IllegalStateException("the Deployment's JVM flags need the image's Java 25 at " + PodsweeperProcess.JAVA_25
          + " (Temurin 25, on every machine of this kind; -Dpodsweeper.java25=JAVA_HOME for another)");
    }
    return new AsDeployed(PodsweeperProcess.start(PodsweeperProcess.JAVA_25, log, environment, args.toArray(String[]::new)), log, port);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  /** GET {@code path} on its HTTP port, with {@code token} as bearer token unless null. */
  public HttpResponse<String> get(String path, String token) throws IOException, InterruptedException {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Waits until /readyz answers 200 (its informers synced); if it does not in time, fails with what it logged. */
  public void awaitReady(Duration timeout) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline && process.isAlive()) {
      try {
        if (get("/readyz", null).statusCode() == 200) {
          return;
        }
      } catch (IOException notListeningYet) {
        // starting
      }
      Thread.sleep(200);
    }
    throw new AssertionError("not ready within " + timeout + (process.isAlive() ? "" : " (exited " + process.exitValue() + ")")
        + "; its log:\n" + log());
  }

  /** Waits until {@code condition} holds; if it does not in time, fails with {@code what} and what the process logged. */
  public void awaitUntil(Duration timeout, String what, Callable<Boolean> condition) throws IOException {
    try {
      Awaitility.await().atMost(timeout).until(condition);
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(what + " did not happen within " + timeout + "; the process logged:\n" + log(), e);
    }
  }

  public String log() throws IOException {
    return Files.readString(log);
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
