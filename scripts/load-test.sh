#!/usr/bin/env bash
# Load test against the real test API server (docs/benchmarks.md):
#
#   scripts/load-test.sh [PODS]     default 10000
#
# Builds with the bench profile, starts kube-apiserver + etcd, creates PODS pods (a tenth Succeeded, each with a
# deadline a day away; the rest Running), runs `podsweeper run` as its own process and prints informer sync time,
# heap after GC, deadline-to-request latency and the time to remove 1,000 due pods. Stops the server at the end.
# SERVICE_JAVA_OPTS passes JVM flags to the service (e.g. -Xmx256m). RATE_PODS=20000 adds a last phase: that many
# running pods in one namespace, 1,500 of them expired, evicted at perSecond 100 (the rate reached is printed). Class histograms go to target/load-test/.
set -euo pipefail
cd "$(dirname "$0")/.."
PODS=${1:-10000}
mvn -q -B --no-transfer-progress -Pbench -DskipTests package
RUN=$(mktemp -d /tmp/podsweeper-load-XXXXXX)
trap 'bash scripts/test-apiserver.sh stop "$RUN"' EXIT
bash scripts/test-apiserver.sh start "$RUN" >/dev/null
echo "machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB; $(java -version 2>&1 | head -1)"
java -Xmx2g -cp target/benchmarks.jar io.podsweeper.bench.LoadTest "$PODS" "$RUN"
