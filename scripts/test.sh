#!/usr/bin/env bash
# Installs what is missing, builds the CI preset (warnings are errors, the baseline
# x86-64-v2 target) and runs the whole test suite with ctest, the Fashion-MNIST accuracy
# tests included, then fuzzes the protocol codec for 60 s.
# The same warning-checked build is also compiled for x86-64-v4 (AVX-512), whatever this
# machine's CPU is: compiler warnings inside vector code depend on the target, and an
# AVX-512 user's build must not be the first to meet them.
set -euo pipefail
cd "$(dirname "$0")/.."
# With the real tools some tests start: Prometheus, Slurm and munge, lintian, systemd-analyze.
bash scripts/install-deps.sh --test-tools
# The committed .clang-format holds for every C++ file (seconds; fails before any build).
bash scripts/check-format.sh
bash scripts/build.sh ci
bash scripts/build.sh ci-v4
# The committed .clang-tidy holds for every source file (minutes: after the build, whose
# compile_commands.json it reads).
bash scripts/check-tidy.sh build/ci
export QT_QPA_PLATFORM=offscreen
ctest --preset ci -j "$(nproc)"
# What training computes is kept bit for bit across refactorings: every shipped scenario's
# and three quick experiments' rows, digested, against those recorded for this preset.
bash scripts/behaviour-digest.sh build/ci --check tests/behaviour/digests-x86-64-v2.txt
# The protocol codec's fuzz target, for a bounded time (needs clang; a crash fails CI).
bash scripts/fuzz.sh 60
