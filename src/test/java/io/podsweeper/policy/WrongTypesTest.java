package io.podsweeper.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every field of a set of valid policies, in every format, given a value of the wrong YAML type (null, a string, a
 * number, a list, a map): the policy is either still valid or rejected with a {@link PolicyException} naming the
 * replaced field or one of its parents, never an internal exception.
 */
class WrongTypesTest {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;
  private static final Map<String, Supplier<JsonNode>> WRONG = Map.of(
      "null", F::nullNode,
      "string", () -> F.textNode("x"),
      "number", () -> F.numberNode(7),
      "fraction", () -> F.numberNode(1.5),
      "list", () -> F.arrayNode().add("x"),
      "map", () -> F.objectNode().put("x", 1));

  /** Valid policies that between them use every field the descheduler formats and the native format read. */
  private static final Map<String, String> POLICIES = Map.of(
      "v1alpha1 example", file("config/examples/descheduler-v1alpha1.yaml"),
      "v1alpha2 example", file("config/examples/descheduler-v1alpha2.yaml"),
      "native example", file("config/policy.yaml"),
      "koordinator example", file("config/examples/koordinator.yaml"),
      "koordinator lownodeload example", file("config/examples/koordinator-lownodeload.yaml"),
      "v1alpha1 all strategies", """
          apiVersion: descheduler/v1alpha1
          kind: DeschedulerPolicy
          nodeSelector: "a=b"
          evictDaemonSetPods: true
          ignorePvcPods: true
          evictSystemCriticalPods: false
          maxNoOfPodsToEvictPerNamespace: 3
          maxNoOfPodsToEvictTotal: 9
          strategies:
            PodLifeTime:
              enabled: true
              params:
                podLifeTime: {maxPodLifeTimeSeconds: 60, podStatusPhases: [Pending], states: [Running]}
                labelSelector: {matchLabels: {a: b}, matchExpressions: [{key: c, operator: In, values: [d]}]}
                thresholdPriority: 100
            RemovePodsViolatingNodeTaints:
              enabled: true
              params: {excludedTaints: [a], includePreferNoSchedule: true, thresholdPriorityClassName: low}
            RemovePodsViolatingNodeAffinity:
              enabled: true
              params: {nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution], nodeFit: true}
            RemovePodsViolatingTopologySpreadConstraint:
              enabled: true
              weight: 1
              params: {includeSoftConstraints: true}
            RemoveDuplicates:
              enabled: true
              params: {removeDuplicates: {excludeOwnerKinds: [ReplicaSet]}, namespaces: {include: [a]}}
            LowNodeUtilization:
              enabled: true
              params:
                nodeResourceUtilizationThresholds:
                  thresholds: {cpu: 20, memory: 20}
                  targetThresholds: {cpu: 50, memory: 50}
                  numberOfNodes: 1
                namespaces: {exclude: [kube-system]}
            HighNodeUtilization:
              enabled: true
              params:
                nodeResourceUtilizationThresholds: {thresholds: {cpu: 20}}
          """,
      "v1alpha2 all plugins", """
          apiVersion: descheduler/v1alpha2
          kind: DeschedulerPolicy
          nodeSelector: "a=b"
          maxNoOfPodsToEvictTotal: 9
          evictionFailureEventNotification: true
          gracePeriodSeconds: 30
          metricsProviders:
          - source: Prometheus
            prometheus: {url: "https://p:9090", authToken: {secretReference: {namespace: a, name: b}}}
          profiles:
          - name: p
            pluginConfig:
            - name: DefaultEvictor
              args:
                podProtections:
                  extraEnabled: [PodsWithPVC]
                  config: {PodsWithPVC: {protectedStorageClasses: [{name: a}]}}
                priorityThreshold: {value: 100}
                nodeSelector: "a=b"
                labelSelector: {matchLabels: {a: b}}
                namespaceLabelSelector: {matchExpressions: [{key: a, operator: Exists}]}
                minReplicas: 2
                minPodAge: 1h
                noEvictionPolicy: Preferred
                nodeFit: true
            - name: PodLifeTime
              args:
                states: [Running]
                conditions: [{type: Ready, status: "False", minTimeSinceLastTransitionSeconds: 60}]
                exitCodes: [1]
                ownerKinds: {exclude: [Job]}
                includingInitContainers: true
            - name: RemoveFailedPods
              args: {exitCodes: [1], reasons: [Error], minPodLifetimeSeconds: 60}
            - name: RemovePodsHavingTooManyRestarts
              args: {podRestartThreshold: 3, states: [Running]}
            - name: RemovePodsViolatingNodeTaints
              args: {includedTaints: [a]}
            - name: RemovePodsViolatingNodeAffinity
              args: {nodeAffinityType: [preferredDuringSchedulingIgnoredDuringExecution]}
            - name: RemovePodsViolatingTopologySpreadConstraint
              args: {constraints: [DoNotSchedule], topologyBalanceNodeFit: false}
            - name: RemoveDuplicates
              args: {excludeOwnerKinds: [Job]}
            - name: LowNodeUtilization
              args:
                thresholds: {MetricResource: 20}
                targetThresholds: {MetricResource: 50}
                evictionLimits: {node: 3}
                evictableNamespaces: {exclude: [a]}
                metricsUtilization: {source: Prometheus, prometheus: {query: "up"}}
            plugins:
              deschedule:
                enabled: [PodLifeTime, RemoveFailedPods, RemovePodsHavingTooManyRestarts, RemovePodsViolatingNodeTaints,
                  RemovePodsViolatingNodeAffinity]
                disabled: [x]
              balance:
                enabled: [RemovePodsViolatingTopologySpreadConstraint, RemoveDuplicates, LowNodeUtilization]
              filter: {enabled: [DefaultEvictor]}
          - name: q
            pluginConfig:
            - name: HighNodeUtilization
              args: {thresholds: {cpu: 20}, evictionModes: [OnlyThresholdingResources], numberOfNodes: 2}
            - name: LowNodeUtilization
              args:
                thresholds: {cpu: 20}
                targetThresholds: {cpu: 50}
                useDeviationThresholds: true
                metricsUtilization: {source: KubernetesMetrics}
            plugins:
              balance: {enabled: [HighNodeUtilization]}
          """,
      "native all fields", """
          apiVersion: podsweeper.io/v1alpha1
          kind: PodSweeperPolicy
          dryRun: true
          fullPassInterval: 5m
          gracePeriodSeconds: 10
          evictionRequests: All
          migrationJobs:
            mode: EvictDirectly
            ttl: 10m
            evictionPolicy: Delete
            deleteOptions: {gracePeriodSeconds: 5, propagationPolicy: Background, preconditions: {uid: x}}
          metricsProviders: [{source: KubernetesMetrics}]
          limits: {maxPerNode: 1, maxPerNamespace: 2, maxTotal: 3, perSecond: 5, maxInFlightPerOwner: 1, maxUnavailablePerOwner: 1}
          guard: {maxNamespaceShare: 0.5, maxClusterShare: 0.2, maxRemovals: 10, minEvictions: 1, minClusterEvictions: 2, window: 10m}
          rules:
          - name: a
            namespaces: {include: ["ci-*"], exclude: [ci-keep]}
            namespaceSelector: {matchLabels: {a: b}}
            podSelector: {matchExpressions: [{key: a, operator: NotIn, values: [b]}]}
            states: [Succeeded]
            maxAgeAfterFinish: 1h
            keepLast: 2
            keepPer: namespace
            evict: [BarePods]
          - {name: b, ttlFrom: [janitor]}
          - {name: c, maxAge: 1h, match: "pod.status.phase == 'Running'"}
          nodeSelector: "a=b"
          profiles:
          - name: p
            pluginConfig:
            - name: DefaultEvictor
              args: {evictAllBarePods: true}
            - name: LowNodeLoad
              args:
                lowThresholds: {cpu: 40}
                highThresholds: {cpu: 70}
                resourceWeights: {cpu: 2}
                anomalyCondition: {consecutiveAbnormalities: 2}
                podSelectors: [{name: a, selector: {matchLabels: {a: b}}}]
                nodeMetricExpirationSeconds: 60
                detectorCacheTimeout: 1m
            plugins:
              balance: {enabled: [LowNodeLoad]}
          """);

  private static String file(String path) {
    try {
      return Files.readString(Path.of(path));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Stream<Arguments> wrongTypes() {
    List<Arguments> cases = new ArrayList<>();
    POLICIES.forEach((name, text) -> {
      JsonNode doc = YamlDocuments.read(text, name, PolicyLoader.MAX_POLICY_CODE_POINTS).get(0);
      assertThat(PolicyLoader.parse(text, name)).as(name + " is valid").isNotNull();
      for (String path : paths(doc, "")) {
        if (path.equals("apiVersion") || path.equals("kind")) {
          continue;
        }
        JsonNode original = doc.at("/" + path.replaceAll("\\[(\\d+)]", ".$1").replace('.', '/'));
        WRONG.forEach((type, value) -> {
          JsonNode wrong = value.get();
          // A number for a number is a wrong value, not a wrong type: it may well be reported at a sibling it must match.
          if (wrong.getNodeType() != original.getNodeType()) {
            cases.add(Arguments.of(name, path, type, replaced(doc, path, wrong)));
          }
        });
      }
    });
    return cases.stream();
  }

  @ParameterizedTest(name = "{0}: {1} as {2}")
  @MethodSource("wrongTypes")
  void wrongTypeIsAPolicyErrorNamingThePlace(String policy, String path, String type, JsonNode doc) throws IOException {
    String text = new ObjectMapper().writeValueAsString(doc); // JSON is YAML
    try {
      PolicyLoader.parse(text, policy);
    } catch (PolicyException e) {
      String at = e.getMessage().contains(": ") ? e.getMessage().substring(0, e.getMessage().indexOf(": ")) : "";
      // A removed (null) field may be missed where something refers to it; any other wrong value is reported at its
      // own place, a parent, or (a list or map where none belongs) one of its own entries.
      assertThat(type.equals("null") || related(at, path) || related(path, at))
          .as("error %s names %s, a parent or an entry", e.getMessage(), path).isTrue();
    }
  }

  private static boolean related(String parent, String path) {
    return parent.isEmpty() || path.equals(parent) || path.startsWith(parent + ".") || path.startsWith(parent + "[");
  }

  /** The path of every node below {@code node}, in ConfigNode's syntax. */
  private static List<String> paths(JsonNode node, String at) {
    List<String> out = new ArrayList<>();
    if (node.isObject()) {
      node.fieldNames().forEachRemaining(f -> {
        String p = at.isEmpty() ? f : at + "." + f;
        out.add(p);
        out.addAll(paths(node.get(f), p));
      });
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        String p = at + "[" + i + "]";
        out.add(p);
        out.addAll(paths(node.get(i), p));
      }
    }
    return out;
  }

  private static JsonNode replaced(JsonNode doc, String path, JsonNode value) {
    JsonNode copy = doc.deepCopy();
    List<String> steps = new ArrayList<>(List.of(path.split("(?=\\.)|(?=\\[)")));
    JsonNode parent = copy;
    for (String step : steps.subList(0, steps.size() - 1)) {
      parent = step.startsWith("[") ? parent.get(Integer.parseInt(step.substring(1, step.length() - 1))) : parent.get(step.replaceFirst("^\\.", ""));
    }
    String last = steps.get(steps.size() - 1);
    if (last.startsWith("[")) {
      ((ArrayNode) parent).set(Integer.parseInt(last.substring(1, last.length() - 1)), value);
    } else {
      ((ObjectNode) parent).set(last.replaceFirst("^\\.", ""), value);
    }
    return copy;
  }
}
