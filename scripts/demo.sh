#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo: a heterogeneous 4-worker cluster
# training an MLP on Fashion-MNIST, paced at real time.
# With a display: fulcrumd runs the demo job and the console opens connected to it (close
# the console to stop). Without one: the run goes headless with a progress bar and a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Only the programs the demo runs (and the libraries they need), not the tests and benches:
# the console and fulcrumd where a display is, fulcrum-run otherwise.
display=""
[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && display=1
if [ -n "$display" ]; then
  bash scripts/build.sh release fulcrumd fulcrum-run
  # The console where Qt 6 was found (FULCRUM_BUILD_UI); headless otherwise.
  if grep -q '^FULCRUM_CONSOLE_BUILT:INTERNAL=ON' build/release/CMakeCache.txt; then
    bash scripts/build.sh release fulcrum
  fi
else
  bash scripts/build.sh release fulcrum-run
fi
mkdir -p runs
if [ -n "$display" ] && [ -x build/release/app/fulcrum ]; then
  data=runs/fulcrumd
  mkdir -p "$data"
  build/release/app/fulcrumd --data-dir "$data" --scenario resources/scenarios/demo.json &
  daemon=$!
  trap 'kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do [ -s "$data/tokens" ] && break; sleep 0.1; done
  build/release/app/fulcrum --connect ws://127.0.0.1:7480 --token-file "$data/tokens" "$@"
  exit 0
fi
exec build/release/app/fulcrum-run resources/scenarios/demo.json --out runs/demo.db "$@"
