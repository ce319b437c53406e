package io.podsweeper.bench;

import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.Reader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * The load harness behind {@code scripts/load-test.sh} (docs/benchmarks.md): fills a running test API server with
 * N realistic pods, starts {@code podsweeper run} as its own process, and measures informer sync, heap after GC,
 * reaction to deadlines and removal throughput from the outside and from the service's /metrics.
 *
 * <p>Usage: {@code LoadTest PODS RUN_DIR} where RUN_DIR is what {@code scripts/test-apiserver.sh start} wrote; the
 * service runs on {@code SERVICE_JAVA} with {@code SERVICE_JAVA_OPTS} ({@link #serviceJava}).
 */
public final class LoadTest {
  private static final int BULK_NAMESPACES = 50;
  private static final int TIMED_PODS = 1000;
  private static final double PER_SECOND = 50;
  private static final Duration AFTER_FINISH = Duration.ofMinutes(1);
  private static final String POLICY = """
      apiVersion: podsweeper.io/v1alpha1
      kind: PodSweeperPolicy
      fullPassInterval: 30m
      limits: {perSecond: %s}
      rules:
        - name: succeeded-kept-a-day
          namespaces: {include: ["load-*"]}
          states: [Succeeded]
          maxAgeAfterFinish: 24h
        - name: failed
          namespaces: {include: ["load-*"]}
          states: [Failed]
          maxAgeAfterFinish: %ds
        - name: stuck
          podSelector: {matchExpressions: [{key: podsweeper.io/keep, operator: DoesNotExist}]}
          states: [CrashLoopBackOff, ImagePullBackOff]
          maxAge: 2h
      """;
  /** Added to the policy by the rate phase, once its pods exist, with the rate raised. */
  private static final String EXPIRED_RULE = """
        - name: expired
          namespaces: {include: [rate-big]}
          ttlFrom: [podsweeper.io]
      """;
  /** Running pods evicted by the rate phase: under the guard's default share of the cluster (a tenth) at 20k pods. */
  private static final int RATE_DUE = 1500;
  private static final double RATE_PER_SECOND = 100;
  private static final String SUCCESSES = "podsweeper_removals_total{result=\"success\"";
  private static final String REQUEST_SECONDS = "podsweeper_removal_request_duration_seconds";

  final KubernetesClient client;
  final Properties env;
  final Path runDir;
  final ExecutorService pool = Executors.newFixedThreadPool(32);
  private final HttpClient http = HttpClient.newHttpClient();
  private int httpPort;

  private LoadTest(Path runDir) throws IOException {
    this.runDir = runDir;
    this.env = env(runDir);
    this.client = client(runDir);
  }

  /** What scripts/test-apiserver.sh wrote to RUN_DIR/env. */
  static Properties env(Path runDir) throws IOException {
    Properties env = new Properties();
    try (Reader r = Files.newBufferedReader(runDir.resolve("env"))) {
      env.load(r);
    }
    return env;
  }

  static KubernetesClient client(Path runDir) throws IOException {
    return new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(Files.readString(runDir.resolve("kubeconfig")))).build();
  }

  public static void main(String[] args) throws Exception {
    int pods = Integer.parseInt(args[0]);
    int budgetPods = Integer.parseInt(System.getenv().getOrDefault("BUDGET_PODS", "0"));
    LoadTest test = new LoadTest(Path.of(args[1]));
    try {
      if (budgetPods > 0) {
        new BudgetLoad(test, budgetPods, Integer.parseInt(System.getenv().getOrDefault("BUDGET_NAMESPACES", "200")),
            Integer.parseInt(System.getenv().getOrDefault("BUDGET_BURST", String.valueOf(budgetPods / 5)))).run();
      } else {
        test.run(pods);
      }
    } finally {
      test.pool.shutdownNow();
      test.client.close();
    }
  }

  private void run(int pods) throws Exception {
    int pending = pods / 10;
    for (int i = 0; i < BULK_NAMESPACES; i++) {
      namespace("load-" + i);
    }
    namespace("load-react");
    namespace("load-due");

    Instant now = Instant.now();
    long started = System.nanoTime();
    create(client, pool, pods, i -> pod("load-" + (i % BULK_NAMESPACES), "pod-" + i, i, 100),
        i -> i < pending ? finished("Succeeded", "Completed", now) : running(now));
    double createSeconds = seconds(started);
    report("pods created (each with a status update)", "%d in %.1f s (%.0f pods/s)", pods, createSeconds, pods / createSeconds);
    Pod sample = client.pods().inNamespace("load-0").withName("pod-" + pending).get();
    report("one Running pod as served (JSON)", "%d bytes, %d bytes of it managedFields", Serialization.asJson(sample).length(),
        Serialization.asJson(sample.getMetadata().getManagedFields()).length());
    listAllPods(env);

    Process service = startService(POLICY.formatted(PER_SECOND, AFTER_FINISH.toSeconds()));
    long[] cpuBefore = {serverCpu(env), cpu(String.valueOf(service.pid()))};
    started = System.nanoTime();
    while (!ready()) {
      if (!service.isAlive()) {
        throw new IllegalStateException("the service exited; see " + runDir.resolve("service.log"));
      }
      Thread.sleep(100);
    }
    double syncSeconds = seconds(started);
    // /readyz turns 200 when the informers have listed; their events are still being evaluated after that.
    while (metric("podsweeper_pending_deadlines") < pending) {
      Thread.sleep(100);
    }
    double settledSeconds = seconds(started);
    long serverCpu = serverCpu(env) - cpuBefore[0];
    long serviceCpu = cpu(String.valueOf(service.pid())) - cpuBefore[1];
    report("informers synced (process start to /readyz 200)", "%.1f s", syncSeconds);
    report("every pod evaluated (pending deadlines complete)", "%.1f s", settledSeconds);
    report("CPU until then", "kube-apiserver + etcd %.1f s, service %.1f s (JVM start included)", serverCpu / 100.0, serviceCpu / 100.0);

    heapAfterGc(service, "with " + pods + " pods synced");
    reaction();
    throughput();
    int ratePods = Integer.parseInt(System.getenv().getOrDefault("RATE_PODS", "0"));
    if (ratePods > 0) {
      rate(ratePods);
    }
    heapAfterGc(service, "at the end");
    report("kube-apiserver resident memory", "%d MiB", rssMiB(env.getProperty("APISERVER_PID")));
    service.destroy();
    service.waitFor();
  }

  /** 1,000 Failed pods whose deadlines are spread over a minute, starting 30 s from now: well under the rate limit. */
  private void reaction() throws Exception {
    Instant firstDue = Instant.now().plusSeconds(30).truncatedTo(ChronoUnit.SECONDS);
    create(client, pool, TIMED_PODS, i -> pod("load-react", "react-" + i, i, 100),
        i -> finished("Failed", "Error", firstDue.plusMillis(i * 60L).minus(AFTER_FINISH)));
    report("reaction pods created", "%d, due from %s over 60 s", TIMED_PODS, firstDue);
    awaitSuccesses(TIMED_PODS, firstDue.plusSeconds(180));
    List<double[]> buckets = new ArrayList<>();
    for (String line : scrape().split("\n")) {
      if (line.startsWith("podsweeper_decision_to_request_seconds_bucket")) {
        String le = line.substring(line.indexOf("le=\"") + 4, line.indexOf("\"", line.indexOf("le=\"") + 4));
        buckets.add(new double[] {le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le), Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))});
      }
    }
    double count = buckets.get(buckets.size() - 1)[1];
    report("deadline to removal request (service histogram)", "n=%.0f, mean %.3f s, p50 <= %s s, p99 <= %s s, max <= %s s", count,
        metric("podsweeper_decision_to_request_seconds_sum") / count, quantile(buckets, 0.5), quantile(buckets, 0.99),
        quantile(buckets, 1.0));
  }

  /** 1,000 pods due at once (Failed an hour ago): how long until the last removal request, at perSecond 50. */
  private void throughput() throws Exception {
    long started = System.nanoTime();
    create(client, pool, TIMED_PODS, i -> pod("load-due", "due-" + i, i, 100), i -> finished("Failed", "Error", Instant.now().minus(Duration.ofHours(1))));
    double createSeconds = seconds(started);
    awaitSuccesses(2 * TIMED_PODS, Instant.now().plusSeconds(300));
    report("1,000 due pods removed at perSecond " + PER_SECOND, "%.1f s from the first becoming due (creating them took %.1f s)",
        seconds(started), createSeconds);
  }

  /**
   * RATE_PODS running pods in one namespace, {@value #RATE_DUE} of them expired (podsweeper.io/expires in the past),
   * evicted at perSecond {@value #RATE_PER_SECOND} (the policy reloaded with that rate and a rule for them): the rate reached, from the
   * service's own success counter between the 100th and the last eviction, whatever the namespace's size.
   */
  private void rate(int pods) throws Exception {
    namespace("rate-big");
    Instant now = Instant.now();
    double before = metric(SUCCESSES);
    create(client, pool, pods, i -> {
      Pod pod = pod("rate-big", "big-" + i, i, 100);
      if (i % (pods / RATE_DUE) == 0 && i / (pods / RATE_DUE) < RATE_DUE) {
        Map<String, String> annotations = new java.util.HashMap<>(pod.getMetadata().getAnnotations());
        annotations.put("podsweeper.io/expires", "2026-01-01T00:00:00Z");
        pod.getMetadata().setAnnotations(annotations);
      }
      return pod;
    }, i -> running(now));
    report("rate pods created", "%d running in namespace rate-big, %d of them expired", pods, RATE_DUE);
    // A hot reload: from here on the expired pods are due, all at once.
    Files.writeString(runDir.resolve("load-policy.yaml"), POLICY.formatted(RATE_PER_SECOND, AFTER_FINISH.toSeconds()) + EXPIRED_RULE);
    awaitSuccesses((int) before + 100, Instant.now().plusSeconds(300));
    long started = System.nanoTime();
    double first = metric(SUCCESSES);
    double[] requestsBefore = {metric(REQUEST_SECONDS + "_sum"), metric(REQUEST_SECONDS + "_count")};
    awaitSuccesses((int) before + RATE_DUE, Instant.now().plusSeconds(300));
    double seconds = seconds(started);
    report("evictions in a namespace of " + pods + " running pods at perSecond " + RATE_PER_SECOND, "%.0f in %.1f s: %.1f per second",
        before + RATE_DUE - first, seconds, (before + RATE_DUE - first) / seconds);
    // What bounds the rate when it is missed: requests in flight (removal/Pacing) over the time each one takes.
    report("  their requests' mean duration", "%.0f ms", 1000 * (metric(REQUEST_SECONDS + "_sum") - requestsBefore[0])
        / (metric(REQUEST_SECONDS + "_count") - requestsBefore[1]));
  }

  private static String quantile(List<double[]> buckets, double q) {
    double count = buckets.get(buckets.size() - 1)[1];
    for (double[] b : buckets) {
      if (b[1] >= q * count) {
        return b[0] == Double.POSITIVE_INFINITY ? "+Inf" : String.valueOf(b[0]);
      }
    }
    return "+Inf";
  }

  private void awaitSuccesses(int expected, Instant deadline) throws Exception {
    while (metric(SUCCESSES) < expected) {
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException("only " + metric(SUCCESSES) + " of " + expected + " removed");
      }
      Thread.sleep(100);
    }
  }

  private void heapAfterGc(Process service, String when) throws Exception {
    new ProcessBuilder(jcmd(), String.valueOf(service.pid()), "GC.run").redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
    report("heap used after GC, " + when, "%.1f MiB", metric("jvm_memory_bytes_used{area=\"heap\"") / (1 << 20));
    Path histogram = Files.createDirectories(Path.of("target/load-test")).resolve("class-histogram-" + when.replace(' ', '-') + ".txt");
    new ProcessBuilder(jcmd(), String.valueOf(service.pid()), "GC.class_histogram").redirectErrorStream(true)
        .redirectOutput(histogram.toFile()).start().waitFor();
    report("class histogram, " + when, "%s", histogram);
  }

  /** The service's JDK's jcmd, which attaches to a JVM of its own version. */
  private static String jcmd() {
    Path java = Path.of(serviceJava().get(0));
    return java.getParent() == null ? "jcmd" : java.resolveSibling("jcmd").toString();
  }

  /** The server's own share of a sync: one plain LIST of every pod, bytes discarded, no client-side decoding. */
  static double listAllPods(Properties env) throws Exception {
    Process curl = new ProcessBuilder("curl", "-sS", "-o", "/dev/null", "-w", "%{time_total} %{size_download}",
        "--cacert", env.getProperty("KUBE_CA_FILE"), "-H", "Authorization: Bearer " + env.getProperty("KUBE_TOKEN"),
        env.getProperty("KUBE_SERVER") + "/api/v1/pods").redirectErrorStream(true).start();
    String[] out = new String(curl.getInputStream().readAllBytes()).trim().split(" ");
    curl.waitFor();
    report("LIST /api/v1/pods with curl (server's share of a sync)", "%s s, %.0f MiB", out[0], Double.parseDouble(out[1]) / (1 << 20));
    return Double.parseDouble(out[0]);
  }

  /** Starts {@code podsweeper run} with {@code policyYaml} (its file is RUN_DIR/load-policy.yaml, for a reload). */
  Process startService(String policyYaml) throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      httpPort = s.getLocalPort();
    }
    Path policy = runDir.resolve("load-policy.yaml");
    Files.writeString(policy, policyYaml);
    List<String> command = serviceJava();
    command.addAll(List.of("-jar", "target/podsweeper.jar", "run", "--policy", policy.toString(),
        "--kubeconfig", runDir.resolve("kubeconfig").toString(), "--http-host", "127.0.0.1", "--http-port", String.valueOf(httpPort),
        "--probe-port", "0", "--sync-timeout", "1800", "--namespace", "default"));
    report("service", "%s", String.join(" ", command));
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(runDir.resolve("service.log").toFile()).start();
  }

  /**
   * The JVM Podsweeper is started with, and its flags: {@code SERVICE_JAVA} (scripts/service-java.sh: Temurin 25) and
   * {@code SERVICE_JAVA_OPTS} (the Deployment's, with an AOT cache trained for them), each flag one word.
   */
  static List<String> serviceJava() {
    List<String> command = new ArrayList<>(List.of(System.getenv().getOrDefault("SERVICE_JAVA", "java")));
    String javaOpts = System.getenv().getOrDefault("SERVICE_JAVA_OPTS", "");
    if (!javaOpts.isBlank()) {
      command.addAll(List.of(javaOpts.trim().split("\\s+")));
    }
    return command;
  }

  boolean ready() throws InterruptedException {
    try {
      return http.send(request("/readyz"), HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException e) {
      return false;
    }
  }

  String scrape() throws IOException, InterruptedException {
    return http.send(request("/metrics"), HttpResponse.BodyHandlers.ofString()).body();
  }

  /** The sum of the samples whose line starts with {@code prefix} (a name, or a name and its first labels). */
  double metric(String prefix) throws IOException, InterruptedException {
    double sum = 0;
    for (String line : scrape().split("\n")) {
      if (line.startsWith(prefix + " ") || line.startsWith(prefix + "{") || line.startsWith(prefix + ",")) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  private HttpRequest request(String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path)).timeout(Duration.ofSeconds(30)).build();
  }

  /** Creates {@code n} pods and writes each one's status (none where {@code statuses} gives null: Pending), 32 at a time. */
  static void create(KubernetesClient client, ExecutorService pool, int n, IntFunction<Pod> pods, IntFunction<PodStatus> statuses) {
    AtomicInteger done = new AtomicInteger();
    List<CompletableFuture<Void>> futures = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int index = i;
      futures.add(CompletableFuture.runAsync(() -> {
        Pod pod = pods.apply(index);
        Pod created = client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(pod).create();
        PodStatus status = statuses.apply(index);
        if (status != null) {
          created.setStatus(status);
          client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(created).updateStatus();
        }
        if (done.incrementAndGet() % 10_000 == 0) {
          System.out.printf("  ... %d pods%n", done.get());
        }
      }, pool));
    }
    CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).join();
  }

  private void namespace(String name) {
    namespace(client, name);
  }

  static void namespace(KubernetesClient client, String name) {
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).addToLabels("team", "load").endMetadata().build())
        .create();
  }

  /** A Deployment's pod as a real cluster holds it, less what admission plugins that do not run here would add. */
  static Pod pod(String namespace, String name, int i, int nodes) {
    String app = "app-" + (i % 500);
    return new PodBuilder()
        .withNewMetadata().withNamespace(namespace).withName(name)
        .withLabels(Map.of("app", app, "pod-template-hash", "5d4c8b9f7", "app.kubernetes.io/part-of", "load"))
        .withAnnotations(Map.of("prometheus.io/scrape", "true", "prometheus.io/port", "8080",
            "kubectl.kubernetes.io/restartedAt", "2026-01-01T00:00:00Z"))
        .addNewOwnerReference().withApiVersion("apps/v1").withKind("ReplicaSet").withName(app + "-5d4c8b9f7")
        .withUid("00000000-0000-0000-0000-" + String.format("%012d", i % 500)).withController(true).withBlockOwnerDeletion(true)
        .endOwnerReference()
        .endMetadata()
        .withNewSpec().withNodeName("node-" + (i % nodes)).withServiceAccountName("default").withTerminationGracePeriodSeconds(30L)
        .addNewContainer().withName("main").withImage("registry.example.com/team/" + app + ":1.2.3")
        .addNewPort().withName("http").withContainerPort(8080).endPort()
        .withEnv(new EnvVar("LOG_LEVEL", "info", null), new EnvVar("JAVA_OPTS", "-XX:MaxRAMPercentage=75", null),
            new EnvVar("APP_NAME", app, null))
        .withNewResources().addToRequests("cpu", new Quantity("100m")).addToRequests("memory", new Quantity("128Mi"))
        .addToLimits("memory", new Quantity("256Mi")).endResources()
        .addNewVolumeMount().withName("config").withMountPath("/etc/app").endVolumeMount()
        .addNewVolumeMount().withName("tmp").withMountPath("/tmp").endVolumeMount()
        .withNewReadinessProbe().withNewHttpGet().withPath("/ready").withPort(new IntOrString(8080)).endHttpGet()
        .withPeriodSeconds(10).endReadinessProbe()
        .endContainer()
        .addNewVolume().withName("config").withNewConfigMap().withName(app + "-config").endConfigMap().endVolume()
        .addNewVolume().withName("tmp").withNewEmptyDir().endEmptyDir().endVolume()
        .addNewToleration().withKey("node.kubernetes.io/not-ready").withOperator("Exists").withEffect("NoExecute")
        .withTolerationSeconds(300L).endToleration()
        .addNewToleration().withKey("node.kubernetes.io/unreachable").withOperator("Exists").withEffect("NoExecute")
        .withTolerationSeconds(300L).endToleration()
        .endSpec()
        .build();
  }

  static PodStatus running(Instant started) {
    return status("Running", started).addNewContainerStatus().withName("main").withImage("registry.example.com/team/app:1.2.3")
        .withImageID("registry.example.com/team/app@sha256:" + "0".repeat(64)).withContainerID("containerd://" + "1".repeat(64))
        .withReady(true).withStarted(true).withRestartCount(0)
        .withNewState().withNewRunning().withStartedAt(started.toString()).endRunning().endState()
        .endContainerStatus().build();
  }

  static PodStatus finished(String phase, String reason, Instant finishedAt) {
    Instant at = finishedAt.truncatedTo(ChronoUnit.SECONDS);
    return status(phase, at.minusSeconds(60)).withContainerStatuses(new ContainerStatusBuilder().withName("main")
        .withImage("registry.example.com/team/app:1.2.3").withImageID("").withReady(false).withRestartCount(0)
        .withNewState().withNewTerminated().withReason(reason).withExitCode("Failed".equals(phase) ? 1 : 0)
        .withStartedAt(at.minusSeconds(60).toString()).withFinishedAt(at.toString()).endTerminated().endState()
        .build()).build();
  }

  private static PodStatusBuilder status(String phase, Instant started) {
    String ready = "Running".equals(phase) ? "True" : "False";
    return new PodStatusBuilder().withPhase(phase).withHostIP("10.1.0.1").withPodIP("10.2.0.1").withQosClass("Burstable")
        .withStartTime(started.toString())
        .withConditions(condition("Initialized", "True", started), condition("Ready", ready, started),
            condition("ContainersReady", ready, started), condition("PodScheduled", "True", started));
  }

  private static io.fabric8.kubernetes.api.model.PodCondition condition(String type, String status, Instant at) {
    return new PodConditionBuilder().withType(type).withStatus(status).withLastTransitionTime(at.truncatedTo(ChronoUnit.SECONDS).toString())
        .build();
  }

  /** The kube-apiserver's and etcd's CPU so far, in clock ticks: what the control plane spends, counted beside a tool's own. */
  static long serverCpu(Properties env) throws IOException {
    return cpu(env.getProperty("APISERVER_PID")) + cpu(env.getProperty("ETCD_PID"));
  }

  /** utime + stime of a process, in clock ticks (1/100 s). */
  static long cpu(String pid) throws IOException {
    String stat = Files.readString(Path.of("/proc", pid, "stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
  }

  /** One thread's CPU so far: its group (its name with digits folded, so the {@code vert.x-eventloop-thread-N} are one). */
  record ThreadCpu(String group, long nanos) {}

  /**
   * CPU nanoseconds of each live thread of a process, by thread id, from {@code /proc/PID/task/TID/schedstat}: where a
   * process's CPU goes. schedstat counts every nanosecond on a CPU, where the ticks of {@code stat} charge a whole
   * 10 ms to whichever thread a tick finds running, too coarse for threads that wake briefly.
   */
  static Map<String, ThreadCpu> cpuByThread(String pid) throws IOException {
    Map<String, ThreadCpu> threads = new TreeMap<>();
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", pid, "task"))) {
      for (Path task : tasks) {
        try {
          String group = Files.readString(task.resolve("comm")).strip().replaceAll("[0-9]+", "#");
          threads.put(task.getFileName().toString(), new ThreadCpu(group, Long.parseLong(Files.readString(task.resolve("schedstat")).split(" ")[0])));
        } catch (NoSuchFileException e) {
          // the thread ended between the listing and the read
        }
      }
    }
    return threads;
  }

  static long rssMiB(String pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc", pid, "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("\\D", "")) / 1024;
      }
    }
    return -1;
  }

  static double seconds(long since) {
    return (System.nanoTime() - since) / 1e9;
  }

  static void report(String what, String format, Object... args) {
    System.out.printf("%-55s %s%n", what + ":", String.format(format, args));
  }
}
