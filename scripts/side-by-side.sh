#!/usr/bin/env bash
# Podsweeper and the upstream descheduler side by side on the same data (docs/benchmarks.md):
#
#   scripts/side-by-side.sh PODS DESCHEDULER_BINARY [RUNS]     RUNS default 2
#
# Builds with the bench profile, starts kube-apiserver + etcd (scripts/test-apiserver.sh), creates 20 Ready nodes and
# PODS pods (as scripts/load-test.sh does), then runs each tool alone, RUNS times in turn (each run starting with the
# tool the last one ended with, so each goes first in turn), with the same descheduler/v1alpha2 policy, and prints one
# table row per turn: the reference LIST timed right before it (protobuf, compressed: from etcd in pages of 500, and
# from the watch cache), time to the first removal request, CPU to it and per steady minute of the tool's process, of
# the kube-apiserver + etcd and of both, RSS, deadline -> request latencies from the API server's audit log.
# DESCHEDULER_BINARY is a descheduler v0.32.2 built as docs/benchmarks.md describes (nothing of it is in this
# repository).
# Podsweeper runs on SERVICE_JAVA with SERVICE_JAVA_OPTS (scripts/service-java.sh: Temurin 25, the Deployment's
# JAVA_TOOL_OPTIONS and -XX:MaxRAM of its memory limit, and an AOT cache trained for them; SERVICE_AOT=0 for none);
# TOOLS=upstream|podsweeper runs one only; STEADY_SECONDS (1200: both tools renew each watch every 5 to 10 minutes, and
# neither lets that be shortened, so the steady window holds two renewals of each at least);
# REACT_PODS (60): the pods whose deadlines measure the reaction, 0 for a turn about the start only;
# ALONE_SECONDS (0): after each turn, the kube-apiserver + etcd measured that long with no tool connected (last column).
set -euo pipefail
cd "$(dirname "$0")/.."
PODS=${1:?usage: scripts/side-by-side.sh PODS DESCHEDULER_BINARY [RUNS]}
BINARY=$(realpath "${2:?usage: scripts/side-by-side.sh PODS DESCHEDULER_BINARY [RUNS]}")
RUNS=${3:-2}
mvn -q -B --no-transfer-progress -Pbench -DskipTests package
# shellcheck source=scripts/service-java.sh
source scripts/service-java.sh
RUN=$(mktemp -d /tmp/podsweeper-sbs-XXXXXX)
trap 'bash scripts/test-apiserver.sh stop "$RUN"' EXIT
bash scripts/test-apiserver.sh start "$RUN" >/dev/null
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $("$SERVICE_JAVA" -version 2>&1 | head -1); Podsweeper: $SERVICE_JAVA $SERVICE_JAVA_OPTS"
java -Xmx2g -cp target/benchmarks.jar io.podsweeper.bench.SideBySide "$PODS" "$RUN" "$BINARY" "$RUNS"
