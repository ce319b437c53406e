package io.podsweeper.cluster;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/** An immutable view of the cluster at one moment: what {@code plan} reads from a file and {@code run} from informers. */
public record ClusterSnapshot(List<PodRecord> pods, Map<String, NamespaceRecord> namespaces, List<NodeRecord> nodes) {
  public ClusterSnapshot {
    pods = List.copyOf(pods);
    namespaces = Map.copyOf(namespaces);
    nodes = List.copyOf(nodes);
  }

  public static ClusterSnapshot of(
      Collection<PodRecord> pods, Collection<NamespaceRecord> namespaces, Collection<NodeRecord> nodes) {
    return new ClusterSnapshot(
        List.copyOf(pods),
        namespaces.stream().collect(Collectors.toMap(NamespaceRecord::name, Function.identity(), (a, b) -> b)),
        List.copyOf(nodes));
  }

  public NamespaceRecord namespace(String name) {
    NamespaceRecord known = namespaces.get(name);
    return known != null ? known : NamespaceRecord.unknown(name);
  }
}
