#!/usr/bin/env bash
# GpuKit.TheCheckRunsOnTheCpuFromAKitUnderItsSizeLimit (issue 46): scripts/gpu-kit.sh packs
# this build's programs with Fashion-MNIST and websockets under the kit's 48 MiB limit, and
# scripts/gpu-check.sh --dry-run runs every step of the GPU check from that kit on the CPU,
# writing its summary and artefacts under $OUT. A step that fails makes the check exit 1.
#   tests/gpu/gpu_kit_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
cd "$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v xz > /dev/null || { echo "gpu_kit_test: xz is not installed (scripts/install-deps.sh --test-tools)"; exit 77; }
/usr/bin/python3 -c 'import websockets' 2> /dev/null \
    || { echo "gpu_kit_test: python3-websockets is not installed (scripts/install-deps.sh --test-tools)"; exit 77; }

bash scripts/gpu-kit.sh --from "$build" --out "$work/kit" | tee "$work/kit.log"
size=$(du -sb "$work/kit" | cut -f1)
[ "$size" -le $((48 << 20)) ] || fail "the kit holds $size bytes, over 48 MiB"
grep -q "gpu-kit: $work/kit holds .* MiB (limit 48 MiB)" "$work/kit.log" || fail "the kit's size is not printed"
tar -tJf "$work/kit/programs.tar.xz" > "$work/programs"
for program in app/fulcrum-run app/fulcrumd app/fulcrum-worker app/fulcrum-experiment bench/gpu_step \
    tests/dense_pass_test tests/cuda_step_test; do
    grep -qx "$program" "$work/programs" || fail "the kit lacks $program"
done
[ -f "$work/kit/python/websockets/__init__.py" ] || fail "the kit lacks websockets"

set +e
OUT="$work/out" bash scripts/gpu-check.sh --dry-run "$work/kit" > "$work/check.log" 2>&1
status=$?
set -e
cat "$work/check.log"
[ "$status" = 0 ] || fail "the dry run exited $status"
for f in summary.md gpu-check.log artefacts.tar.gz; do
    [ -s "$work/out/$f" ] || fail "\$OUT lacks $f"
done
for step in dense_pass_test cuda_step_test gpu-real "sm-partitions, lbbsp" "sm-partitions, equal" \
    "sm-partitions, ratio" "remote GPU workers" gpu-profile gpu_step; do
    grep -q "^| $step | passed |" "$work/out/summary.md" || fail "step $step did not pass"
done
grep -qE '^\| torch job( \(.*\))? \| (passed|skipped) \|' "$work/out/summary.md" || fail "no torch job row"
grep -qE '^\| resnet-18 job( \(.*\))? \| (passed|skipped) \|' "$work/out/summary.md" || fail "no resnet-18 job row"
tar -tzf "$work/out/artefacts.tar.gz" > "$work/artefacts"
for f in ./gpu-real.db ./sm-lbbsp.db ./sm-equal.db ./gpu-remote.db ./gpu_step.json ./sm-partitions.json; do
    grep -qx "$f" "$work/artefacts" || fail "the artefacts lack $f"
done

# Programs missing from a build folder fail their steps, and the check exits 1.
mkdir -p "$work/broken/tests"
ln -s "$build/tests/dense_pass_test" "$work/broken/tests/dense_pass_test"
set +e
OUT="$work/broken-out" bash scripts/gpu-check.sh --dry-run "$work/broken" > "$work/broken.log" 2>&1
status=$?
set -e
[ "$status" = 1 ] || { cat "$work/broken.log"; fail "a check with a failed step exited $status"; }
for step in cuda_step_test gpu-real sm-partitions gpu-profile gpu_step; do
    grep -q "^| $step | FAILED |" "$work/broken-out/summary.md" || fail "the step of a missing program, $step, is not FAILED"
done
echo "PASS"
