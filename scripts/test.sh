#!/usr/bin/env bash
# The whole test suite, with all set-up: gets the test API server (built once, then cached) and runs
# unit tests and integration tests against it. This is what .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/test-apiserver.sh install >/dev/null
# promtool for MonitoringTest (one binary from Debian's prometheus package); without it that check is skipped, loudly.
bash scripts/install-promtool.sh >/dev/null || echo "test.sh: promtool unavailable; MonitoringTest will skip the promtool checks" >&2
mvn -B --no-transfer-progress verify "$@"
# The benchmarks (docs/benchmarks.md) are built outside the normal build; make sure they still compile.
mvn -B -q --no-transfer-progress -Pbench -DskipTests package
