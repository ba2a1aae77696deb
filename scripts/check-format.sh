#!/usr/bin/env bash
# Checks that every C++ and CUDA file (tracked, or new and not ignored) follows the committed .clang-format (clang-format
# 14, Debian 12's): prints the files that differ and exits 1. With --fix, formats them.
#   scripts/check-format.sh [--fix]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format > /dev/null || { echo "check-format: clang-format is not installed (apt install clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.h' '*.cu')
if [ "${1:-}" = "--fix" ]; then
    clang-format -i "${files[@]}"
    echo "check-format: formatted ${#files[@]} files"
    exit 0
fi
differ=()
for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" > /dev/null 2>&1 || differ+=("$f")
done
if [ ${#differ[@]} -gt 0 ]; then
    echo "check-format: ${#differ[@]} of ${#files[@]} files differ from .clang-format (scripts/check-format.sh --fix formats them):" >&2
    printf '  %s\n' "${differ[@]}" >&2
    exit 1
fi
echo "check-format: all ${#files[@]} C++ files follow .clang-format"
