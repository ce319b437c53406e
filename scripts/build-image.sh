#!/usr/bin/env bash
# Builds Podsweeper's container image on a machine without Docker and without any image registry (only
# Debian's archive and Maven Central reachable), then proves it: starts it the way manifests/deployment.yaml
# does (user 65532, read-only root, a tmpfs /tmp, the Deployment's JAVA_TOOL_OPTIONS and args) against a real
# kube-apiserver (scripts/test-apiserver.sh) and waits for /healthz and /readyz to answer 200.
#
#   scripts/build-image.sh [IMAGE]      default IMAGE: localhost/podsweeper:dev
#
# Steps (each prints its duration):
#   1. apt-get install podman runc mmdebstrap (only what is missing; needs root, like rootful podman)
#   2. target/podsweeper.jar: `mvn -DskipTests package` when missing or older than pom.xml / src/
#   3. the base: a Debian bookworm minbase rootfs with ca-certificates and a `nonroot` user 65532 (what
#      gcr.io/distroless/base-debian12:nonroot would give), made by mmdebstrap, cached as
#      $PODSWEEPER_CACHE/image/base-KEY.tar (default ~/.cache/podsweeper), plus a Java 25 runtime made with jlink from
#      the host's Temurin 25 ($JAVA25_HOME) with the modules the jar needs, in /opt/java/openjdk:
#      localhost/podsweeper-base:KEY
#   4. podman build of manifests/container/Dockerfile's `untrained` stage (RUNTIME_IMAGE=that base, JAR_FROM=prebuilt)
#   5. the AOT cache, trained in that image on a live run against a test API server (scripts/aot-cache.sh) with the
#      Deployment's JAVA_TOOL_OPTIONS, then the `trained` image with it (AOT_FROM=trained)
#   6. the check above, and whether the JVM used the cache; PODSWEEPER_IMAGE_CHECK=0 skips it
#
# PODSWEEPER_BASE_REFRESH=1 rebuilds the base (Debian security updates): the cache key is the recipe, not the
# date. Containers start with runc (crun refuses this host's hybrid cgroup v1) and with ulimits lowered below
# the host's (setting them to the host's own values fails here); see the "Container image" section of
# docs/benchmarks.md for the figures.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMAGE=${1:-localhost/podsweeper:dev}
CACHE="${PODSWEEPER_CACHE:-$HOME/.cache/podsweeper}"
SUITE=bookworm
MIRROR=${PODSWEEPER_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${PODSWEEPER_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
BASE_PACKAGES=ca-certificates
JAVA25_HOME=${JAVA25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
# What the jar needs (`jdeps --print-module-deps --multi-release 17 --ignore-missing-deps target/podsweeper.jar`),
# and jdk.zipfs and jdk.crypto.cryptoki left out: nothing in it reads a zip file system or a PKCS#11 token.
RUNTIME_MODULES=java.base,java.compiler,java.desktop,java.naming,java.net.http,java.sql,jdk.jfr,jdk.management,jdk.unsupported
PODMAN=(podman --runtime runc)
# Lowered, not the host's own values (see above); the JVM needs far fewer.
ULIMITS=(--ulimit nofile=10000:10000 --ulimit nproc=1000:1000)
CONTAINER=podsweeper-image-check-$$

log() { echo "build-image: $*" >&2; }
phase_started=$SECONDS
phase() { log "$1 done in $((SECONDS - phase_started)) s"; phase_started=$SECONDS; }
started_all=$SECONDS

# --- 1. tools ---
missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then log "needs root to install: ${missing[*]}"; exit 1; fi
  log "installing from Debian: ${missing[*]}"
  apt-get update -qq
  # uidmap, slirp4netns, fuse-overlayfs: podman's usual companions (recommends), named since recommends are off.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" uidmap slirp4netns fuse-overlayfs ca-certificates >/dev/null
fi
if [ "$(id -u)" != 0 ]; then log "run as root: mmdebstrap and rootful podman"; exit 1; fi
phase "tools"

# --- 2. the jar ---
JAR="$ROOT/target/podsweeper.jar"
if [ ! -f "$JAR" ] || [ -n "$(find "$ROOT/pom.xml" "$ROOT/src/main" -newer "$JAR" -print -quit)" ]; then
  log "building $JAR (mvn -DskipTests package)"
  (cd "$ROOT" && mvn -B -q -DskipTests package)
fi
phase "jar ($(du -h "$JAR" | cut -f1))"

# --- 3. the base image ---
MMDEBSTRAP_ARGS=(
  --variant=minbase --include="$BASE_PACKAGES"
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --customize-hook='echo "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin" >> "$1/etc/passwd"'
  --customize-hook='echo "nonroot:x:65532:" >> "$1/etc/group"'
  --customize-hook='mkdir -p "$1/home/nonroot" && chown 65532:65532 "$1/home/nonroot"'
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/cache/ldconfig/aux-cache "$1"/var/log/*.log "$1"/var/log/apt/*'
  "$SUITE"
)
SOURCES=("deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" "deb $SECURITY_MIRROR $SUITE-security main")
KEY=$(printf '%s\n' "${MMDEBSTRAP_ARGS[@]}" "${SOURCES[@]}" | sha256sum | cut -c1-12)
BASE_TAR="$CACHE/image/base-$KEY.tar"
DEBIAN_IMAGE="localhost/podsweeper-debian:$KEY"
JLINK_ARGS=(--add-modules "$RUNTIME_MODULES" --strip-debug --no-man-pages --no-header-files)
RUNTIME_KEY=$( ("$JAVA25_HOME/bin/java" -version 2>&1; printf '%s\n' "${JLINK_ARGS[@]}") | sha256sum | cut -c1-12)
RUNTIME="$CACHE/image/runtime-$RUNTIME_KEY"
BASE_IMAGE="localhost/podsweeper-base:$KEY-$RUNTIME_KEY"
mkdir -p "$CACHE/image"
if [ "${PODSWEEPER_BASE_REFRESH:-0}" = 1 ]; then
  rm -f "$BASE_TAR"; "${PODMAN[@]}" rmi -f "$BASE_IMAGE" "$DEBIAN_IMAGE" >/dev/null 2>&1 || true
fi
if [ ! -s "$BASE_TAR" ]; then
  log "making the base rootfs with mmdebstrap ($SUITE, $BASE_PACKAGES); cached as $BASE_TAR"
  # stdin from /dev/null: without a tty mmdebstrap would read sources from stdin; they are given explicitly.
  mmdebstrap --format=tar "${MMDEBSTRAP_ARGS[@]}" "$BASE_TAR.tmp" "${SOURCES[@]}" </dev/null >"$CACHE/image/mmdebstrap.log" 2>&1 \
    || { tail -40 "$CACHE/image/mmdebstrap.log" >&2; rm -f "$BASE_TAR.tmp"; exit 1; }
  mv "$BASE_TAR.tmp" "$BASE_TAR"
fi
phase "base rootfs ($(du -h "$BASE_TAR" | cut -f1) tar)"
if ! "${PODMAN[@]}" image exists "$DEBIAN_IMAGE"; then
  "${PODMAN[@]}" import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --message "Debian $SUITE minbase + $BASE_PACKAGES (scripts/build-image.sh)" \
    "$BASE_TAR" "$DEBIAN_IMAGE" >/dev/null
fi
if [ ! -x "$RUNTIME/bin/java" ]; then
  rm -rf "$RUNTIME.tmp"
  "$JAVA25_HOME/bin/jlink" "${JLINK_ARGS[@]}" --output "$RUNTIME.tmp"
  mv "$RUNTIME.tmp" "$RUNTIME"
fi
phase "Java runtime ($(du -sh "$RUNTIME" | cut -f1), jlink from $("$JAVA25_HOME/bin/java" -version 2>&1 | sed -n 2p))"
if ! "${PODMAN[@]}" image exists "$BASE_IMAGE"; then
  printf 'FROM %s\nCOPY %s /opt/java/openjdk\nENV JAVA_HOME=/opt/java/openjdk PATH=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n' \
    "$DEBIAN_IMAGE" "$(basename "$RUNTIME")" | "${PODMAN[@]}" build --quiet -f - -t "$BASE_IMAGE" "$CACHE/image" >/dev/null
fi
phase "base image $BASE_IMAGE"

# --- 4. the project's image, without the AOT cache ---
UNTRAINED="$IMAGE-untrained"
build() { # AOT_FROM TAG
  "${PODMAN[@]}" build --quiet \
    -f "$ROOT/manifests/container/Dockerfile" --ignorefile "$ROOT/manifests/container/Dockerfile.dockerignore" \
    --build-arg RUNTIME_IMAGE="$BASE_IMAGE" --build-arg JAR_FROM=prebuilt --build-arg AOT_FROM="$1" \
    -t "$2" "$ROOT" >/dev/null
}
build untrained "$UNTRAINED"
phase "untrained image $UNTRAINED"

# The Deployment's environment and args, read from the manifest so the training and the check run what ships.
JAVA_OPTS=$(sed -n '/name: JAVA_TOOL_OPTIONS/,/value:/ s/^ *value: "\(.*\)"$/\1/p' "$ROOT/manifests/deployment.yaml")
[ -n "$JAVA_OPTS" ] || { log "no JAVA_TOOL_OPTIONS in manifests/deployment.yaml"; exit 1; }

# --- 5. the AOT cache, trained in that image with the Deployment's JVM flags; then the image with it ---
WORK=$(mktemp -d)
API="$WORK/apiserver"
cleanup() {
  "${PODMAN[@]}" rm -f -t 5 "$CONTAINER" >/dev/null 2>&1 || true
  [ -f "$API/env" ] && bash "$ROOT/scripts/test-apiserver.sh" stop "$API" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/aot"
# shellcheck disable=SC2086 # the Deployment's flags, one word each
AOT_JAVA="${PODMAN[*]} run --rm --network host --user 0 ${ULIMITS[*]} -e POD_NAME -e POD_NAMESPACE -v $WORK:$WORK --entrypoint java $UNTRAINED" \
  AOT_JAR=/app/podsweeper.jar AOT_WORK="$WORK/aot" bash "$ROOT/scripts/aot-cache.sh" "$WORK/podsweeper.aot" $JAVA_OPTS >&2
cp "$WORK/podsweeper.aot" "$ROOT/target/podsweeper-image.aot"
build trained "$IMAGE"
size=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$IMAGE")
log "image $IMAGE: $((size / 1024 / 1024)) MiB ($size bytes, podman image inspect; the AOT cache $(du -h "$ROOT/target/podsweeper-image.aot" | cut -f1))"
phase "AOT cache and image build"

if [ "${PODSWEEPER_IMAGE_CHECK:-1}" = 0 ]; then
  log "total $((SECONDS - started_all)) s (check skipped)"; exit 0
fi

# --- 6. start it like the Deployment, against a real API server ---
bash "$ROOT/scripts/test-apiserver.sh" start "$API" >/dev/null
phase "test API server"

# The credentials, readable by user 65532, under the container's paths.
mkdir -p "$WORK/kube" "$WORK/policy"
cp "$API/pki/ca.crt" "$API/pki/admin.crt" "$API/pki/admin.key" "$WORK/kube/"
sed "s#$API/pki/#/var/run/podsweeper/kube/#g" "$API/kubeconfig" > "$WORK/kube/kubeconfig"
sed 's/^dryRun: false/dryRun: true/' "$ROOT/config/policy.yaml" > "$WORK/policy/policy.yaml"
grep -q '^dryRun: true' "$WORK/policy/policy.yaml" || { log "config/policy.yaml: no dryRun line to set"; exit 1; }
chown -R 65532:65532 "$WORK/kube" "$WORK/policy"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((20000 + RANDOM % 20000))
}
PORT=$(free_port)
# The probes' own listener (the Deployment's --probe-port 8081): /healthz and /readyz are read there, as the kubelet does.
PROBE_PORT=$(free_port)

t0=$(date +%s.%N)
"${PODMAN[@]}" run -d --rm --name "$CONTAINER" --network host \
  --user 65532:65532 --read-only --tmpfs /tmp:rw,size=64m,mode=1777 \
  --cap-drop ALL --security-opt no-new-privileges "${ULIMITS[@]}" \
  -e POD_NAME="$CONTAINER" -e POD_NAMESPACE=default \
  -e JAVA_TOOL_OPTIONS="$JAVA_OPTS" -e PROMETHEUS_DISABLE_CREATED_SERIES=true \
  -v "$WORK/kube:/var/run/podsweeper/kube:ro" -v "$WORK/policy:/etc/podsweeper:ro" \
  "$IMAGE" run --policy /etc/podsweeper/policy.yaml --kubeconfig /var/run/podsweeper/kube/kubeconfig \
  --http-port "$PORT" --probe-port "$PROBE_PORT" --http-host 127.0.0.1 --log-format json --leader-elect --wait-for-valid-policy >/dev/null

wait_200() {
  local path=$1 deadline=$((SECONDS + 120))
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PROBE_PORT$path")" = 200 ]; do
    if [ $SECONDS -ge $deadline ] || ! "${PODMAN[@]}" container exists "$CONTAINER"; then
      log "$path did not answer 200; container log:"
      "${PODMAN[@]}" logs "$CONTAINER" 2>&1 | tail -40 >&2 || true
      return 1
    fi
    sleep 0.1
  done
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}'
}
healthz=$(wait_200 /healthz)
readyz=$(wait_200 /readyz)
pid=$("${PODMAN[@]}" inspect --format '{{.State.Pid}}' "$CONTAINER")
uid=$(ps -o uid= -p "$pid" | tr -d ' ')
root_ro=$("${PODMAN[@]}" inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$CONTAINER")
[ "$uid" = 65532 ] || { log "the container's process runs as uid $uid, not 65532"; exit 1; }
log "container: uid $uid, read-only root $root_ro; /healthz 200 after $healthz s, /readyz 200 after $readyz s (from podman run)"
if "${PODMAN[@]}" logs "$CONTAINER" 2>&1 | grep -q 'is not in use\|\[error\]\[aot'; then
  log "the AOT cache is NOT in use:"; "${PODMAN[@]}" logs "$CONTAINER" 2>&1 | grep 'AOT cache\|\[aot' | head -5 >&2; exit 1
fi
log "the AOT cache is in use (no warning in the service's log)"
curl -s "http://127.0.0.1:$PORT/metrics" | grep -E '^podsweeper_informer_watching' | head -3 >&2 || true
phase "container check"
log "total $((SECONDS - started_all)) s"
