package io.podsweeper.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * The shipped manifests ({@code manifests/}) on the test API server, their ServiceAccount's credentials, and the real
 * {@code kubectl}: for tests that run the service exactly as deployed.
 */
public final class Manifests {
  public static final String NAMESPACE = "podsweeper";
  public static final String SERVICE_ACCOUNT = "podsweeper";
  public static final String CONTROL = "podsweeper-control";
  public static final String POLICY = "podsweeper-policy";
  /** The admin API's bearer token (key {@code token}), created once at install like the ConfigMaps. */
  public static final String ADMIN_TOKEN = "podsweeper-admin-token";
  public static final Path PROJECT = Path.of(System.getProperty("podsweeper.projectDir", ".")).toAbsolutePath();
  public static final Path BASE = PROJECT.resolve("manifests");
  /** Created once at install ({@code kubectl create -f}), never applied: the operator's policy and kill switch. */
  public static final Path INSTALL = BASE.resolve("install");

  private Manifests() {}

  /** The base as kustomize renders it, applied by server-side apply (the server validates every field); as stored. */
  public static List<HasMetadata> applyBase(TestApiServer server) throws IOException, InterruptedException {
    KubernetesClient admin = server.client();
    String rendered = kustomize(BASE);
    List<HasMetadata> applied = new ArrayList<>();
    for (HasMetadata object : admin.load(new ByteArrayInputStream(rendered.getBytes(StandardCharsets.UTF_8))).items()) {
      applied.add(admin.resource(asServed(admin, object)).fieldManager("podsweeper-manifests-it").forceConflicts().serverSideApply());
    }
    return applied;
  }

  /** The objects of kustomization {@code dir} as the real {@code kubectl kustomize} renders them (a YAML stream). */
  public static String kustomize(Path dir) throws IOException, InterruptedException {
    return run(PROJECT, "kubectl", "kustomize", dir.toString()).out();
  }

  /**
   * The install step as a fresh install has it (README, "Deploy to a cluster"): the ConfigMaps deleted if there, then
   * created from the files, and the admin token's Secret as README's {@code kubectl create secret} makes it.
   */
  public static void reinstall(TestApiServer server) throws IOException {
    deleteInstalled(server);
    KubernetesClient admin = server.client();
    for (String file : List.of("control-configmap.yaml", "policy-configmap.yaml")) {
      try (InputStream in = Files.newInputStream(INSTALL.resolve(file))) {
        admin.configMaps().inNamespace(NAMESPACE).resource(admin.configMaps().load(in).item()).create();
      }
    }
    byte[] random = new byte[32];
    new SecureRandom().nextBytes(random);
    admin.secrets().inNamespace(NAMESPACE).resource(new SecretBuilder().withNewMetadata().withName(ADMIN_TOKEN).endMetadata()
        .addToStringData("token", HexFormat.of().formatHex(random)).build()).create();
  }

  /** The policy and the kill switch ConfigMaps and the admin token's Secret deleted, as before a first install. */
  public static void deleteInstalled(TestApiServer server) {
    for (String name : List.of(CONTROL, POLICY)) {
      server.client().configMaps().inNamespace(NAMESPACE).withName(name).delete();
    }
    server.client().secrets().inNamespace(NAMESPACE).withName(ADMIN_TOKEN).delete();
  }

  /** What README's {@code kubectl get secret ... -o jsonpath='{.data.token}' | base64 -d} prints: the admin token. */
  public static String adminToken(TestApiServer server, String namespace, String secret) throws IOException, InterruptedException {
    String encoded = kubectl(server, "-n", namespace, "get", "secret", secret, "-o", "jsonpath={.data.token}");
    return new String(Base64.getDecoder().decode(encoded.trim()), StandardCharsets.UTF_8);
  }

  /** A pause ("true") or a resume ("false") as README says: {@code kubectl patch} of the kill switch's data.paused. */
  public static void setPaused(TestApiServer server, String namespace, String control, String paused) throws IOException, InterruptedException {
    kubectl(server, "-n", namespace, "patch", "configmap", control, "--type", "merge", "-p", "{\"data\":{\"paused\":\"" + paused + "\"}}");
  }

  /** An operator's edit of the policy in place ({@code kubectl patch} of ConfigMap {@code name}); the edited policy. */
  public static String editPolicy(TestApiServer server, String namespace, String name, UnaryOperator<String> edit)
      throws IOException, InterruptedException {
    String before = server.client().configMaps().inNamespace(namespace).withName(name).require().getData().get("policy.yaml");
    String edited = edit.apply(before);
    if (edited.equals(before)) {
      throw new IllegalArgumentException("the edit changes nothing in " + before);
    }
    kubectl(server, "-n", namespace, "patch", "configmap", name, "--type", "merge", "-p",
        new ObjectMapper().writeValueAsString(Map.of("data", Map.of("policy.yaml", edited))));
    return edited;
  }

  public static ConfigMap control(TestApiServer server) {
    return server.client().configMaps().inNamespace(NAMESPACE).withName(CONTROL).get();
  }

  /**
   * {@code kubectl apply -k DIR} against the test server. The 1.20 test server serves no {@code policy/v1}
   * PodDisruptionBudget (1.21+), so kubectl applies everything else and fails on that one object: that failure
   * alone is accepted.
   */
  public static String kubectlApplyKustomization(TestApiServer server, Path dir) throws IOException, InterruptedException {
    Ran ran = run(PROJECT, List.of(0, 1), "kubectl", "--kubeconfig", server.kubeconfig().toString(), "apply", "-k", dir.toString());
    List<String> errors = ran.err().lines().filter(l -> l.startsWith("error:")).toList();
    boolean onlyThePdb = errors.stream().allMatch(l -> l.contains("no matches for kind \"PodDisruptionBudget\" in version \"policy/v1\""));
    if (ran.code() != 0 && (errors.isEmpty() || !onlyThePdb)) {
      throw new IllegalStateException("kubectl apply -k " + dir + " failed:\n" + ran.err());
    }
    return ran.out();
  }

  /** The real kubectl against the test server, as an administrator; its output. */
  public static String kubectl(TestApiServer server, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("kubectl", "--kubeconfig", server.kubeconfig().toString()));
    command.addAll(List.of(args));
    return run(PROJECT, command.toArray(String[]::new)).out();
  }

  /**
   * A client configuration that authenticates as ServiceAccount {@code podsweeper/NAME}: a client certificate
   * signed by the test server's CA with the user and groups the API server gives that ServiceAccount's tokens.
   * (No controller-manager runs there, so no token is minted.)
   */
  public static Config serviceAccountConfig(TestApiServer server, String name) throws IOException, InterruptedException {
    return serviceAccountConfig(server, NAMESPACE, name);
  }

  /** As {@link #serviceAccountConfig(TestApiServer, String)}, for ServiceAccount {@code namespace/name}. */
  public static Config serviceAccountConfig(TestApiServer server, String namespace, String name) throws IOException, InterruptedException {
    return userConfig(server, "system:serviceaccount:" + namespace + ":" + name, "system:serviceaccounts", "system:serviceaccounts:" + namespace);
  }

  /** A client configuration that authenticates as {@code user} in {@code groups} (a client certificate of the test CA). */
  public static Config userConfig(TestApiServer server, String user, String... groups) throws IOException, InterruptedException {
    Path pki = server.kubeconfig().getParent().resolve("pki");
    Path dir = Files.createTempDirectory("podsweeper-user-");
    Path key = dir.resolve("client.key");
    Path csr = dir.resolve("client.csr");
    Path crt = dir.resolve("client.crt");
    StringBuilder subject = new StringBuilder();
    for (String group : groups) {
      subject.append("/O=").append(group);
    }
    run(dir, "openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key.toString(), "-out", csr.toString(),
        "-subj", subject + "/CN=" + user);
    run(dir, "openssl", "x509", "-req", "-in", csr.toString(), "-CA", pki.resolve("ca.crt").toString(),
        "-CAkey", pki.resolve("ca.key").toString(), "-CAcreateserial", "-CAserial", dir.resolve("ca.srl").toString(),
        "-out", crt.toString(), "-days", "1");
    Config admin = server.config();
    return new ConfigBuilder(Config.empty())
        .withMasterUrl(admin.getMasterUrl())
        .withCaCertFile(admin.getCaCertFile())
        .withClientCertFile(crt.toString())
        .withClientKeyFile(key.toString())
        .build();
  }

  /** A kubeconfig file for the test server as the identity of {@code config} (its client certificate), for commands. */
  public static Path kubeconfig(TestApiServer server, Config config, Path file) throws IOException {
    return kubeconfig(server, file,
        "{client-certificate: \"" + config.getClientCertFile() + "\", client-key: \"" + config.getClientKeyFile() + "\"}");
  }

  /** A kubeconfig file for the test server as {@code user} (a kubeconfig user entry in YAML flow style). */
  public static Path kubeconfig(TestApiServer server, Path file, String user) throws IOException {
    Config admin = server.config();
    return Files.writeString(file, """
        apiVersion: v1
        kind: Config
        clusters: [{name: test, cluster: {server: "%s", certificate-authority: "%s"}}]
        users: [{name: u, user: %s}]
        contexts: [{name: test, context: {cluster: test, user: u}}]
        current-context: test
        """.formatted(admin.getMasterUrl(), admin.getCaCertFile(), user));
  }

  /** The user name the API server gives ServiceAccount {@code podsweeper/NAME}, as the audit log records it. */
  public static String user(String serviceAccount) {
    return "system:serviceaccount:" + NAMESPACE + ":" + serviceAccount;
  }

  /**
   * The object in a version this server serves. The base ships {@code policy/v1} PodDisruptionBudgets (Kubernetes
   * 1.21+, the only version since 1.25); the 1.20 test server has only {@code policy/v1beta1}, whose spec is the
   * same, so that one object is applied as v1beta1 there. Everything else goes as rendered.
   */
  private static HasMetadata asServed(KubernetesClient client, HasMetadata object) {
    if (object instanceof io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget pdb
        && !client.supports(io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget.class)) {
      Map<String, Object> map = client.getKubernetesSerialization().convertValue(pdb, Map.class);
      map.put("apiVersion", "policy/v1beta1");
      return client.getKubernetesSerialization()
          .convertValue(map, io.fabric8.kubernetes.api.model.policy.v1beta1.PodDisruptionBudget.class);
    }
    return object;
  }

  /** What a command printed and how it exited. */
  public record Ran(int code, String out, String err) {}

  /** Runs a command that must succeed; a failure says what ran and what it printed. */
  public static Ran run(Path dir, String... command) throws IOException, InterruptedException {
    return run(dir, List.of(0), command);
  }

  private static Ran run(Path dir, List<Integer> acceptedCodes, String... command) throws IOException, InterruptedException {
    Process p;
    try {
      p = new ProcessBuilder(command).directory(dir.toFile()).start();
    } catch (IOException e) {
      throw new IllegalStateException(command[0] + " is needed on PATH for this test: " + e.getMessage(), e);
    }
    p.getOutputStream().close();
    // stderr is read after stdout: both are small here (kubectl, openssl), far below a pipe's buffer.
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || !acceptedCodes.contains(p.exitValue())) {
      throw new IllegalStateException(String.join(" ", command) + " failed:\n" + err);
    }
    return new Ran(p.exitValue(), out, err);
  }
}
