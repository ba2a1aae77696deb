#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo: a heterogeneous 4-worker cluster
# training an MLP on Fashion-MNIST, paced at real time, with a progress bar and a summary.
# With a display, the console opens beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh release
mkdir -p runs
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x build/release/app/fulcrum ]; then
  build/release/app/fulcrum &
fi
exec build/release/app/fulcrum-run resources/scenarios/demo.json --out runs/demo.db "$@"
