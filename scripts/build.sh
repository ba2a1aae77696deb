#!/usr/bin/env bash
# Configures and builds one CMake preset (release by default): scripts/build.sh [PRESET]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
cmake --preset "$preset" > build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
rm -f build-configure.log
# Two jobs fit the 2-core, 24 GiB machines; Eigen and Boost.JSON units take ~1 GiB each.
cmake --build --preset "$preset" -j "${FULCRUM_JOBS:-$(nproc)}"
