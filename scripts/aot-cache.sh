#!/usr/bin/env bash
# Trains Podsweeper's AOT cache (JEP 483/514/515: classes loaded and linked, method profiles) on a live run against
# the test API server (scripts/test-apiserver.sh), for the JVM that will use it (docs/benchmarks.md, "Java 25 and the
# AOT cache"):
#
#   scripts/aot-cache.sh OUT [JVM_FLAG...]
#
# OUT is written by the JVM when the training run exits; the service then starts with -XX:AOTCache=OUT and the same
# JVM flags. A cache fits only the JVM build that made it, the flags that shape it (-XX:+UseCompactObjectHeaders,
# compressed pointers) and the jar it was trained with: with any other, the JVM starts without it, and `run` logs a
# warning ("the AOT cache ... is not in use"). So the cache is trained where it will be used, never committed:
#   AOT_JAVA  the command that starts that JVM (default: Temurin 25's java); it may be a container's, e.g.
#             "podman run --rm --network host -v DIR:DIR ... --entrypoint java IMAGE" (scripts/build-image.sh), with
#             OUT's directory and AOT_WORK mounted at the same paths
#   AOT_JAR   the jar as that JVM sees it (default: target/podsweeper.jar, built here if missing)
#   AOT_WORK  an empty directory for the test API server and the policies (default: a new one under /tmp)
#
# The training run is `run` as the Deployment runs it (leader election, JSON logs), with the bundled native policy: it
# removes a Failed pod; the policy file is then replaced by a descheduler v1alpha2 policy, reloaded, and removes
# another; every connection to the API server is cut once (the watches resume and catch up); /metrics, /readyz and
# /api/v1/decisions are read; then it is stopped (SIGTERM) and the JVM writes the cache. Why a live run and not `plan`:
# `plan` loads about half of what `run` needs (no informers, TLS, watches, evictions, leader election).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/aot-cache.sh OUT [JVM_FLAG...]}
shift
OUT=$(realpath -m "$OUT")
read -r -a JAVA <<< "${AOT_JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}"
JAR=${AOT_JAR:-target/podsweeper.jar}
if [ -z "${AOT_JAR:-}" ] && [ ! -f "$JAR" ]; then
  mvn -q -B --no-transfer-progress -DskipTests package
fi
RUN=${AOT_WORK:-$(mktemp -d /tmp/podsweeper-aot-XXXXXX)}
RUN=$(realpath "$RUN")
mkdir -p "$(dirname "$OUT")"
rm -f "$OUT"
# Stops the test API server, then removes the work directory if it was made here (the pid files are in it: removed
# first, the server and etcd were left running after every training).
cleanup() {
  bash scripts/test-apiserver.sh stop "$RUN/apiserver" >/dev/null 2>&1 || true
  if [ -z "${AOT_WORK:-}" ]; then rm -rf "$RUN"; fi
}
trap cleanup EXIT
bash scripts/test-apiserver.sh start "$RUN/apiserver" >/dev/null
# shellcheck disable=SC1091
source "$RUN/apiserver/env"
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
removed() { # NAME: waits until the training run has removed ci-training/NAME
  local deadline=$((SECONDS + 90))
  until gone ci-training "$1"; do
    if ! kill -0 "$pid" 2>/dev/null || [ $SECONDS -gt $deadline ]; then
      kill "$pid" 2>/dev/null || true
      cp "$RUN/training.log" /tmp/podsweeper-aot-training.log
      echo "aot-cache: the training run did not remove ci-training/$1; its log: /tmp/podsweeper-aot-training.log" >&2; exit 1
    fi
    sleep 0.5
  done
}

cp config/policy.yaml "$RUN/policy.yaml"
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
chmod -R a+rX "$RUN"
pod ci-training failed-native Failed
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
probe_port=$(free_port)
POD_NAME=training POD_NAMESPACE=podsweeper "${JAVA[@]}" "$@" -XX:AOTCacheOutput="$OUT" -jar "$JAR" run \
  --policy "$RUN/policy.yaml" --kubeconfig "$RUN/apiserver/kubeconfig" --http-host 127.0.0.1 --http-port "$port" \
  --probe-port "$probe_port" --log-format json --leader-elect --wait-for-valid-policy --policy-reload-interval 1 >"$RUN/training.log" 2>&1 &
pid=$!
removed failed-native
if command -v ss >/dev/null && [ "$(id -u)" = 0 ]; then
  ss -K dst 127.0.0.1 dport = ":$APISERVER_PORT" >/dev/null 2>&1 || true
fi
cp "$RUN/descheduler-policy.yaml" "$RUN/policy.yaml"
sleep 3 # the reload, every second
pod ci-training failed-descheduler Failed
removed failed-descheduler
for path in /metrics /readyz /api/v1/decisions; do curl -s "http://127.0.0.1:$port$path" -o /dev/null; done
curl -s "http://127.0.0.1:$probe_port/readyz" -o /dev/null
kill "$pid"
wait "$pid" || true
[ -s "$OUT" ] || { cp "$RUN/training.log" /tmp/podsweeper-aot-training.log; echo "aot-cache: no cache written; the training log: /tmp/podsweeper-aot-training.log" >&2; exit 1; }
echo "aot-cache: $OUT ($(du -h "$OUT" | cut -f1)), trained with: ${JAVA[*]} $* -jar $JAR"
