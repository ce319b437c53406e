package io.podsweeper.kube;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import io.fabric8.kubernetes.api.model.Pod;
import io.podsweeper.cluster.ContainerStatus;
import io.podsweeper.cluster.NodeSelectorTerm;
import io.podsweeper.cluster.OwnerRef;
import io.podsweeper.cluster.PodRecord;
import io.podsweeper.cluster.Scheduling;
import io.podsweeper.policy.LabelSelector;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * A pod's JSON, as the API server serves it, read straight into its record in one pass: the fields a record is made
 * of are read, everything else is skipped unread.
 *
 * <p>Why not fabric8's Pod: decoding a pod into fabric8 objects (Jackson's data binding, a bean per nested type) only
 * to copy a few fields out of it allocated 38 % more and took a fifth longer per page, and a quarter longer for 10,000
 * pods read by a fresh JVM, where a start spends it (docs/benchmarks.md, seventh pass). The informers get a
 * {@link PodReading.Decoded} pod: fabric8 needs an object with the pod's identity to key its store and find deletions, and
 * the record rides along in it.
 */
final class PodJson {
  private PodJson() {}

  /** How the informers' serialization reads a Pod, wherever one appears: a list's items, a watch event's object. */
  static final class Deserializer extends StdDeserializer<Pod> {
    Deserializer() {
      super(Pod.class);
    }

    @Override
    public Pod deserialize(JsonParser parser, DeserializationContext context) throws IOException {
      return decoded(parser);
    }
  }

  /**
   * The pod at the parser (on its START_OBJECT, or on its first field name), read to its END_OBJECT. A pod the record
   * cannot be made of (say a selector with an operator no Kubernetes has) is still read to its end, so that one odd pod
   * does not fail the list it came in; its Decoded says why.
   */
  static PodReading.Decoded decoded(JsonParser parser) throws IOException {
    JsonStreamContext pod = parser.getParsingContext();
    Reading reading = new Reading();
    try {
      fields(parser, reading::top);
      return reading.decoded();
    } catch (RuntimeException e) {
      skipToEnd(parser, pod);
      return reading.unreadable(e);
    }
  }

  /** The pod's record; an IllegalArgumentException if it cannot be made of the JSON. */
  static PodRecord read(JsonParser parser) throws IOException {
    return decoded(parser).record();
  }

  private static void skipToEnd(JsonParser parser, JsonStreamContext pod) throws IOException {
    JsonStreamContext enclosing = pod.getParent(); // where the parser is once it has read the pod's END_OBJECT
    while (!(parser.currentToken() == JsonToken.END_OBJECT && parser.getParsingContext() == enclosing)) {
      if (parser.nextToken() == null) {
        return;
      }
    }
  }

  /** A pod read from its JSON. */
  private static final class Reading extends PodReading {
    void top(String field, JsonParser p) throws IOException {
      switch (field) {
        case "metadata" -> fields(p, this::metadata);
        case "spec" -> {
          hasSpec = p.currentToken() == JsonToken.START_OBJECT;
          fields(p, this::spec);
        }
        case "status" -> fields(p, this::status);
        default -> p.skipChildren();
      }
    }

    void metadata(String field, JsonParser p) throws IOException {
      switch (field) {
        case "namespace" -> namespace = text(p);
        case "name" -> name = text(p);
        case "uid" -> uid = text(p);
        case "resourceVersion" -> resourceVersion = text(p);
        case "creationTimestamp" -> created = PodRecords.time(text(p));
        case "deletionTimestamp" -> deleted = PodRecords.time(text(p));
        case "labels" -> labels = PodRecords.shared(stringMap(p));
        case "annotations" -> fields(p, (key, q) -> {
          String value = text(q);
          if (PodRecords.KEPT_ANNOTATIONS.contains(key) && value != null) {
            annotations.put(PodRecords.shared(key), PodRecords.shared(value));
          }
        });
        case "ownerReferences" -> elements(p, q -> {
          Owner owner = new Owner();
          fields(q, owner::field);
          owners.add(new OwnerRef(PodRecords.shared(owner.kind), PodRecords.shared(owner.name), PodRecords.shared(owner.uid), owner.controller));
        });
        default -> p.skipChildren();
      }
    }

    void spec(String field, JsonParser p) throws IOException {
      switch (field) {
        case "nodeName" -> nodeName = PodRecords.shared(text(p));
        case "priority" -> {
          Integer value = integer(p);
          priority = value != null ? OptionalInt.of(value) : OptionalInt.empty();
        }
        case "priorityClassName" -> priorityClassName = PodRecords.shared(text(p));
        case "containers" -> elements(p, q -> {
          JsonContainer container = new JsonContainer();
          fields(q, container::field);
          container(container);
        });
        case "initContainers" -> elements(p, q -> {
          JsonContainer container = new JsonContainer();
          fields(q, container::field);
          initContainer(container);
        });
        case "schedulingGates" -> elements(p, q -> {
          String[] gate = {null};
          fields(q, (gateField, r) -> {
            if (gateField.equals("name")) {
              gate[0] = text(r);
            } else {
              r.skipChildren();
            }
          });
          schedulingGate(gate[0]);
        });
        case "overhead" -> overhead = stringMap(p);
        case "nodeSelector" -> nodeSelector = stringMap(p);
        case "affinity" -> fields(p, this::affinity);
        case "tolerations" -> elements(p, q -> {
          Map<String, String> t = stringMap(q);
          toleration(t.get("key"), t.get("operator"), t.get("value"), t.get("effect"));
        });
        case "topologySpreadConstraints" -> elements(p, q -> {
          JsonSpread spread = new JsonSpread();
          fields(q, spread::field);
          spreadConstraints.add(spread.constraint());
        });
        case "volumes" -> elements(p, q -> fields(q, (kind, r) -> {
          switch (kind) {
            case "emptyDir", "hostPath" -> {
              localStorage |= r.currentToken() != JsonToken.VALUE_NULL;
              r.skipChildren();
            }
            case "persistentVolumeClaim" -> fields(r, (claimField, s) -> {
              String claim = text(s);
              if (claimField.equals("claimName") && claim != null) {
                claims.add(claim);
              }
            });
            default -> r.skipChildren();
          }
        }));
        case "resourceClaims" -> elements(p, q -> {
          resourceClaims = true;
          q.skipChildren();
        });
        default -> p.skipChildren();
      }
    }

    void affinity(String field, JsonParser p) throws IOException {
      switch (field) {
        case "nodeAffinity" -> fields(p, (kind, q) -> {
          switch (kind) {
            case "requiredDuringSchedulingIgnoredDuringExecution" -> fields(q, (termsField, r) -> {
              if (termsField.equals("nodeSelectorTerms")) {
                elements(r, s -> requiredNodeAffinity.add(nodeSelectorTerm(s)));
              } else {
                r.skipChildren();
              }
            });
            case "preferredDuringSchedulingIgnoredDuringExecution" -> elements(q, r -> {
              Preferred preferred = new Preferred();
              fields(r, preferred::field);
              preferredNodeAffinity.add(new Scheduling.PreferredTerm(preferred.weight, preferred.term));
            });
            default -> q.skipChildren();
          }
        });
        case "podAntiAffinity" -> requiredTerms(p, antiAffinity);
        case "podAffinity" -> requiredTerms(p, affinity);
        default -> p.skipChildren();
      }
    }

    /** A podAffinity's or podAntiAffinity's required terms, into {@code terms}. */
    private static void requiredTerms(JsonParser p, List<Scheduling.PodAffinityTerm> terms) throws IOException {
      fields(p, (kind, q) -> {
        if (kind.equals("requiredDuringSchedulingIgnoredDuringExecution")) {
          elements(q, r -> {
            AffinityTerm term = new AffinityTerm();
            fields(r, term::field);
            terms.add(new Scheduling.PodAffinityTerm(term.selector, Set.copyOf(term.namespaces), term.namespaceSelector,
                PodRecords.nullToEmpty(term.topologyKey)));
          });
        } else {
          q.skipChildren();
        }
      });
    }

    void status(String field, JsonParser p) throws IOException {
      switch (field) {
        case "phase" -> phase = PodRecords.shared(text(p));
        case "reason" -> reason = PodRecords.shared(text(p));
        case "message" -> message = text(p);
        case "startTime" -> startTime = PodRecords.time(text(p));
        case "qosClass" -> qosClass = text(p);
        case "conditions" -> elements(p, q -> {
          Map<String, String> c = stringMap(q);
          condition(c.get("type"), c.get("status"), c.get("reason"), PodRecords.time(c.get("lastTransitionTime")));
        });
        case "containerStatuses" -> containerStatuses(p, mainStatuses, ContainerStatus.Kind.MAIN);
        case "initContainerStatuses" -> containerStatuses(p, initStatuses, ContainerStatus.Kind.INIT);
        case "ephemeralContainerStatuses" -> containerStatuses(p, ephemeralStatuses, ContainerStatus.Kind.EPHEMERAL);
        default -> p.skipChildren();
      }
    }
  }

  private static final class Owner {
    String kind;
    String name;
    String uid;
    boolean controller;

    void field(String field, JsonParser p) throws IOException {
      switch (field) {
        case "kind" -> kind = text(p);
        case "name" -> name = text(p);
        case "uid" -> uid = text(p);
        case "controller" -> controller = p.currentToken() == JsonToken.VALUE_TRUE;
        default -> p.skipChildren();
      }
    }
  }

  /** A container read from its JSON. */
  private static final class JsonContainer extends PodReading.Container {
    void field(String field, JsonParser p) throws IOException {
      switch (field) {
        case "name" -> name = text(p);
        case "image" -> image = text(p);
        case "restartPolicy" -> restartPolicy = text(p);
        case "ports" -> elements(p, q -> {
          Map<String, Object> port = new HashMap<>();
          fields(q, (portField, r) -> port.put(portField, portField.equals("hostPort") ? integer(r) : text(r)));
          PodReading.hostPort(hostPorts, (Integer) port.get("hostPort"), (String) port.get("protocol"), (String) port.get("hostIP"));
        });
        case "resources" -> fields(p, (kind, q) -> {
          switch (kind) {
            case "requests" -> resources.requests = stringMap(q);
            case "limits" -> resources.limits = stringMap(q);
            default -> q.skipChildren();
          }
        });
        default -> p.skipChildren();
      }
    }
  }

  /** A topology spread constraint read from its JSON. */
  private static final class JsonSpread extends PodReading.Spread {
    void field(String field, JsonParser p) throws IOException {
      switch (field) {
        case "maxSkew" -> {
          Integer value = integer(p);
          maxSkew = value != null ? value : 1;
        }
        case "topologyKey" -> topologyKey = text(p);
        case "whenUnsatisfiable" -> whenUnsatisfiable = text(p);
        case "labelSelector" -> selector = labelSelector(p);
        case "matchLabelKeys" -> elements(p, q -> {
          String key = text(q);
          if (key != null) {
            matchLabelKeys.add(PodRecords.shared(key));
          }
        });
        case "nodeAffinityPolicy" -> nodeAffinityPolicy = text(p);
        case "nodeTaintsPolicy" -> nodeTaintsPolicy = text(p);
        default -> p.skipChildren();
      }
    }
  }

  private static final class AffinityTerm {
    LabelSelector selector = PodRecords.SELECTS_NOTHING;
    final List<String> namespaces = new ArrayList<>();
    Optional<LabelSelector> namespaceSelector = Optional.empty();
    String topologyKey;

    void field(String field, JsonParser p) throws IOException {
      switch (field) {
        case "labelSelector" -> selector = labelSelector(p);
        case "namespaces" -> elements(p, q -> namespaces.add(text(q)));
        case "namespaceSelector" -> namespaceSelector = p.currentToken() == JsonToken.START_OBJECT ? Optional.of(labelSelector(p)) : Optional.empty();
        case "topologyKey" -> topologyKey = text(p);
        default -> p.skipChildren();
      }
    }
  }

  private static NodeSelectorTerm nodeSelectorTerm(JsonParser p) throws IOException {
    List<NodeSelectorTerm.Requirement> requirements = new ArrayList<>();
    fields(p, (field, q) -> {
      if (field.equals("matchExpressions")) {
        elements(q, r -> {
          Expression e = new Expression();
          fields(r, e::field);
          requirements.add(new NodeSelectorTerm.Requirement(e.key, e.operator, e.values));
        });
      } else {
        q.skipChildren();
      }
    });
    return new NodeSelectorTerm(requirements);
  }

  /** A label selector; a missing one selects nothing (affinity terms, spread constraints). */
  private static LabelSelector labelSelector(JsonParser p) throws IOException {
    if (p.currentToken() != JsonToken.START_OBJECT) {
      p.skipChildren();
      return PodRecords.SELECTS_NOTHING;
    }
    Selector selector = new Selector();
    fields(p, selector::field);
    return new LabelSelector(selector.matchLabels, selector.requirements);
  }

  private static final class Selector {
    Map<String, String> matchLabels = Map.of();
    final List<LabelSelector.Requirement> requirements = new ArrayList<>();

    void field(String field, JsonParser p) throws IOException {
      switch (field) {
        case "matchLabels" -> matchLabels = stringMap(p);
        case "matchExpressions" -> elements(p, q -> {
          Expression e = new Expression();
          fields(q, e::field);
          requirements.add(new LabelSelector.Requirement(e.key, LabelSelector.Operator.valueOf(e.operator), new LinkedHashSet<>(e.values)));
        });
        default -> p.skipChildren();
      }
    }
  }

  /** A preferred node affinity term: a weight and a node selector term. */
  private static final class Preferred {
    int weight;
    NodeSelectorTerm term = new NodeSelectorTerm(List.of());

    void field(String field, JsonParser p) throws IOException {
      switch (field) {
        case "weight" -> {
          Integer value = integer(p);
          weight = value != null ? value : 0;
        }
        case "preference" -> {
          if (p.currentToken() == JsonToken.START_OBJECT) {
            term = nodeSelectorTerm(p);
          } else {
            p.skipChildren();
          }
        }
        default -> p.skipChildren();
      }
    }
  }

  /** A selector's requirement: a key, an operator and values. */
  private static final class Expression {
    String key;
    String operator;
    final List<String> values = new ArrayList<>();

    void field(String field, JsonParser p) throws IOException {
      switch (field) {
        case "key" -> key = text(p);
        case "operator" -> operator = text(p);
        case "values" -> elements(p, q -> values.add(text(q)));
        default -> p.skipChildren();
      }
    }
  }

  private static void containerStatuses(JsonParser p, List<ContainerStatus> out, ContainerStatus.Kind kind) throws IOException {
    elements(p, q -> {
      PodReading.Status status = new PodReading.Status();
      fields(q, (field, r) -> status(field, r, status));
      out.add(status.status(kind));
    });
  }

  private static void status(String field, JsonParser p, PodReading.Status status) throws IOException {
    switch (field) {
      case "name" -> status.name = text(p);
      case "restartCount" -> {
        Integer value = integer(p);
        status.restartCount = value != null ? value : 0;
      }
      case "state" -> fields(p, (stateField, q) -> state(stateField, q, status.now));
      case "lastState" -> fields(p, (stateField, q) -> state(stateField, q, status.last));
      default -> p.skipChildren();
    }
  }

  private static void state(String field, JsonParser p, PodReading.State state) throws IOException {
    switch (field) {
      case "waiting" -> {
        if (p.currentToken() == JsonToken.START_OBJECT) {
          Map<String, String> w = stringMap(p);
          state.waiting = Optional.ofNullable(PodRecords.shared(w.get("reason")));
        } else {
          p.skipChildren();
        }
      }
      case "terminated" -> {
        if (p.currentToken() == JsonToken.START_OBJECT) {
          fields(p, (terminatedField, q) -> {
            switch (terminatedField) {
              case "reason" -> state.terminatedReason = Optional.ofNullable(PodRecords.shared(text(q)));
              case "exitCode" -> {
                Integer code = integer(q);
                state.exitCode = code != null ? OptionalInt.of(code) : OptionalInt.empty();
              }
              case "finishedAt" -> state.finishedAt = PodRecords.time(text(q));
              default -> q.skipChildren();
            }
          });
        } else {
          p.skipChildren();
        }
      }
      default -> p.skipChildren();
    }
  }

  /** Reads a field's value: the parser is on the value's first token, and is left on its last. */
  @FunctionalInterface
  private interface FieldReader {
    void field(String name, JsonParser parser) throws IOException;
  }

  /** Reads an array's element: the parser is on the element's first token, and is left on its last. */
  @FunctionalInterface
  private interface ElementReader {
    void element(JsonParser parser) throws IOException;
  }

  /** Each field of the object at the parser (on its START_OBJECT or its first field name); null or not an object: none. */
  private static void fields(JsonParser p, FieldReader reader) throws IOException {
    JsonToken token = p.currentToken();
    if (token == JsonToken.START_OBJECT) {
      token = p.nextToken();
    } else if (token != JsonToken.FIELD_NAME) {
      p.skipChildren();
      return;
    }
    for (; token == JsonToken.FIELD_NAME; token = p.nextToken()) {
      String name = p.currentName();
      p.nextToken();
      reader.field(name, p);
    }
  }

  /** Each element of the array at the parser; null or not an array: none. */
  private static void elements(JsonParser p, ElementReader reader) throws IOException {
    if (p.currentToken() != JsonToken.START_ARRAY) {
      p.skipChildren();
      return;
    }
    while (p.nextToken() != JsonToken.END_ARRAY) {
      reader.element(p);
    }
  }

  /** A scalar's text; null for null, objects and arrays (skipped). */
  private static String text(JsonParser p) throws IOException {
    JsonToken token = p.currentToken();
    if (token.isScalarValue() && token != JsonToken.VALUE_NULL) {
      return p.getText();
    }
    p.skipChildren();
    return null;
  }

  /** A whole number; null for null, or anything else (skipped). */
  private static Integer integer(JsonParser p) throws IOException {
    if (p.currentToken() == JsonToken.VALUE_NUMBER_INT) {
      return p.getIntValue();
    }
    p.skipChildren();
    return null;
  }

  /** An object of strings, nulls left out; {@code Map.of()} for an empty, null or absent one. */
  private static Map<String, String> stringMap(JsonParser p) throws IOException {
    if (p.currentToken() != JsonToken.START_OBJECT) {
      p.skipChildren();
      return Map.of();
    }
    Map<String, String> map = new HashMap<>();
    fields(p, (key, q) -> {
      String value = text(q);
      if (value != null) {
        map.put(key, value);
      }
    });
    return map.isEmpty() ? Map.of() : map;
  }
}
