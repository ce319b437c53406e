package io.podsweeper.kube;

import static io.podsweeper.kube.KubeProtobuf.fields;
import static io.podsweeper.kube.KubeProtobuf.int32;
import static io.podsweeper.kube.KubeProtobuf.message;
import static io.podsweeper.kube.KubeProtobuf.text;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.fabric8.kubernetes.api.model.ListMetaBuilder;
import io.fabric8.kubernetes.api.model.PodList;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NodeSelectorTerm;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.policy.LabelSelector;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * A pod's protobuf (k8s.io/api/core/v1 Pod, as the API server serves a list of pods), read straight into its record in
 * one pass: the fields a record is made of, by their numbers in k8s.io/api's generated.proto, everything else skipped
 * unread. It reads what {@link PodJson} reads of a pod's JSON, into the same {@link PodReading}, and the two make the
 * same record of the same pod (PodProtoIT reads pods from a real API server both ways).
 *
 * <p>Where the formats differ: the API server writes every string field in protobuf, empty ones too, where its JSON
 * leaves out the empty ones of fields marked omitempty. So an empty string reads as absent ({@link KubeProtobuf#text})
 * for those, and as itself ({@link #string}) for the fields the JSON always writes (an owner's kind, name and uid, a
 * selector requirement's key and operator, a container status's name, ...), for map values and for list elements. A timestamp is a message of seconds (Kubernetes writes no nanoseconds), and an empty one is
 * the zero time, which JSON writes as null.
 */
final class PodProto {
  private PodProto() {}

  /** A list of pods from its protobuf (the stream at the envelope's magic bytes): its metadata, and each pod decoded. */
  static PodList list(InputStream body) throws IOException {
    KubeProtobuf.ListPage<PodReading.Decoded> page = KubeProtobuf.list(body, PodProto::decoded);
    PodList list = new PodList();
    list.setMetadata(new ListMetaBuilder().withResourceVersion(page.resourceVersion()).withContinue(page.continueToken())
        .withRemainingItemCount(page.remainingItemCount()).build());
    list.setItems(new ArrayList<>(page.items()));
    return list;
  }

  /**
   * The pod in the stream, read to its end. A pod the record cannot be made of is reported in its Decoded, as
   * {@link PodJson} does, so that one odd pod does not fail the list it came in.
   */
  static PodReading.Decoded decoded(CodedInputStream in) throws IOException {
    Reading reading = new Reading();
    try {
      fields(in, reading::top);
      return reading.decoded();
    } catch (RuntimeException e) {
      return reading.unreadable(e);
    } catch (InvalidProtocolBufferException e) {
      // The pod's own bytes are not protobuf: that pod alone (the list skips what is left of them).
      return reading.unreadable(new IllegalArgumentException(e.getMessage(), e));
    }
  }

  private static final class Reading extends PodReading {
    void top(int field, int tag, CodedInputStream in) throws IOException {
      switch (field) {
        case 1 -> message(in, tag, this::metadata);
        case 2 -> {
          hasSpec = true;
          message(in, tag, this::spec);
        }
        case 3 -> message(in, tag, this::status);
        default -> in.skipField(tag);
      }
    }

    void metadata(int field, int tag, CodedInputStream in) throws IOException {
      switch (field) {
        case 1 -> name = text(in, tag);
        case 3 -> namespace = text(in, tag);
        case 5 -> uid = text(in, tag);
        case 6 -> resourceVersion = text(in, tag);
        case 8 -> created = time(in, tag);
        case 9 -> deleted = time(in, tag);
        case 11 -> entry(in, tag, PodProto::string, (key, value) -> labels = with(labels, PodRecords.shared(key), PodRecords.shared(value)));
        case 12 -> entry(in, tag, PodProto::string, (key, value) -> {
          if (PodRecords.KEPT_ANNOTATIONS.contains(key)) {
            annotations.put(PodRecords.shared(key), PodRecords.shared(value));
          }
        });
        case 13 -> {
          Owner owner = new Owner();
          message(in, tag, (f, t, q) -> {
            switch (f) {
              case 1 -> owner.kind = string(q, t);
              case 3 -> owner.name = string(q, t);
              case 4 -> owner.uid = string(q, t);
              case 6 -> owner.controller = int32(q, t) != 0;
              default -> q.skipField(t);
            }
          });
          owners.add(new OwnerRef(PodRecords.shared(owner.kind), PodRecords.shared(owner.name), PodRecords.shared(owner.uid), owner.controller));
        }
        default -> in.skipField(tag);
      }
    }

    void spec(int field, int tag, CodedInputStream in) throws IOException {
      switch (field) {
        case 1 -> message(in, tag, (f, t, volume) -> {
          if (f == 2) {
            message(volume, t, this::volumeSource);
          } else {
            volume.skipField(t);
          }
        });
        case 2 -> {
          container(readContainer(in, tag));
        }
        case 20 -> {
          initContainer(readContainer(in, tag));
        }
        case 32 -> entry(in, tag, PodProto::quantity, (resource, quantity) -> overhead = with(overhead, resource, quantity));
        case 7 -> entry(in, tag, PodProto::string, (key, value) -> nodeSelector = with(nodeSelector, key, value));
        case 10 -> nodeName = PodRecords.shared(text(in, tag));
        case 18 -> message(in, tag, this::affinity);
        case 22 -> {
          Toleration toleration = new Toleration();
          message(in, tag, (f, t, q) -> {
            switch (f) {
              case 1 -> toleration.key = text(q, t);
              case 2 -> toleration.operator = text(q, t);
              case 3 -> toleration.value = text(q, t);
              case 4 -> toleration.effect = text(q, t);
              default -> q.skipField(t);
            }
          });
          toleration(toleration.key, toleration.operator, toleration.value, toleration.effect);
        }
        case 24 -> priorityClassName = PodRecords.shared(text(in, tag));
        case 25 -> priority = OptionalInt.of(int32(in, tag));
        case 33 -> {
          PodReading.Spread spread = new PodReading.Spread();
          message(in, tag, (f, t, q) -> {
            switch (f) {
              case 1 -> spread.maxSkew = int32(q, t);
              case 2 -> spread.topologyKey = string(q, t);
              case 3 -> spread.whenUnsatisfiable = string(q, t);
              case 4 -> spread.selector = labelSelector(q, t);
              case 6 -> spread.nodeAffinityPolicy = text(q, t);
              case 7 -> spread.nodeTaintsPolicy = text(q, t);
              case 8 -> spread.matchLabelKeys.add(PodRecords.shared(string(q, t)));
              default -> q.skipField(t);
            }
          });
          spreadConstraints.add(spread.constraint());
        }
        case 39 -> {
          resourceClaims = true;
          in.skipField(tag);
        }
        case 38 -> schedulingGate(KubeProtobuf.textField(in, tag, 1)); // schedulingGates: a PodSchedulingGate, its name field 1
        default -> in.skipField(tag);
      }
    }

    void volumeSource(int field, int tag, CodedInputStream in) throws IOException {
      switch (field) {
        case 1, 2 -> { // hostPath, emptyDir
          localStorage = true;
          in.skipField(tag);
        }
        case 10 -> message(in, tag, (f, t, q) -> { // persistentVolumeClaim
          if (f == 1) {
            claims.add(string(q, t));
          } else {
            q.skipField(t);
          }
        });
        default -> in.skipField(tag);
      }
    }

    void affinity(int field, int tag, CodedInputStream in) throws IOException {
      switch (field) {
        case 1 -> message(in, tag, (kind, t, q) -> { // nodeAffinity
          switch (kind) {
            case 1 -> message(q, t, (f, ft, r) -> { // required: a NodeSelector
              if (f == 1) {
                requiredNodeAffinity.add(nodeSelectorTerm(r, ft));
              } else {
                r.skipField(ft);
              }
            });
            case 2 -> { // preferred
              Preferred preferred = new Preferred();
              message(q, t, (f, ft, r) -> {
                switch (f) {
                  case 1 -> preferred.weight = int32(r, ft);
                  case 2 -> preferred.term = nodeSelectorTerm(r, ft);
                  default -> r.skipField(ft);
                }
              });
              preferredNodeAffinity.add(new Scheduling.PreferredTerm(preferred.weight, preferred.term));
            }
            default -> q.skipField(t);
          }
        });
        case 2 -> message(in, tag, (kind, t, q) -> { // podAffinity
          if (kind == 1) {
            affinity.add(podAffinityTerm(q, t));
          } else {
            q.skipField(t);
          }
        });
        case 3 -> message(in, tag, (kind, t, q) -> { // podAntiAffinity
          if (kind == 1) {
            antiAffinity.add(podAffinityTerm(q, t));
          } else {
            q.skipField(t);
          }
        });
        default -> in.skipField(tag);
      }
    }

    void status(int field, int tag, CodedInputStream in) throws IOException {
      switch (field) {
        case 1 -> phase = PodRecords.shared(text(in, tag));
        case 4 -> reason = PodRecords.shared(text(in, tag));
        case 3 -> message = text(in, tag);
        case 7 -> startTime = time(in, tag);
        case 9 -> qosClass = text(in, tag);
        case 2 -> {
          Condition c = new Condition();
          message(in, tag, (f, t, q) -> {
            switch (f) {
              case 1 -> c.type = string(q, t);
              case 2 -> c.status = string(q, t);
              case 5 -> c.reason = text(q, t);
              case 4 -> c.lastTransition = time(q, t);
              default -> q.skipField(t);
            }
          });
          condition(c.type, c.status, c.reason, c.lastTransition);
        }
        case 8 -> mainStatuses.add(containerStatus(in, tag).status(ContainerStatus.Kind.MAIN));
        case 10 -> initStatuses.add(containerStatus(in, tag).status(ContainerStatus.Kind.INIT));
        case 13 -> ephemeralStatuses.add(containerStatus(in, tag).status(ContainerStatus.Kind.EPHEMERAL));
        default -> in.skipField(tag);
      }
    }
  }

  private static final class Owner {
    String kind;
    String name;
    String uid;
    boolean controller;
  }

  private static final class Toleration {
    String key;
    String operator;
    String value;
    String effect;
  }

  /** A preferred node affinity term: a weight and a node selector term. */
  private static final class Preferred {
    int weight;
    NodeSelectorTerm term = new NodeSelectorTerm(List.of());
  }

  /** A required pod anti-affinity term; a missing selector selects nothing. */
  private static final class AffinityTerm {
    LabelSelector selector = PodRecords.SELECTS_NOTHING;
    final List<String> namespaces = new ArrayList<>();
    Optional<LabelSelector> namespaceSelector = Optional.empty();
    String topologyKey;
  }

  private static final class Condition {
    String type;
    String status;
    String reason;
    Optional<Instant> lastTransition = Optional.empty();
  }

  /** A ContainerPort: hostPort 2, protocol 4, hostIP 5. */
  private static final class Port {
    Integer hostPort;
    String protocol;
    String hostIP;
  }

  private static PodReading.Container readContainer(CodedInputStream in, int tag) throws IOException {
    PodReading.Container container = new PodReading.Container();
    Map<String, String> requests = new HashMap<>();
    Map<String, String> limits = new HashMap<>();
    message(in, tag, (f, t, q) -> {
      switch (f) {
        case 1 -> container.name = string(q, t);
        case 2 -> container.image = text(q, t);
        case 6 -> {
          Port port = new Port();
          message(q, t, (pf, pt, r) -> {
            switch (pf) {
              case 2 -> port.hostPort = int32(r, pt);
              case 4 -> port.protocol = text(r, pt);
              case 5 -> port.hostIP = text(r, pt);
              default -> r.skipField(pt);
            }
          });
          PodReading.hostPort(container.hostPorts, port.hostPort, port.protocol, port.hostIP);
        }
        case 24 -> container.restartPolicy = text(q, t);
        case 8 -> message(q, t, (kind, kt, r) -> {
          switch (kind) {
            case 1 -> entry(r, kt, PodProto::quantity, limits::put);
            case 2 -> entry(r, kt, PodProto::quantity, requests::put);
            default -> r.skipField(kt);
          }
        });
        default -> q.skipField(t);
      }
    });
    container.resources.requests = requests.isEmpty() ? Map.of() : requests;
    container.resources.limits = limits.isEmpty() ? Map.of() : limits;
    return container;
  }

  private static PodReading.Status containerStatus(CodedInputStream in, int tag) throws IOException {
    PodReading.Status status = new PodReading.Status();
    message(in, tag, (f, t, q) -> {
      switch (f) {
        case 1 -> status.name = string(q, t);
        case 2 -> message(q, t, (kind, kt, r) -> state(kind, kt, r, status.now));
        case 3 -> message(q, t, (kind, kt, r) -> state(kind, kt, r, status.last));
        case 5 -> status.restartCount = int32(q, t);
        default -> q.skipField(t);
      }
    });
    return status;
  }

  private static void state(int kind, int tag, CodedInputStream in, PodReading.State state) throws IOException {
    switch (kind) {
      case 1 -> state.waiting = Optional.ofNullable(PodRecords.shared(KubeProtobuf.textField(in, tag, 1))); // waiting: its reason
      case 3 -> message(in, tag, (f, t, q) -> { // terminated
        switch (f) {
          case 1 -> state.exitCode = OptionalInt.of(int32(q, t));
          case 3 -> state.terminatedReason = Optional.ofNullable(PodRecords.shared(text(q, t)));
          case 6 -> state.finishedAt = time(q, t);
          default -> q.skipField(t);
        }
      });
      default -> in.skipField(tag);
    }
  }

  private static Scheduling.PodAffinityTerm podAffinityTerm(CodedInputStream in, int tag) throws IOException {
    AffinityTerm term = new AffinityTerm();
    message(in, tag, (f, t, q) -> {
      switch (f) {
        case 1 -> term.selector = labelSelector(q, t);
        case 2 -> term.namespaces.add(string(q, t));
        case 3 -> term.topologyKey = string(q, t);
        case 4 -> term.namespaceSelector = Optional.of(labelSelector(q, t));
        default -> q.skipField(t);
      }
    });
    return new Scheduling.PodAffinityTerm(term.selector, Set.copyOf(term.namespaces), term.namespaceSelector, PodRecords.nullToEmpty(term.topologyKey));
  }

  private static NodeSelectorTerm nodeSelectorTerm(CodedInputStream in, int tag) throws IOException {
    List<NodeSelectorTerm.Requirement> requirements = new ArrayList<>();
    message(in, tag, (f, t, q) -> {
      if (f == 1) {
        Expression e = expression(q, t);
        requirements.add(new NodeSelectorTerm.Requirement(e.key, e.operator, e.values));
      } else {
        q.skipField(t);
      }
    });
    return new NodeSelectorTerm(requirements);
  }

  private static LabelSelector labelSelector(CodedInputStream in, int tag) throws IOException {
    Map<String, String> matchLabels = new HashMap<>();
    List<LabelSelector.Requirement> requirements = new ArrayList<>();
    message(in, tag, (f, t, q) -> {
      switch (f) {
        case 1 -> entry(q, t, PodProto::string, matchLabels::put);
        case 2 -> {
          Expression e = expression(q, t);
          requirements.add(new LabelSelector.Requirement(e.key, LabelSelector.Operator.valueOf(e.operator), new LinkedHashSet<>(e.values)));
        }
        default -> q.skipField(t);
      }
    });
    return new LabelSelector(matchLabels.isEmpty() ? Map.of() : matchLabels, requirements);
  }

  /** A selector's requirement (a NodeSelectorRequirement or a LabelSelectorRequirement: the same fields). */
  private static final class Expression {
    String key;
    String operator;
    final List<String> values = new ArrayList<>();
  }

  private static Expression expression(CodedInputStream in, int tag) throws IOException {
    Expression e = new Expression();
    message(in, tag, (f, t, q) -> {
      switch (f) {
        case 1 -> e.key = string(q, t);
        case 2 -> e.operator = string(q, t);
        case 3 -> e.values.add(string(q, t));
        default -> q.skipField(t);
      }
    });
    return e;
  }

  @FunctionalInterface
  private interface Entry {
    void put(String key, String value);
  }

  /**
   * One entry of a map: its key (field 1, an empty one kept) and its value (field 2, read by {@code value}); an entry
   * whose value reads as null is left out, as JSON's null values are.
   */
  private static void entry(CodedInputStream in, int tag, KubeProtobuf.ValueReader<String> value, Entry entry) throws IOException {
    String[] kv = {"", null};
    message(in, tag, (f, t, q) -> {
      switch (f) {
        case 1 -> kv[0] = string(q, t);
        case 2 -> kv[1] = value.read(q, t);
        default -> q.skipField(t);
      }
    });
    if (kv[1] != null) {
      entry.put(kv[0], kv[1]);
    }
  }

  /** {@code map} with one entry more: a mutable map from its first entry on ({@code Map.of()} before). */
  private static Map<String, String> with(Map<String, String> map, String key, String value) {
    Map<String, String> out = map.isEmpty() ? new HashMap<>() : map;
    out.put(key, value);
    return out;
  }

  /** A Quantity, a message whose field 1 is its text. */
  private static String quantity(CodedInputStream in, int tag) throws IOException {
    return KubeProtobuf.textField(in, tag, 1);
  }

  /** A string as written, an empty one too: a field the JSON writes when empty (no omitempty), a map value, a list element. */
  private static String string(CodedInputStream in, int tag) throws IOException {
    String text = text(in, tag);
    return text != null ? text : "";
  }

  /** A timestamp (k8s.io/apimachinery's Time: seconds, 1, and nanoseconds, 2, which Kubernetes never writes). */
  private static Optional<Instant> time(CodedInputStream in, int tag) throws IOException {
    OptionalLong seconds = KubeProtobuf.int64Field(in, tag, 1);
    return seconds.isPresent() ? Optional.of(Instant.ofEpochSecond(seconds.getAsLong())) : Optional.empty(); // none: the zero time
  }
}
