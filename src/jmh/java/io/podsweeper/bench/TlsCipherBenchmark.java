package io.podsweeper.bench;

import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What TLS records cost a fresh JVM: 8 MiB sealed in 16-KiB records with each of TLS 1.3's AEADs, once, before the
 * JIT has warmed up: the start-up case that kube/ApiHttpClientFactory is about (a start receives every list of the
 * cluster through TLS, gzip-compressed).
 * Opening a record costs what sealing it does. Run with the Deployment's JIT setting:
 * {@code java -jar target/benchmarks.jar TlsCipherBenchmark -jvmArgsAppend "-XX:TieredStopAtLevel=1 -XX:C1MaxInlineSize=15"}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
@Fork(5)
public class TlsCipherBenchmark {
  private static final int RECORD = 16 * 1024;
  private static final int RECORDS = 8 * 1024 * 1024 / RECORD;

  @Param({"AES_128_GCM", "CHACHA20_POLY1305"})
  public String aead;

  private final byte[] plain = new byte[RECORD];
  private final byte[] sealed = new byte[RECORD + 16];
  private SecretKeySpec key;

  @Setup
  public void key() {
    boolean aes = aead.startsWith("AES");
    byte[] bytes = new byte[aes ? 16 : 32];
    new SecureRandom().nextBytes(bytes);
    key = new SecretKeySpec(bytes, aes ? "AES" : "ChaCha20");
  }

  @Benchmark
  public int sealEightMegabytes() throws GeneralSecurityException {
    boolean aes = aead.startsWith("AES");
    Cipher cipher = Cipher.getInstance(aes ? "AES/GCM/NoPadding" : "ChaCha20-Poly1305");
    int written = 0;
    for (int i = 0; i < RECORDS; i++) {
      byte[] nonce = new byte[12]; // a fresh nonce per record, as TLS derives one from the record's sequence number
      nonce[11] = (byte) i;
      nonce[10] = (byte) (i >> 8);
      cipher.init(Cipher.ENCRYPT_MODE, key, aes ? new GCMParameterSpec(128, nonce) : new IvParameterSpec(nonce));
      written += cipher.doFinal(plain, 0, RECORD, sealed, 0);
    }
    return written;
  }
}
