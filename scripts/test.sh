#!/usr/bin/env bash
# Installs what is missing, builds the CI preset (warnings are errors) and runs the whole
# test suite with ctest, the Fashion-MNIST accuracy tests included, then fuzzes the
# protocol codec for 60 s.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh ci
export QT_QPA_PLATFORM=offscreen
ctest --preset ci -j "$(nproc)"
# The protocol codec's fuzz target, for a bounded time (needs clang; a crash fails CI).
bash scripts/fuzz.sh 60
