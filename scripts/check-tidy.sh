#!/usr/bin/env bash
# Runs clang-tidy with the committed .clang-tidy (Debian 12's clang-tidy 14) over every C++
# source file of backend/, db/, app/ and ui/, on all cores, against a configured build's
# compile_commands.json; prints each finding and exits 1 when there is one.
#   scripts/check-tidy.sh [BUILD_DIR] [FILE...]   (default build/ci, every source file)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/ci}"
shift || true
tidy=$(command -v clang-tidy || command -v clang-tidy-14 || true)
[ -n "$tidy" ] || { echo "check-tidy: clang-tidy is not installed (apt install clang-tidy)" >&2; exit 2; }
[ -f "$build/compile_commands.json" ] || { echo "check-tidy: no $build/compile_commands.json; configure the build first (scripts/build.sh ci)" >&2; exit 2; }
if [ $# -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(git ls-files --cached --others --exclude-standard 'backend/*.cpp' 'db/*.cpp' 'app/*.cpp' 'ui/*.cpp')
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS
# -Wno-unknown-warning-option: the build's GCC-only warning flags mean nothing to clang.
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 "$tidy" -p "$build" --quiet \
    --extra-arg=-Wno-unknown-warning-option > "$log" 2>&1 || true
findings=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log" | sort -u || true)
if [ -n "$findings" ]; then
    echo "check-tidy: clang-tidy finds these in ${#files[@]} files (.clang-tidy says why each check is on or off):" >&2
    echo "$findings" >&2
    exit 1
fi
echo "check-tidy: ${#files[@]} files clean under .clang-tidy ($((SECONDS - start)) s)"
