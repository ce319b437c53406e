package io.podsweeper.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.podsweeper.kube.ReferenceList;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.RandomAccessFile;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The side-by-side harness behind {@code scripts/side-by-side.sh} (docs/benchmarks.md): the upstream descheduler and
 * Podsweeper, each alone on the same test API server and the same pods, one after the other, the same v1alpha2
 * policy, measured the same way from the outside: CPU ticks of the tool, the kube-apiserver and etcd, and the tool's
 * RSS, from /proc every half second; removal requests from the API server's audit log.
 *
 * <p>Usage: {@code SideBySide PODS RUN_DIR DESCHEDULER_BINARY RUNS}. Environment: {@code SERVICE_JAVA} and
 * {@code SERVICE_JAVA_OPTS} (Podsweeper's JVM and its flags, {@link LoadTest#serviceJava}), {@code TOOLS}
 * ({@code upstream,podsweeper} by default; each run takes them in turn, the next run starting where the last one
 * ended, so that neither always goes first), {@code STEADY_SECONDS} (1200), {@code ALONE_SECONDS} (0: the server alone
 * after each turn, below).
 *
 * <p>One turn: 100 Failed pods already due (RemoveFailedPods) are created; the reference LIST is timed (every pod as
 * protobuf, compressed, in pages of 500 from etcd, a consistent read, as Podsweeper listed at start before it listed as
 * client-go does; and in one answer from the watch cache, as both tools list at start now); once the server has settled
 * (under 0.15 CPU-s in a second), the tool is started; the first audited removal request is its first action. Then 60
 * Succeeded pods are created one every half second in a namespace whose PodLifeTime is 60 s: each one's deadline is its creation
 * second + 61 s (older than 60 whole seconds), and the audited request time minus the deadline is its reaction. Then
 * nothing changes for STEADY_SECONDS: the steady CPU (long enough for several watch renewals: both tools renew each
 * watch every 5 to 10 minutes, and neither lets that be shortened) and RSS. The bulk pods (a tenth Succeeded, the rest
 * Running, over 20 Ready nodes) are never due. With ALONE_SECONDS, once the tool has stopped and its turn's pods are gone,
 * the server is measured with no tool connected for that long: its own steady minute, against which the server's share
 * of the turn's steady minute is read (the share moves between turns by more than either tool asks of the server).
 */
public final class SideBySide {
  private static final int NODES = 20;
  private static final int BULK_NAMESPACES = 50;
  private static final int DUE = 100;
  /** The pods whose deadlines measure the reaction; 0 (REACT_PODS=0) leaves the phase out, for a turn about the start only. */
  private static final int REACT = Integer.parseInt(System.getenv().getOrDefault("REACT_PODS", "60"));
  private static final long LIFETIME_SECONDS = 60;
  /** A settled server: under 0.15 CPU-s in a second, the API server and etcd together (idle with 100k pods: ~0.1). */
  private static final long SETTLED_TICKS = 15;
  private static final long SETTLE_LIMIT_SECONDS = 60;
  static final String POLICY = """
      apiVersion: "descheduler/v1alpha2"
      kind: "DeschedulerPolicy"
      profiles:
        - name: sweep
          pluginConfig:
            - name: "DefaultEvictor"
              args: {evictLocalStoragePods: true}
            - name: "PodLifeTime"
              args: {maxPodLifeTimeSeconds: %d, states: ["Succeeded", "Failed"], namespaces: {include: ["sbs-react"]}}
            - name: "RemoveFailedPods"
              args: {minPodLifetimeSeconds: 0}
          plugins:
            filter: {enabled: ["DefaultEvictor"]}
            preEvictionFilter: {enabled: ["DefaultEvictor"]}
            deschedule: {enabled: ["PodLifeTime", "RemoveFailedPods"]}
      """.formatted(LIFETIME_SECONDS);

  private final KubernetesClient client;
  private final Properties env;
  private final Path runDir;
  private final ExecutorService pool = Executors.newFixedThreadPool(32);
  private final ObjectMapper json = new ObjectMapper();
  private long auditOffset;

  private SideBySide(Path runDir) throws IOException {
    this.runDir = runDir;
    this.env = LoadTest.env(runDir);
    this.client = LoadTest.client(runDir);
  }

  public static void main(String[] args) throws Exception {
    SideBySide test = new SideBySide(Path.of(args[1]));
    try {
      test.run(Integer.parseInt(args[0]), args[2], Integer.parseInt(args[3]));
    } finally {
      test.pool.shutdownNow();
      test.client.close();
    }
  }

  private void run(int pods, String descheduler, int runs) throws Exception {
    for (int i = 0; i < NODES; i++) {
      node("node-" + i);
    }
    for (int i = 0; i < BULK_NAMESPACES; i++) {
      LoadTest.namespace(client, "load-" + i);
    }
    LoadTest.namespace(client, "sbs-due");
    LoadTest.namespace(client, "sbs-react");
    Instant now = Instant.now();
    long started = System.nanoTime();
    LoadTest.create(client, pool, pods, i -> LoadTest.pod("load-" + (i % BULK_NAMESPACES), "pod-" + i, i, NODES),
        i -> i < pods / 10 ? LoadTest.finished("Succeeded", "Completed", now) : LoadTest.running(now));
    LoadTest.report("bulk pods created", "%d over %d Ready nodes in %.0f s", pods, NODES, LoadTest.seconds(started));
    LoadTest.listAllPods(env);
    Path policy = Files.writeString(runDir.resolve("side-by-side-policy.yaml"), POLICY);
    List<String> tools = List.of(System.getenv().getOrDefault("TOOLS", "upstream,podsweeper").split(","));
    int steady = Integer.parseInt(System.getenv().getOrDefault("STEADY_SECONDS", "1200"));
    int alone = Integer.parseInt(System.getenv().getOrDefault("ALONE_SECONDS", "0"));
    List<String> rows = new ArrayList<>();
    for (int turn = 0; turn < runs * tools.size(); turn++) {
      // Run r takes the tools rotated by r: upstream, podsweeper; podsweeper, upstream; ...: each goes first in turn.
      String tool = tools.get((turn % tools.size() + turn / tools.size()) % tools.size());
      List<String> command = tool.equals("upstream")
          ? List.of(descheduler, "--policy-config-file", policy.toString(), "--client-connection-kubeconfig", runDir.resolve("kubeconfig").toString(),
              "--descheduling-interval", "30s", "--client-connection-qps", "1000", "--client-connection-burst", "1000", "--v=3",
              "--bind-address", "127.0.0.1", "--secure-port", String.valueOf(freePort()))
          : podsweeper(policy);
      rows.add(turn(tool + " #" + (turn / tools.size() + 1), command, steady) + " " + serverAlone(alone) + " |");
      System.out.println(rows.get(rows.size() - 1));
    }
    System.out.printf("%n%d pods. LIST: every pod as protobuf, compressed, right before the turn: from etcd in pages of 500 (a consistent "
        + "read) / from the watch cache in one answer (as both tools list at start). CPU: the tool's process / kube-apiserver + etcd / both.%n", pods);
    System.out.println("| tool | LIST s, etcd / cache | time to first action s (x etcd LIST) | CPU s to first action | all 100 due removed s "
        + "| steady CPU s/min | RSS steady MiB | RSS peak MiB | deadline -> request p50 / p99 / max s (n) | server alone after it, CPU s/min |");
    System.out.println("|---|---|---|---|---|---|---|---|---|---|");
    rows.forEach(System.out::println);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private List<String> podsweeper(Path policy) throws IOException {
    List<String> command = LoadTest.serviceJava();
    command.addAll(List.of("-jar", "target/podsweeper.jar", "run", "--policy", policy.toString(), "--kubeconfig",
        runDir.resolve("kubeconfig").toString(), "--http-host", "127.0.0.1", "--http-port", String.valueOf(freePort()), "--probe-port", "0", "--sync-timeout", "1800", "--namespace", "default"));
    return command;
  }

  /**
   * Waits until the kube-apiserver and etcd together spend less than SETTLED_TICKS in one second (at most
   * SETTLE_LIMIT_SECONDS): after the reference LISTs, what they still do for those LISTs is not the tool's start; after a
   * turn, what they still do for its deletions is not the server alone. (It takes 1-2 s;
   * the swing of the server's share between turns is something else: it follows the turn's position in the run,
   * docs/benchmarks.md.)
   *
   * @return the seconds waited
   */
  private double settle() throws IOException, InterruptedException {
    long start = System.nanoTime();
    long last = LoadTest.serverCpu(env);
    while (LoadTest.seconds(start) < SETTLE_LIMIT_SECONDS) {
      Thread.sleep(1000);
      long now = LoadTest.serverCpu(env);
      if (now - last < SETTLED_TICKS) {
        break;
      }
      last = now;
    }
    return LoadTest.seconds(start);
  }

  /**
   * The kube-apiserver and etcd with no tool connected, once settled, over {@code seconds}: their CPU-s a minute, or
   * "-" for 0 seconds.
   */
  private String serverAlone(int seconds) throws IOException, InterruptedException {
    if (seconds <= 0) {
      return "-";
    }
    settle();
    long before = LoadTest.serverCpu(env);
    long start = System.nanoTime();
    Thread.sleep(seconds * 1000L);
    double minutes = LoadTest.seconds(start) / 60;
    return String.format(Locale.ROOT, "%.2f", (LoadTest.serverCpu(env) - before) / 100.0 / minutes);
  }

  /** One tool alone on the server: start, first action, reaction, steady state; returns its table row. */
  private String turn(String name, List<String> command, int steadySeconds) throws Exception {
    Instant dueAt = Instant.now().minus(Duration.ofHours(1));
    LoadTest.create(client, pool, DUE, i -> LoadTest.pod("sbs-due", "due-" + i, i, NODES), i -> LoadTest.finished("Failed", "Error", dueAt));
    Thread.sleep(2000); // RemoveFailedPods wants them older than 0 s: by whole seconds, upstream's test is "> 0"
    ReferenceList.Timing etcdList = ReferenceList.pods(client, false);
    ReferenceList.Timing cacheList = ReferenceList.pods(client, true);
    double settled = settle();
    LoadTest.report(name + ", LIST", "from etcd %.2f s (%d pages, %.1f MiB), from the watch cache %.2f s (%.1f MiB); server settled in %.0f s; load %s",
        etcdList.seconds(), etcdList.requests(), etcdList.bytes() / 1048576.0, cacheList.seconds(), cacheList.bytes() / 1048576.0, settled,
        Files.readString(Path.of("/proc/loadavg")).strip());
    auditOffset = Files.size(runDir.resolve("audit.log"));
    LoadTest.report(name, "%s", String.join(" ", command));
    long start = System.nanoTime();
    Process process = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(runDir.resolve(name.replace(" #", "-") + ".log").toFile()).start();
    Sampler sampler = new Sampler(List.of(String.valueOf(process.pid()), env.getProperty("APISERVER_PID"), env.getProperty("ETCD_PID")), start);
    sampler.start();
    try {
      List<Removal> removals = new ArrayList<>();
      while (removals.isEmpty()) {
        alive(process, name);
        removals.addAll(readAudit());
        Thread.sleep(100);
      }
      Removal first = Collections.min(removals, (a, b) -> a.at().compareTo(b.at()));
      double firstAction = LoadTest.seconds(start) - Duration.between(first.at(), Instant.now()).toNanos() / 1e9;
      double cpuFirst = sampler.cpuAt(TOOL, firstAction);
      double serverFirst = sampler.cpuAt(SERVER, firstAction) - sampler.cpuAt(SERVER, 0);
      LoadTest.report(name, "CPU to first action by thread group, s: %s",
          byThreadGroup(Map.of(), LoadTest.cpuByThread(String.valueOf(process.pid())), 1, 0.05));
      while (removals.stream().filter(r -> r.namespace().equals("sbs-due")).count() < DUE) {
        alive(process, name);
        removals.addAll(readAudit());
        Thread.sleep(200);
      }
      double allDue = LoadTest.seconds(start) - 0.2;

      Map<String, Instant> deadlines = new HashMap<>();
      for (int i = 0; i < REACT; i++) {
        Pod pod = LoadTest.pod("sbs-react", "react-" + i, i, NODES);
        Pod created = client.pods().inNamespace("sbs-react").resource(pod).create();
        created.setStatus(LoadTest.finished("Succeeded", "Completed", Instant.now()));
        client.pods().inNamespace("sbs-react").resource(created).updateStatus();
        // Both read maxPodLifeTimeSeconds as upstream does, "older than" in whole seconds: due one second after the limit.
        deadlines.put(created.getMetadata().getName(),
            Instant.parse(created.getMetadata().getCreationTimestamp()).plusSeconds(LIFETIME_SECONDS + 1));
        Thread.sleep(500);
      }
      Instant giveUp = Instant.now().plusSeconds(LIFETIME_SECONDS + 120);
      List<Double> reactions = new ArrayList<>();
      while (reactions.size() < REACT && Instant.now().isBefore(giveUp)) {
        alive(process, name);
        for (Removal r : readAudit()) {
          Instant deadline = deadlines.remove(r.name());
          if (r.namespace().equals("sbs-react") && deadline != null) {
            reactions.add(Duration.between(deadline, r.at()).toNanos() / 1e9);
          }
        }
        Thread.sleep(200);
      }
      Collections.sort(reactions);

      double steadyFrom = LoadTest.seconds(start);
      Map<String, LoadTest.ThreadCpu> threadsBefore = LoadTest.cpuByThread(String.valueOf(process.pid()));
      Thread.sleep(steadySeconds * 1000L);
      double steadyTo = LoadTest.seconds(start);
      double steadyCpu = (sampler.cpuAt(TOOL, steadyTo) - sampler.cpuAt(TOOL, steadyFrom)) / (steadyTo - steadyFrom) * 60;
      double steadyServer = (sampler.cpuAt(SERVER, steadyTo) - sampler.cpuAt(SERVER, steadyFrom)) / (steadyTo - steadyFrom) * 60;
      LoadTest.report(name, "steady CPU by thread group, s/min: %s",
          byThreadGroup(threadsBefore, LoadTest.cpuByThread(String.valueOf(process.pid())), 60 / (steadyTo - steadyFrom), 0));
      long rss = LoadTest.rssMiB(String.valueOf(process.pid()));
      return String.format(Locale.ROOT, "| %s | %.2f / %.2f | %.1f (%.2f) | %.2f / %.2f / %.2f | %.1f | %s | %d | %d | %s / %s / %s (%d of %d) |", name,
          etcdList.seconds(), cacheList.seconds(), firstAction, firstAction / etcdList.seconds(), cpuFirst, serverFirst, cpuFirst + serverFirst, allDue,
          steadySeconds > 0 ? String.format(Locale.ROOT, "%.2f / %.2f / %.2f", steadyCpu, steadyServer, steadyCpu + steadyServer) : "-", rss,
          sampler.peakRssMiB, quantile(reactions, 0.5), quantile(reactions, 0.99), quantile(reactions, 1.0), reactions.size(), REACT);
    } finally {
      sampler.interrupt();
      process.destroy();
      process.waitFor();
      client.pods().inNamespace("sbs-react").delete();
      client.pods().inNamespace("sbs-due").delete();
      while (!client.pods().inNamespace("sbs-react").list().getItems().isEmpty()
          || !client.pods().inNamespace("sbs-due").list().getItems().isEmpty()) {
        Thread.sleep(500);
      }
    }
  }

  /**
   * The thread groups that used CPU between two readings, most first, in CPU-seconds times {@code scale} (60 / the
   * seconds between them for a rate a minute), those under {@code least} left out. Counted per thread, so a thread
   * that ended in between takes only its own CPU out, not its group's.
   */
  static String byThreadGroup(Map<String, LoadTest.ThreadCpu> before, Map<String, LoadTest.ThreadCpu> after, double scale, double least) {
    Map<String, Long> nanos = new HashMap<>();
    after.forEach((tid, now) -> {
      LoadTest.ThreadCpu then = before.get(tid);
      nanos.merge(now.group(), now.nanos() - (then != null && then.group().equals(now.group()) ? then.nanos() : 0), Long::sum);
    });
    List<String> groups = new ArrayList<>();
    nanos.entrySet().stream()
        .map(e -> Map.entry(e.getKey(), e.getValue() / 1e9 * scale))
        .filter(e -> e.getValue() > least)
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .forEach(e -> groups.add(String.format(Locale.ROOT, "%s %.3f", e.getKey(), e.getValue())));
    return groups.isEmpty() ? "none" : String.join(", ", groups);
  }

  private static String quantile(List<Double> sorted, double q) {
    if (sorted.isEmpty()) {
      return "-";
    }
    int index = (int) Math.ceil(q * sorted.size()) - 1;
    return String.format(Locale.ROOT, "%.2f", sorted.get(Math.max(0, index)));
  }

  private void alive(Process process, String name) {
    if (!process.isAlive()) {
      throw new IllegalStateException(name + " exited; see its log in " + runDir);
    }
  }

  /** A removal request the audit log recorded: a DELETE of a pod or a POST of its eviction. */
  record Removal(String namespace, String name, Instant at) {}

  /** The removal requests audited since the last call (whole lines only). */
  private List<Removal> readAudit() throws IOException {
    List<Removal> removals = new ArrayList<>();
    try (RandomAccessFile file = new RandomAccessFile(runDir.resolve("audit.log").toFile(), "r")) {
      long length = file.length();
      if (length <= auditOffset) {
        return removals;
      }
      byte[] bytes = new byte[(int) (length - auditOffset)];
      file.seek(auditOffset);
      file.readFully(bytes);
      String text = new String(bytes, StandardCharsets.UTF_8);
      int end = text.lastIndexOf('\n');
      if (end < 0) {
        return removals;
      }
      auditOffset += text.substring(0, end + 1).getBytes(StandardCharsets.UTF_8).length;
      for (String line : text.substring(0, end).split("\n")) {
        JsonNode event = json.readTree(line);
        JsonNode ref = event.path("objectRef");
        boolean delete = event.path("verb").asText().equals("delete") && ref.path("subresource").isMissingNode();
        boolean evict = event.path("verb").asText().equals("create") && ref.path("subresource").asText().equals("eviction");
        if (ref.path("resource").asText().equals("pods") && (delete || evict) && event.path("stage").asText().equals("ResponseComplete")) {
          removals.add(new Removal(ref.path("namespace").asText(), ref.path("name").asText(),
              Instant.parse(event.path("requestReceivedTimestamp").asText())));
        }
      }
    }
    return removals;
  }

  private void node(String name) {
    Node node = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name)
        .addToLabels("kubernetes.io/hostname", name).endMetadata().build()).create();
    node.setStatus(new NodeStatusBuilder()
        .addToCapacity(Map.of("cpu", new Quantity("64"), "memory", new Quantity("256Gi"), "pods", new Quantity("5000")))
        .addToAllocatable(Map.of("cpu", new Quantity("64"), "memory", new Quantity("256Gi"), "pods", new Quantity("5000")))
        .addNewCondition().withType("Ready").withStatus("True").withReason("KubeletReady")
        .withLastHeartbeatTime(Instant.now().toString()).withLastTransitionTime(Instant.now().toString()).endCondition()
        .build());
    client.nodes().resource(node).updateStatus();
  }

  /** The sampler's series: the tool's process, and the kube-apiserver and etcd together. */
  private static final int TOOL = 1;
  private static final int SERVER = 2;

  /**
   * CPU ticks (utime + stime, /proc/PID/stat) of the tool and of the kube-apiserver + etcd, and the tool's RSS, every
   * half second, from /proc.
   */
  private static final class Sampler extends Thread {
    private final List<String> pids;
    private final long start;
    private final List<double[]> samples = Collections.synchronizedList(new ArrayList<>());
    private volatile long peakRssMiB;

    /** @param pids the tool's, then the server's processes (their CPU summed) */
    Sampler(List<String> pids, long start) {
      this.pids = pids;
      this.start = start;
      setDaemon(true);
      samples.add(sample(0)); // the server's CPU at the start; the tool's is 0
    }

    @Override
    public void run() {
      try {
        while (!isInterrupted()) {
          samples.add(sample(LoadTest.seconds(start)));
          peakRssMiB = Math.max(peakRssMiB, LoadTest.rssMiB(pids.get(0)));
          Thread.sleep(500);
        }
      } catch (InterruptedException | IOException | UncheckedIOException e) {
        // the process ended, or the turn did
      }
    }

    private double[] sample(double at) {
      try {
        long server = 0;
        for (String pid : pids.subList(1, pids.size())) {
          server += LoadTest.cpu(pid);
        }
        return new double[] {at, LoadTest.cpu(pids.get(0)) / 100.0, server / 100.0};
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** CPU seconds of a series ({@link #TOOL}, {@link #SERVER}) by {@code at} seconds after the start, linear between the samples around it. */
    double cpuAt(int series, double at) {
      synchronized (samples) {
        double[] before = samples.get(0);
        for (double[] s : samples) {
          if (s[0] >= at) {
            return before[series] + (s[series] - before[series]) * (at - before[0]) / Math.max(1e-9, s[0] - before[0]);
          }
          before = s;
        }
        return before[series];
      }
    }
  }
}
