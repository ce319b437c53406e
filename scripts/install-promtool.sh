#!/usr/bin/env bash
# Puts promtool (from Debian's prometheus package, 19 MB) in the cache for PrometheusRuleTest, which checks
# manifests/monitoring/prometheusrule.yaml with `promtool check rules` and `promtool test rules`.
# Only the one binary is extracted from the .deb: no Prometheus server is installed or started.
#
#   scripts/install-promtool.sh    prints the path of promtool; exit 1 (with a message) if it cannot get it
set -euo pipefail
CACHE="${PODSWEEPER_CACHE:-$HOME/.cache/podsweeper}"
TARGET="$CACHE/bin/promtool"

if [ -x "$TARGET" ]; then echo "$TARGET"; exit 0; fi
if command -v promtool >/dev/null 2>&1; then command -v promtool; exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-promtool: no apt-get here; put promtool on PATH to check the alert rules" >&2; exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get download -qq prometheus >/dev/null 2>&1; then
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get download -qq prometheus >/dev/null 2>&1 || { echo "install-promtool: cannot download Debian's prometheus package" >&2; exit 1; }
fi
dpkg-deb -x prometheus_*.deb root
mkdir -p "$(dirname "$TARGET")"
cp root/usr/bin/promtool "$TARGET.tmp" && mv "$TARGET.tmp" "$TARGET"
echo "$TARGET"
