#!/usr/bin/env bash
# Configures and builds one CMake preset (release by default), all of it or only the named
# targets (and what they need): scripts/build.sh [PRESET [TARGET...]]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
shift $(($# > 0 ? 1 : 0))
targets=()
for target in "$@"; do targets+=(--target "$target"); done
# ccache keys on the command line, which names this checkout's absolute path: relative to
# the checkout, a fresh clone (CI) reuses what an earlier build here compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=1
cmake --preset "$preset" > build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
rm -f build-configure.log
# Two jobs fit the 2-core, 24 GiB machines; Eigen and Boost.JSON units take ~1 GiB each.
cmake --build --preset "$preset" -j "${FULCRUM_JOBS:-$(nproc)}" ${targets[@]+"${targets[@]}"}
