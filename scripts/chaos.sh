#!/usr/bin/env bash
# Kills and restarts a real fulcrumd (three jobs, remote fulcrum-worker processes, viewer
# clients) at random moments, then checks that every job finished, every run store passes
# PRAGMA integrity_check and no committed iteration is missing.
#   scripts/chaos.sh [KILLS]     (default 10; CI runs the same test with 3)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh ci
FULCRUM_CHAOS_ROUNDS="${1:-10}" ctest --preset ci -L chaos --output-on-failure
