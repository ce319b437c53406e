#!/usr/bin/env bash
# A real kube-apiserver + etcd on loopback for the integration tests.
#
#   scripts/test-apiserver.sh install        get etcd, etcdctl and kube-apiserver (built once, then cached)
#   scripts/test-apiserver.sh start RUN_DIR  start both on random loopback ports; writes RUN_DIR/env
#   scripts/test-apiserver.sh stop RUN_DIR   stop them and remove RUN_DIR
#   scripts/test-apiserver.sh down RUN_DIR   stop only the API server (fault injection); `up RUN_DIR` restarts it
#   scripts/test-apiserver.sh scheduling RUN_DIR   also start kube-scheduler and kube-controller-manager against it
#                                            (ReplicaSet, Deployment, Job controllers and the garbage collector; no kubelet)
#
# Binaries come from, in order: $PODSWEEPER_KUBE_BIN_DIR (a directory holding kube-apiserver and etcd,
# e.g. from envtest), the cache ($PODSWEEPER_CACHE, default ~/.cache/podsweeper), or a build of
# kube-apiserver 1.20.2 from Debian's kubernetes source package (about 7 minutes on 2 cores, once).
# Why Debian's 1.20: this machine kind reaches only Debian's archive, Maven Central and npm, and no
# newer kube-apiserver can be built from Debian sources (see docs/testing.md).
# KUBE_PROFILING=true serves the API server's /debug/pprof (for a benchmark asking where its CPU goes; off by default).
set -euo pipefail

K8S_VERSION=1.20.2
DEB_SOURCE_VERSION=1.20.5+really1.20.2-1.1+deb12u1
CACHE="${PODSWEEPER_CACHE:-$HOME/.cache/podsweeper}"
BIN_DIR="${PODSWEEPER_KUBE_BIN_DIR:-$CACHE/k8s-$K8S_VERSION}"

log() { echo "test-apiserver: $*" >&2; }

need_root_apt() {
  if [ "$(id -u)" != 0 ]; then
    log "installing Debian packages needs root: $*"; exit 1
  fi
}

install_etcd() {
  [ -x "$BIN_DIR/etcd" ] && return
  if ! command -v etcd >/dev/null 2>&1; then
    need_root_apt etcd-server
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
  fi
  mkdir -p "$BIN_DIR"
  ln -sf "$(command -v etcd)" "$BIN_DIR/etcd"
}

# etcdctl: fault-injection tests change etcd behind the API server's back and compact its history.
install_etcdctl() {
  command -v etcdctl >/dev/null 2>&1 && return
  need_root_apt etcd-client
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends etcd-client >/dev/null
}

# The control-plane binaries built from one tree: the API server for every integration test, and the scheduler and
# controller manager for the tests where scheduling matters (a ReplicaSet's evicted pod recreated and bound).
KUBE_BINARIES=(kube-apiserver kube-scheduler kube-controller-manager)

have_kube_binaries() {
  local b
  for b in "${KUBE_BINARIES[@]}"; do [ -x "$BIN_DIR/$b" ] || return 1; done
}

build_kube_apiserver() {
  have_kube_binaries && return
  if [ -n "${PODSWEEPER_KUBE_BIN_DIR:-}" ]; then
    log "PODSWEEPER_KUBE_BIN_DIR=$PODSWEEPER_KUBE_BIN_DIR lacks one of ${KUBE_BINARIES[*]}"; exit 1
  fi
  need_root_apt kubernetes build dependencies
  log "building ${KUBE_BINARIES[*]} $K8S_VERSION from Debian's source package (about 9 minutes, once)"
  local started=$SECONDS
  local archive security
  archive=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  archive=${archive:-http://deb.debian.org/debian}
  cat > /etc/apt/sources.list.d/podsweeper-deb-src.sources <<SRC
Types: deb-src
URIs: $archive
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  security=$(awk '/^URIs:/ && $2 ~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  if [ -n "$security" ]; then
    cat >> /etc/apt/sources.list.d/podsweeper-deb-src.sources <<SRC

Types: deb-src
URIs: $security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    golang-go dpkg-dev make gcc libc6-dev ca-certificates openssl rsync curl \
    golang-github-modern-go-reflect2-dev golang-github-json-iterator-go-dev >/dev/null
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  (cd "$work" && apt-get source -qq "kubernetes=$DEB_SOURCE_VERSION" >/dev/null 2>&1)
  local src
  src=$(find "$work" -maxdepth 1 -type d -name 'kubernetes-*' | head -1)
  # The vendored reflect2 1.0.1 crashes on Go >= 1.18 for every JSON body holding a map; Debian's
  # reflect2 1.0.2 and json-iterator 1.1.12 are API-compatible drop-ins (upstream made the same bump).
  for pkg in github.com/modern-go/reflect2 github.com/json-iterator/go; do
    rm -rf "${src:?}/vendor/$pkg"; mkdir -p "$src/vendor/$pkg"
    find "/usr/share/gocode/src/$pkg" -maxdepth 1 -type f \( -name '*.go' -o -name '*.s' -o -name LICENSE \) \
      ! -name '*_test.go' -exec cp {} "$src/vendor/$pkg/" \;
  done
  local what="" b
  for b in "${KUBE_BINARIES[@]}"; do what="$what cmd/$b"; done
  (cd "$src" && make WHAT="${what# }" >"$work/build.log" 2>&1) || { tail -40 "$work/build.log" >&2; exit 1; }
  mkdir -p "$BIN_DIR"
  for b in "${KUBE_BINARIES[@]}"; do
    cp "$src/_output/local/bin/linux/amd64/$b" "$BIN_DIR/$b.tmp"
    mv "$BIN_DIR/$b.tmp" "$BIN_DIR/$b"
  done
  log "${KUBE_BINARIES[*]} built in $((SECONDS - started)) s, cached at $BIN_DIR"
}

free_port() {
  python3 - <<'PY' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
PY
}

make_pki() {
  local pki=$1
  mkdir -p "$pki"
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=podsweeper-test-ca" 2>/dev/null
    cat > server.ext <<EXT
subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
EXT
    openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=kube-apiserver" 2>/dev/null
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 3650 -extfile server.ext 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=admin" 2>/dev/null
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt -days 3650 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    local token
    token=$(openssl rand -hex 16)
    echo "$token,admin,admin,system:masters" > tokens.csv
    echo "$token" > token
  )
}

start() {
  local run=${1:?usage: start RUN_DIR}
  install_etcd
  build_kube_apiserver
  mkdir -p "$run"
  run=$(cd "$run" && pwd)
  make_pki "$run/pki"
  # The witness of what was sent: every write to pods (DELETE, evictions, patches) and to the objects that steer
  # the service (ConfigMaps, Leases), the reads of ConfigMaps, every write to EvictionRequests and nodes with its
  # body (the patch a requester sent, a taint), and the lists of what the cache's informers cache, one JSON line per request in
  # $run/audit.log (TestApiServer.audit()).
  cat > "$run/audit-policy.yaml" <<'AUDIT'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [create, update, patch, delete, deletecollection]
    resources:
      - group: ""
        resources: [pods, pods/eviction, pods/status, configmaps, namespaces]
      - group: coordination.k8s.io
        resources: [leases]
  # and how the kill switch's ConfigMap is read: a list or a watch (KillSwitchIT)
  - level: Metadata
    verbs: [list, watch]
    resources:
      - group: ""
        resources: [configmaps]
  # and what a requester wrote to an EvictionRequest, the patch included (EvictionRequestIT)
  - level: Request
    verbs: [create, update, patch, delete]
    resources:
      - group: coordination.k8s.io
        resources: [evictionrequests]
  # and what was written to a node, the patch included: MakeRoom's taint on the node it empties (MakeRoomSchedulerIT)
  - level: Request
    verbs: [patch, update]
    resources:
      - group: ""
        resources: [nodes]
  # and how the cache's informers list, from etcd or from the watch cache, as their requestURI says (WatchRenewalsIT)
  - level: Metadata
    verbs: [list]
    resources:
      - group: ""
        resources: [pods, nodes, namespaces, persistentvolumeclaims]
      - group: policy
        resources: [poddisruptionbudgets]
      - group: scheduling.k8s.io
        resources: [priorityclasses]
  - level: None
AUDIT
  local etcd_port etcd_peer port
  etcd_port=$(free_port); etcd_peer=$(free_port); port=$(free_port)
  # etcd reads ETCD_* variables as flags and exits when one conflicts with a command-line flag.
  env $(env | awk -F= '/^ETCD_/ {printf "-u %s ", $1}') "$BIN_DIR/etcd" \
    --data-dir "$run/etcd-data" --name podsweeper-test \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "podsweeper-test=http://127.0.0.1:$etcd_peer" \
    --unsafe-no-fsync=true >"$run/etcd.log" 2>&1 &
  echo $! > "$run/etcd.pid"
  local args=(
    --etcd-servers "http://127.0.0.1:$etcd_port" --bind-address 127.0.0.1 --advertise-address 127.0.0.1
    --secure-port "$port" --cert-dir "$run/pki"
    --tls-cert-file "$run/pki/server.crt" --tls-private-key-file "$run/pki/server.key"
    --client-ca-file "$run/pki/ca.crt" --token-auth-file "$run/pki/tokens.csv"
    --service-account-key-file "$run/pki/sa.pub" --service-account-signing-key-file "$run/pki/sa.key"
    --service-account-issuer https://kubernetes.default.svc.cluster.local
    --api-audiences https://kubernetes.default.svc.cluster.local
    --service-cluster-ip-range 10.0.0.0/24 --authorization-mode "${KUBE_AUTHZ_MODE:-RBAC}"
    --audit-policy-file "$run/audit-policy.yaml" --audit-log-path "$run/audit.log" --audit-log-format json
    --audit-log-mode blocking
    --disable-admission-plugins ServiceAccount --allow-privileged=true --profiling="${KUBE_PROFILING:-false}"
    ${KUBE_RUNTIME_CONFIG:+--runtime-config "$KUBE_RUNTIME_CONFIG"})
  # Saved so `up` can bring the same server back after `down` (fault-injection tests).
  printf '%q ' "$BIN_DIR/kube-apiserver" "${args[@]}" > "$run/apiserver.cmd"
  launch_apiserver "$run"
  cat > "$run/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority: $run/pki/ca.crt
users:
- name: admin
  user:
    client-certificate: $run/pki/admin.crt
    client-key: $run/pki/admin.key
contexts:
- name: test
  context: {cluster: test, user: admin}
current-context: test
KC
  wait_ready "$run" "$port" || { stop "$run"; exit 1; }
  cat > "$run/env" <<ENV
KUBECONFIG=$run/kubeconfig
KUBE_SERVER=https://127.0.0.1:$port
KUBE_TOKEN=$(cat "$run/pki/token")
KUBE_CA_FILE=$run/pki/ca.crt
APISERVER_PORT=$port
ETCD_PORT=$etcd_port
APISERVER_PID=$(cat "$run/apiserver.pid")
ETCD_PID=$(cat "$run/etcd.pid")
ENV
  echo "$run/kubeconfig"
}

launch_apiserver() {
  local run=$1
  bash -c "exec $(cat "$run/apiserver.cmd")" >>"$run/apiserver.log" 2>&1 &
  echo $! > "$run/apiserver.pid"
}

wait_ready() {
  local run=$1 port=$2 deadline=$((SECONDS + 60))
  until curl -fsk --max-time 5 --cacert "$run/pki/ca.crt" -H "Authorization: Bearer $(cat "$run/pki/token")" \
      "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ] || ! kill -0 "$(cat "$run/apiserver.pid")" 2>/dev/null; then
      log "kube-apiserver did not become ready; last log lines:"; tail -20 "$run/apiserver.log" >&2
      return 1
    fi
    sleep 0.3
  done
}

# A client certificate of the test CA for a control-plane component, and a kubeconfig with it.
component_kubeconfig() {
  local run=$1 name=$2 subject=$3
  (
    cd "$run/pki"
    openssl req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "$subject" 2>/dev/null
    openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$name.crt" -days 3650 2>/dev/null
  )
  sed -e "s|admin.crt|$name.crt|; s|admin.key|$name.key|; s|name: admin|name: $name|; s|user: admin|user: $name|" \
    "$run/kubeconfig" > "$run/$name.kubeconfig"
}

# kube-scheduler and kube-controller-manager against the started API server, as a cluster runs them but for the
# kubelet: pods are created, scheduled and bound, and bound pods stay Pending. The scheduler runs as
# system:kube-scheduler under the bootstrap RBAC roles. The controller manager runs only the controllers that recreate
# and clean up pods, with its own credentials (no per-controller service-account tokens: no token controller runs
# here), so its certificate is also in group system:masters. Neither elects a leader; each serves HTTPS on a free port.
scheduling() {
  local run=${1:?usage: scheduling RUN_DIR}
  run=$(cd "$run" && pwd)
  local b
  for b in kube-scheduler kube-controller-manager; do
    [ -x "$BIN_DIR/$b" ] || { log "$BIN_DIR/$b is missing: run scripts/test-apiserver.sh install"; exit 1; }
  done
  component_kubeconfig "$run" scheduler "/CN=system:kube-scheduler"
  component_kubeconfig "$run" controller-manager "/O=system:masters/CN=system:kube-controller-manager"
  local scheduler_port manager_port
  scheduler_port=$(free_port); manager_port=$(free_port)
  "$BIN_DIR/kube-scheduler" --kubeconfig "$run/scheduler.kubeconfig" --leader-elect=false --port=0 --bind-address 127.0.0.1 --secure-port "$scheduler_port" \
    --cert-dir "$run/pki/scheduler-serving" -v=2 >"$run/scheduler.log" 2>&1 &
  echo $! > "$run/scheduler.pid"
  "$BIN_DIR/kube-controller-manager" --kubeconfig "$run/controller-manager.kubeconfig" \
    --controllers replicaset,deployment,job,garbagecollector --leader-elect=false --port=0 --bind-address 127.0.0.1 \
    --secure-port "$manager_port" --cert-dir "$run/pki/controller-manager-serving" -v=2 >"$run/controller-manager.log" 2>&1 &
  echo $! > "$run/controller-manager.pid"
  local component port
  for component in scheduler:$scheduler_port controller-manager:$manager_port; do
    port=${component#*:}; component=${component%%:*}
    local deadline=$((SECONDS + 60))
    until curl -fsk --max-time 5 "https://127.0.0.1:$port/healthz" >/dev/null 2>&1; do
      if [ $SECONDS -ge $deadline ] || ! kill -0 "$(cat "$run/$component.pid")" 2>/dev/null; then
        log "kube-$component did not become healthy; last log lines:"; tail -20 "$run/$component.log" >&2
        return 1
      fi
      sleep 0.3
    done
  done
  cat >> "$run/env" <<ENV
SCHEDULER_PID=$(cat "$run/scheduler.pid")
CONTROLLER_MANAGER_PID=$(cat "$run/controller-manager.pid")
ENV
}

# Fault injection: the API server goes away (etcd and the run dir stay) and comes back on the same port.
down() {
  local run=${1:?usage: down RUN_DIR}
  local pid
  pid=$(cat "$run/apiserver.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

up() {
  local run=${1:?usage: up RUN_DIR}
  launch_apiserver "$run"
  wait_ready "$run" "$(sed -n 's/^APISERVER_PORT=//p' "$run/env")"
}

stop() {
  local run=${1:?usage: stop RUN_DIR}
  for f in scheduler.pid controller-manager.pid apiserver.pid etcd.pid; do
    [ -f "$run/$f" ] && kill "$(cat "$run/$f")" 2>/dev/null || true
  done
  sleep 0.5
  for f in scheduler.pid controller-manager.pid apiserver.pid etcd.pid; do
    [ -f "$run/$f" ] && kill -9 "$(cat "$run/$f")" 2>/dev/null || true
  done
  rm -rf "$run"
}

case "${1:-}" in
  install) install_etcd; install_etcdctl; build_kube_apiserver; echo "$BIN_DIR" ;;
  start) start "${2:-}" ;;
  stop) stop "${2:-}" ;;
  down) down "${2:-}" ;;
  up) up "${2:-}" ;;
  scheduling) scheduling "${2:-}" ;;
  *) echo "usage: $0 install | start RUN_DIR | scheduling RUN_DIR | stop RUN_DIR | down RUN_DIR | up RUN_DIR" >&2; exit 2 ;;
esac
