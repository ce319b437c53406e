#!/usr/bin/env bash
# Regenerates manifests/container/podsweeper.classlist: the classes a real start loads, for the image's class-data
# archive (manifests/container/Dockerfile; docs/benchmarks.md, "class-data archive").
#
#   scripts/cds-classlist.sh
#
# Why a committed list: the image build has no cluster, and a training run without one (`plan`) loads only about
# half of what `run` needs (no informers, TLS, watches, evictions, leader election). This script does the training
# against the test API server (scripts/test-apiserver.sh): `run` with the Deployment's arguments (leader election,
# JSON logs) removes a Failed pod, once with the bundled native policy and once with a descheduler v1alpha2 policy,
# /metrics and /readyz are read, then it stops; `plan` on the bundled example adds the offline commands. The JVM
# writes each class as it loads it (-XX:DumpLoadedClassList); the union of the runs is the list. A list that names a
# class the code no longer has costs nothing but that class (the dump skips it with a warning); ClassListTest fails
# when Podsweeper's own classes in it have gone, so a refactoring says to run this again.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=manifests/container/podsweeper.classlist
mvn -q -B --no-transfer-progress -DskipTests package
RUN=$(mktemp -d /tmp/podsweeper-cds-XXXXXX)
trap 'bash scripts/test-apiserver.sh stop "$RUN"' EXIT
bash scripts/test-apiserver.sh start "$RUN" >/dev/null
# shellcheck disable=SC1091
source "$RUN/env"
kube() { # PATH [CURL ARGS...]: a request to the test API server as its admin
  local path=$1; shift
  curl -sf --cacert "$KUBE_CA_FILE" -H "Authorization: Bearer $KUBE_TOKEN" -o /dev/null "$@" "$KUBE_SERVER$path"
}
api() { # METHOD PATH [JSON] [CONTENT_TYPE]
  kube "$2" -S -X "$1" -H "Content-Type: ${4:-application/json}" ${3:+-d "$3"}
}
gone() { ! kube "/api/v1/namespaces/$1/pods/$2"; }

now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
hours_ago=$(date -u -d '-2 hours' +%Y-%m-%dT%H:%M:%SZ)
api POST /api/v1/nodes '{"metadata":{"name":"node-0","labels":{"kubernetes.io/hostname":"node-0"}}}'
api PATCH /api/v1/nodes/node-0/status "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}],\"allocatable\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\"},\"capacity\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\"}}}" application/merge-patch+json
for ns in podsweeper ci-training; do api POST /api/v1/namespaces "{\"metadata\":{\"name\":\"$ns\"}}"; done
pod() { # NAMESPACE NAME PHASE
  api POST "/api/v1/namespaces/$1/pods" "{\"metadata\":{\"name\":\"$2\",\"labels\":{\"app\":\"training\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"training\",\"uid\":\"00000000-0000-0000-0000-000000000001\",\"controller\":true}]},\"spec\":{\"nodeName\":\"node-0\",\"containers\":[{\"name\":\"main\",\"image\":\"registry.example.com/app:1\",\"resources\":{\"requests\":{\"cpu\":\"10m\"}}}]}}"
  local exit=0 state
  [ "$3" = Failed ] && exit=1
  state="{\"terminated\":{\"exitCode\":$exit,\"reason\":\"Error\",\"startedAt\":\"$hours_ago\",\"finishedAt\":\"$hours_ago\"}}"
  [ "$3" = Running ] && state="{\"running\":{\"startedAt\":\"$hours_ago\"}}"
  api PATCH "/api/v1/namespaces/$1/pods/$2/status" "{\"status\":{\"phase\":\"$3\",\"startTime\":\"$hours_ago\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"$([ "$3" = Running ] && echo True || echo False)\"},{\"type\":\"PodScheduled\",\"status\":\"True\"}],\"containerStatuses\":[{\"name\":\"main\",\"image\":\"registry.example.com/app:1\",\"imageID\":\"\",\"ready\":false,\"restartCount\":0,\"state\":$state}]}}" application/merge-patch+json
}
for i in 0 1 2; do pod ci-training "running-$i" Running; done

cat > "$RUN/descheduler-policy.yaml" <<'POLICY'
apiVersion: "descheduler/v1alpha2"
kind: "DeschedulerPolicy"
profiles:
  - name: training
    pluginConfig:
      - {name: "DefaultEvictor", args: {evictLocalStoragePods: true}}
      - {name: "RemoveFailedPods", args: {minPodLifetimeSeconds: 0}}
      - {name: "PodLifeTime", args: {maxPodLifeTimeSeconds: 86400}}
    plugins:
      filter: {enabled: ["DefaultEvictor"]}
      preEvictionFilter: {enabled: ["DefaultEvictor"]}
      deschedule: {enabled: ["PodLifeTime", "RemoveFailedPods"]}
POLICY
rm -f "$RUN"/*.classlist
train() { # NAME POLICY
  pod ci-training "$1" Failed
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  POD_NAME=training POD_NAMESPACE=podsweeper java -XX:DumpLoadedClassList="$RUN/$1.classlist" -jar target/podsweeper.jar run \
    --policy "$2" --kubeconfig "$RUN/kubeconfig" --http-host 127.0.0.1 --http-port "$port" --probe-port 0 --log-format json --leader-elect \
    --wait-for-valid-policy >"$RUN/$1.log" 2>&1 &
  local pid=$! deadline=$((SECONDS + 90))
  until gone ci-training "$1"; do
    if ! kill -0 "$pid" 2>/dev/null || [ $SECONDS -gt $deadline ]; then
      kill "$pid" 2>/dev/null || true
      cp "$RUN/$1.log" "/tmp/podsweeper-cds-$1.log"
      echo "cds-classlist: the training run did not remove ci-training/$1; its log: /tmp/podsweeper-cds-$1.log" >&2; exit 1
    fi
    sleep 0.5
  done
  for path in /metrics /readyz /api/v1/decisions; do curl -s "http://127.0.0.1:$port$path" -o /dev/null; done
  kill "$pid" && wait "$pid" || true
}
train failed-native config/policy.yaml
train failed-descheduler "$RUN/descheduler-policy.yaml"
java -XX:DumpLoadedClassList="$RUN/plan.classlist" -jar target/podsweeper.jar plan --policy config/policy.yaml \
  --snapshot config/examples/snapshot.yaml >/dev/null
{
  echo "# The classes a start of Podsweeper loads, for the image's class-data archive (manifests/container/Dockerfile)."
  echo "# Generated by scripts/cds-classlist.sh; run it again when ClassListTest says Podsweeper's classes have moved."
  cat "$RUN"/*.classlist | grep -v '^#' | awk '!seen[$0]++'
} > "$OUT"
echo "cds-classlist: $(grep -vc '^[#@]' "$OUT") classes, $(grep -c '^@' "$OUT") lambda and method-handle entries -> $OUT"
