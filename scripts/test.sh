#!/usr/bin/env bash
# The whole test suite, with all set-up: gets the test API server (built once, then cached) and runs
# unit tests and integration tests against it. This is what .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/test-apiserver.sh install >/dev/null
mvn -B --no-transfer-progress verify "$@"
