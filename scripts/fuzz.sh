#!/usr/bin/env bash
# Builds the protocol codec's libFuzzer target with clang (address and undefined-behaviour
# sanitizers) and fuzzes it for a bounded time: scripts/fuzz.sh [SECONDS] (default 60).
# A crash leaves its input in build/fuzz/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
mkdir -p build/fuzz
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Ibackend \
  tests/fuzz/codec_fuzz.cpp backend/protocol/*.cpp backend/common/error.cpp backend/common/file_text.cpp backend/common/json_fields.cpp backend/common/server_path.cpp \
  -lboost_json -o build/fuzz/codec_fuzz
rm -rf build/fuzz/corpus && cp -r tests/fuzz/corpus build/fuzz/corpus
cd build/fuzz
./codec_fuzz -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 corpus
