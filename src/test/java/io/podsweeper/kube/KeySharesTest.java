package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.testing.Manifests;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With P-384's key share sent in place of P-256's ({@link KubeClients#p384KeyShareBeforeP256}), a TLS 1.3 server that
 * speaks only P-256 still completes the handshake: it asks for a P-256 share (a HelloRetryRequest) and gets one.
 * openssl's s_server is that server; the client is a JVM of its own, since the JDK reads the groups once per process.
 */
class KeySharesTest {
  @TempDir Path dir;
  private Process server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.destroyForcibly();
    }
  }

  @Test
  void aServerThatSpeaksOnlyP256StillCompletesTheHandshake() throws Exception {
    int port = p256OnlyServer();
    assertThat(handshake(port, List.of())).as("the client's groups as the service sets them").contains("handshake TLSv1.3");
  }

  @Test
  void theCheckFailsForAClientThatDoesNotOfferP256() throws Exception {
    int port = p256OnlyServer();
    assertThat(handshake(port, List.of("-D" + KubeClients.NAMED_GROUPS + "=x25519,secp384r1"))).doesNotContain("handshake TLSv1.3");
  }

  /** openssl s_server, TLS 1.3 with the P-256 group alone, on a free loopback port. */
  private int p256OnlyServer() throws Exception {
    Manifests.run(dir, "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=localhost",
        "-keyout", dir.resolve("key.pem").toString(), "-out", dir.resolve("cert.pem").toString());
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    server = new ProcessBuilder("openssl", "s_server", "-accept", "127.0.0.1:" + port, "-tls1_3", "-groups", "P-256", "-www",
        "-cert", dir.resolve("cert.pem").toString(), "-key", dir.resolve("key.pem").toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("server.log").toFile()).start();
    for (int i = 0; i < 100; i++) {
      try (Socket probe = new Socket("127.0.0.1", port)) {
        return port;
      } catch (IOException notYet) {
        Thread.sleep(50);
      }
    }
    throw new IllegalStateException("openssl s_server did not listen: " + Files.readString(dir.resolve("server.log")));
  }

  /** Runs {@link Client} in a JVM of its own with these JVM flags; its output. */
  private String handshake(int port, List<String> jvmFlags) throws Exception {
    List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString()));
    command.addAll(jvmFlags);
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), Client.class.getName(), String.valueOf(port)));
    Process client = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(client.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return out;
  }

  /** A TLS client with the groups the service sets (unless its JVM was given others): prints the protocol it agreed. */
  public static final class Client {
    public static void main(String[] args) throws Exception {
      KubeClients.p384KeyShareBeforeP256();
      SSLContext tls = SSLContext.getInstance("TLS");
      tls.init(null, new TrustManager[] {new TrustingAll()}, null);
      try (SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket("127.0.0.1", Integer.parseInt(args[0]))) {
        socket.setEnabledProtocols(new String[] {"TLSv1.3"});
        socket.startHandshake();
        System.out.println("handshake " + socket.getSession().getProtocol());
      }
    }
  }

  /** The test server's certificate is its own: what is checked here is the groups, not the trust. */
  private static final class TrustingAll implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
