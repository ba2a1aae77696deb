#!/usr/bin/env bash
# The GPU check (issue 20): on a machine with a CUDA GPU, runs the GPU tests and the GPU
# benchmarks of a build made elsewhere, and prints one summary.
#   scripts/gpu-check.sh [BUILD_DIR]          (default build/gpu-portable, else build/release)
# The GPU machines have nvcc, PyTorch and the NVIDIA driver but no Debian packages: build
# on a Debian machine with `scripts/build.sh gpu-portable` (nvcc in /usr/local/cuda; Boost,
# SQLite, zlib, OpenSSL and libstdc++ linked statically), take the build folder over and
# run this there. A program that needs a library the machine lacks
# is reported as skipped with the library named; it is never a silent pass.
set -uo pipefail
cd "$(dirname "$0")/.."
default=build/release
[ -d build/gpu-portable ] && default=build/gpu-portable
build="${1:-$default}"
[ -d "$build" ] || { echo "gpu-check: no build folder $build (scripts/build.sh release first)" >&2; exit 2; }
# The python3 that has PyTorch, if any has it.
python=""
for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" > /dev/null && "$candidate" -c 'import torch' 2> /dev/null; then
        python=$(command -v "$candidate")
        break
    fi
done
[ -n "$python" ] || python=$(command -v python3 || true)
summary=()
failed=0
no_device=""
say() { summary+=("$1"); }

runnable() { # prints what a program lacks, if anything
    local missing
    missing=$(ldd "$1" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
    [ -z "$missing" ] || { echo "$missing"; return 1; }
}

echo "== devices"
if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader
else
    echo "nvidia-smi is not installed"
fi

echo "== GPU tests ($build/tests/cuda_step_test, dense_pass_test)"
for t in dense_pass_test cuda_step_test; do
    exe="$build/tests/$t"
    if [ ! -x "$exe" ]; then
        say "$t: not built (FULCRUM_BUILD_TESTS=OFF?)"
        failed=1
        continue
    fi
    if ! lacks=$(runnable "$exe"); then
        say "$t: skipped, this machine lacks $lacks"
        continue
    fi
    log=$(mktemp)
    if "$exe" > "$log" 2>&1; then
        passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\./\1/p' "$log")
        skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?, listed below:/\1/p' "$log")
        skipped=${skipped:-0}
        say "$t: passed ($passed passed, $skipped skipped)"
        if grep -q 'no CUDA device' "$log"; then
            no_device=$(grep -m1 -o 'no CUDA device: .*' "$log")
            echo "  $no_device"
        fi
    else
        say "$t: FAILED (log below)"
        cat "$log"
        failed=1
    fi
    rm -f "$log"
done

echo "== a real-mode job on GPU workers (resources/scenarios/gpu-real.json)"
run="$build/app/fulcrum-run"
if [ ! -x "$run" ]; then
    say "gpu-real job: fulcrum-run is not in $build"
elif [ -n "$no_device" ]; then
    say "gpu-real job: skipped, $no_device"
elif ! lacks=$(runnable "$run"); then
    say "gpu-real job: skipped, this machine lacks $lacks (build the gpu-portable preset)"
else
    store=$(mktemp -d)/gpu-real.db
    if "$run" resources/scenarios/gpu-real.json --out "$store" > "$store.txt" 2>&1; then
        cat "$store.txt"
        say "gpu-real job: ran; its summary is above, its rows in $store"
    else
        cat "$store.txt"
        say "gpu-real job: FAILED (above)"
        failed=1
    fi
fi

echo "== one GPU as a heterogeneous cluster: SM partitions, LB-BSP against equal batches"
if [ -x "$run" ] && [ -z "$no_device" ] && runnable "$run" > /dev/null; then
    work=$(mktemp -d)
    sed 's/"lbbsp-gpu"/"uniform"/' resources/scenarios/gpu-sm-partitions.json > "$work/equal.json"
    if "$run" resources/scenarios/gpu-sm-partitions.json --out "$work/lbbsp.db" --json > "$work/lbbsp.json" 2> "$work/lbbsp.txt" \
        && "$run" "$work/equal.json" --out "$work/equal.db" --json > "$work/equal.json.out" 2> "$work/equal.txt"; then
        say "$("$python" - "$work/lbbsp.json" "$work/equal.json.out" "$work/lbbsp.db" <<'PY'
import json, sqlite3, sys
lb, eq = (json.load(open(p)) for p in sys.argv[1:3])
for (message,) in sqlite3.connect(sys.argv[3]).execute("SELECT message FROM events WHERE kind = 'gpu-device'"):
    print(message, file=sys.stderr)  # which SMs each worker got, or why it shares the whole GPU
ratio = eq["mean_iteration_seconds"] / lb["mean_iteration_seconds"]
print(f"sm-partitions: LB-BSP {lb['mean_iteration_seconds']*1e3:.2f} ms/iteration, equal batches "
      f"{eq['mean_iteration_seconds']*1e3:.2f} ms: {ratio:.2f}x the throughput (target 1.6x); "
      f"test accuracy {lb['final_test_accuracy']:.4f} vs {eq['final_test_accuracy']:.4f}")
PY
)"
    else
        cat "$work"/*.txt
        say "sm-partitions: FAILED (above)"
        failed=1
    fi
else
    say "sm-partitions: skipped, ${no_device:-fulcrum-run cannot run here}"
fi

echo "== a PyTorch job under fulcrumd with NCCL on the GPU (clients/python/examples/torch_ddp_fashion_mnist.py)"
# The GPU machines have no Debian data set package: copy /usr/share/datasets/fashion-mnist
# into BUILD/data/fashion-mnist before carrying the build folder over.
data=""
for candidate in "$build/data/fashion-mnist" /usr/share/datasets/fashion-mnist; do
    [ -f "$candidate/train-images-idx3-ubyte.gz" ] && { data="$candidate"; break; }
done
daemon="$build/app/fulcrumd"
if [ -n "$no_device" ]; then
    say "torch NCCL job: skipped, $no_device"
elif [ -z "$python" ] || ! "$python" -c 'import torch, websockets; assert torch.cuda.is_available()' 2> /dev/null; then
    say "torch NCCL job: skipped, ${python:-python3} lacks torch with CUDA or websockets"
elif [ -z "$data" ]; then
    say "torch NCCL job: skipped, no Fashion-MNIST (copy /usr/share/datasets/fashion-mnist to $build/data/)"
elif [ ! -x "$daemon" ] || ! runnable "$daemon" > /dev/null; then
    say "torch NCCL job: skipped, fulcrumd cannot run here"
else
    folder=$(mktemp -d)
    "$daemon" --data-dir "$folder" --listen 127.0.0.1:0 --no-demo > "$folder/fulcrumd.log" 2>&1 &
    daemon_pid=$!
    for _ in $(seq 100); do grep -q "serving ws://127.0.0.1:" "$folder/fulcrumd.log" && break; sleep 0.1; done
    server=$(grep -o "serving ws://127.0.0.1:[0-9]*" "$folder/fulcrumd.log" | head -1 | sed 's/serving //')
    ranks=$("$python" -c 'import torch; print(max(1, torch.cuda.device_count()))')
    # NCCL needs one GPU per rank: as many ranks as GPUs.
    if [ -n "$server" ] && "$python" clients/python/examples/torch_ddp_fashion_mnist.py --server "$server" \
        --token-file "$folder/tokens" --device cuda --ranks "$ranks" --data "$data" --policy '{"type": "lbbsp-gpu"}' \
        > "$folder/torch.txt" 2>&1; then
        say "torch NCCL job: $(tail -1 "$folder/torch.txt") ($ranks rank(s), NCCL)"
    else
        cat "$folder/torch.txt" "$folder/fulcrumd.log"
        say "torch NCCL job: FAILED (above)"
        failed=1
    fi
    kill "$daemon_pid" 2> /dev/null
    wait "$daemon_pid" 2> /dev/null
fi

echo "== benchmarks"
bench="$build/bench/gpu_step"
if [ -x "$bench" ] && lacks=$(runnable "$bench"); then
    ours=$("$bench" --seconds 3 --json)
    echo "$ours"
    if [ -n "$python" ]; then
        say "$("$python" - "$ours" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
if "skipped" in r:
    print("gpu_step: " + r["skipped"]); sys.exit()
lines = [f"gpu_step on {r['device']} ({r['math']}):"]
for name, m in r["models"].items():
    lines.append(f"  {name} batch {m['batch']}: step {m['step_samples_per_s']:.0f} samples/s "
                 f"({m['eager_step_samples_per_s']:.0f} without CUDA graphs), "
                 f"products alone {m['gemm_samples_per_s']:.0f}; step / products "
                 f"{m['step_samples_per_s'] / m['gemm_samples_per_s']:.2f} (target >= 0.70 for the 4096 MLP)")
print("\n".join(lines))
PY
)"
    fi
elif [ -x "$bench" ]; then
    say "gpu_step: skipped, this machine lacks $lacks"
else
    say "gpu_step: not built (FULCRUM_BUILD_BENCH=OFF?)"
fi
if [ -n "$python" ]; then
    theirs=$("$python" bench/torch_gpu_step.py --layers 784,256,128,10 --batch 128 --json 2>&1 | tail -1)
    echo "$theirs"
    say "torch_gpu_step (mlp-784-256-128-10, batch 128): $theirs"
else
    say "torch_gpu_step: skipped, no python3"
fi

echo
echo "== GPU check summary"
printf '%s\n' "${summary[@]}"
echo "Not in this check: the console's screenshot of the SM-partition equilibrium (it needs a display)."
echo "Record the figures in docs/benchmarks.md with the device named."
exit $failed
