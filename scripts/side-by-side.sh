#!/usr/bin/env bash
# Podsweeper and the upstream descheduler side by side on the same data (docs/benchmarks.md):
#
#   scripts/side-by-side.sh PODS DESCHEDULER_BINARY [RUNS]     RUNS default 2
#
# Builds with the bench profile, starts kube-apiserver + etcd (scripts/test-apiserver.sh), creates 20 Ready nodes and
# PODS pods (as scripts/load-test.sh does), then runs each tool alone, RUNS times in turn, with the same
# descheduler/v1alpha2 policy, and prints one table row per turn: time and CPU to the first removal request, steady
# CPU, RSS, deadline -> request latencies from the API server's audit log. DESCHEDULER_BINARY is a descheduler
# v0.32.2 built as docs/benchmarks.md describes (nothing of it is in this repository).
# SERVICE_JAVA_OPTS: Podsweeper's JVM flags (default: the image's class-data archive, the Deployment's JAVA_TOOL_OPTIONS
# and -XX:MaxRAM of its memory limit, i.e. what the container would get); TOOLS=upstream|podsweeper runs one only; STEADY_SECONDS (120);
# REACT_PODS (60): the pods whose deadlines measure the reaction, 0 for a turn about the start only.
set -euo pipefail
cd "$(dirname "$0")/.."
PODS=${1:?usage: scripts/side-by-side.sh PODS DESCHEDULER_BINARY [RUNS]}
BINARY=$(realpath "${2:?usage: scripts/side-by-side.sh PODS DESCHEDULER_BINARY [RUNS]}")
RUNS=${3:-2}
if [ -z "${SERVICE_JAVA_OPTS+x}" ]; then
  opts=$(sed -n '/name: JAVA_TOOL_OPTIONS/,/value:/s/^ *value: "\(.*\)"$/\1/p' manifests/deployment.yaml)
  limit=$(sed -n '/limits:/,/memory:/{s/^ *memory: \([0-9]*\)Mi$/\1/p}' manifests/deployment.yaml)
  export SERVICE_JAVA_OPTS="-XX:SharedArchiveFile=target/podsweeper.jsa $opts -XX:MaxRAM=${limit}m"
fi
mvn -q -B --no-transfer-progress -Pbench -DskipTests package
# The image's class-data archive, made from the same class list as in manifests/container/Dockerfile.
rm -f target/podsweeper.jsa
java -Xshare:dump -XX:SharedClassListFile=manifests/container/podsweeper.classlist \
  -XX:SharedArchiveFile=target/podsweeper.jsa -cp target/podsweeper.jar >/dev/null 2>&1
RUN=$(mktemp -d /tmp/podsweeper-sbs-XXXXXX)
trap 'bash scripts/test-apiserver.sh stop "$RUN"' EXIT
bash scripts/test-apiserver.sh start "$RUN" >/dev/null
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(java -version 2>&1 | head -1); Podsweeper JVM flags: $SERVICE_JAVA_OPTS"
java -Xmx2g -cp target/benchmarks.jar io.podsweeper.bench.SideBySide "$PODS" "$RUN" "$BINARY" "$RUNS"
