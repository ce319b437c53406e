#!/usr/bin/env bash
# Load test against the real test API server (docs/benchmarks.md):
#
#   scripts/load-test.sh [PODS]     default 10000
#
# Builds with the bench profile, starts kube-apiserver + etcd, creates PODS pods (a tenth Succeeded, each with a
# deadline a day away; the rest Running), runs `podsweeper run` as its own process and prints informer sync time,
# heap after GC, deadline-to-request latency and the time to remove 1,000 due pods. Stops the server at the end.
# The service runs on SERVICE_JAVA with SERVICE_JAVA_OPTS (scripts/service-java.sh: Temurin 25, the Deployment's
# JAVA_TOOL_OPTIONS and its memory limit, an AOT cache trained for them; set SERVICE_JAVA_OPTS, e.g. to -Xmx256m, for
# other flags). RATE_PODS=20000 adds a last phase: that many running pods in one namespace, 1,500 of them expired,
# evicted at perSecond 100 (the rate reached, and the requests' mean duration, are printed). Class histograms go to
# target/load-test/.
# BUDGET_PODS=100000 runs the finished-pod budget's phase instead of all the above (PODS is then ignored; bench/BudgetLoad):
# that many Succeeded pods, BUDGET_BURST (default a fifth) of them finishing at once in one of BUDGET_NAMESPACES (default
# 200) namespaces, the rest spread over all of them; budget BUDGET_PODS - BUDGET_BURST/2 at perSecond 100. It prints the
# time to get under budget, the largest share over fair share at the end, what the quiet namespaces lost, and CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
PODS=${1:-10000}
mvn -q -B --no-transfer-progress -Pbench -DskipTests package
# shellcheck source=scripts/service-java.sh
source scripts/service-java.sh
RUN=$(mktemp -d /tmp/podsweeper-load-XXXXXX)
trap 'bash scripts/test-apiserver.sh stop "$RUN"' EXIT
bash scripts/test-apiserver.sh start "$RUN" >/dev/null
echo "machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg); $("$SERVICE_JAVA" -version 2>&1 | head -1); service: $SERVICE_JAVA $SERVICE_JAVA_OPTS"
java -Xmx2g -cp target/benchmarks.jar io.podsweeper.bench.LoadTest "$PODS" "$RUN"
