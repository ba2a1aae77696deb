#!/usr/bin/env bash
# The GPU check (issues 20 and 46): runs the GPU tests, the GPU jobs and the GPU benchmarks
# of a kit or build made elsewhere, every step under a time limit, and ends with a summary
# table. Exits 1 if any step failed or ran out of time.
#   scripts/gpu-check.sh [--dry-run] [KIT_OR_BUILD]     (default gpu-kit, else build/gpu-portable)
# The GPU machines have nvcc, PyTorch and the NVIDIA driver but no Debian packages: make the
# kit on a Debian machine with scripts/gpu-kit.sh and run this there (docs/gpu.md gives the
# exact command). Every artefact (logs, run stores, JSON figures) is written under $OUT
# when it is set (summary.md, gpu-check.log, artefacts.tar.gz), else under a new folder
# that the summary names. --dry-run runs the same steps on the CPU, smaller, so that CI
# checks this script's plumbing before a GPU machine's first minute is spent on it.
set -uo pipefail
cd "$(dirname "$0")/.."

dry_run=0
target=""
for arg in "$@"; do
    case "$arg" in
        --dry-run) dry_run=1 ;;
        -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "gpu-check: unknown option $arg (expected --dry-run or a kit folder)" >&2; exit 2 ;;
        *) target="$arg" ;;
    esac
done
if [ -z "$target" ]; then
    for candidate in gpu-kit build/gpu-portable build/release; do
        [ -d "$candidate" ] && { target="$candidate"; break; }
    done
fi
[ -n "$target" ] && [ -d "$target" ] || {
    echo "gpu-check: no kit or build folder ${target:-(none found)}: make one with scripts/gpu-kit.sh" >&2
    exit 2
}
build="$target" # the data and Python packages
programs="$target" # app/, bench/, tests/: a build folder's, or a kit's unpacked
work=""
daemons=()
# stop_daemon PID: a fulcrumd the check started, given 15 s to stop, then killed.
stop_daemon() {
    kill "$1" 2> /dev/null || return 0
    timeout 15 tail --pid="$1" -f /dev/null 2> /dev/null || kill -9 "$1" 2> /dev/null
    wait "$1" 2> /dev/null
}
# Whatever way the check ends (a step's failure, Ctrl-C, ctest's time limit), no fulcrumd
# stays running and no temporary folder stays behind.
cleanup() {
    for pid in "${daemons[@]}"; do stop_daemon "$pid"; done
    [ -n "$work" ] && rm -rf "$work"
    [ "$programs" = "$target" ] || rm -rf "$programs"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -f "$target/programs.tar.xz" ]; then # a kit (scripts/gpu-kit.sh): its programs come packed
    programs=$(mktemp -d /tmp/gpu-kit-programs.XXXXXX)
    tar -xJf "$target/programs.tar.xz" -C "$programs" 2> /dev/null \
        || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
            "$target/programs.tar.xz" "$programs" \
        || { echo "gpu-check: cannot unpack $target/programs.tar.xz" >&2; exit 2; }
fi

results="${OUT:-}"
[ -n "$results" ] || results=$(mktemp -d /tmp/gpu-check.XXXXXX)
mkdir -p "$results"
work=$(mktemp -d /tmp/gpu-check-work.XXXXXX)
exec 3>&1 4>&2 > >(tee "$results/gpu-check.log") 2>&1
tee_pid=$!

# The python3 that has PyTorch, if any has it; the kit's own packages (websockets) first.
python=""
for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" > /dev/null && "$candidate" -c 'import torch' 2> /dev/null; then
        python=$(command -v "$candidate")
        break
    fi
done
[ -n "$python" ] || python=$(command -v python3 || true)
[ -d "$build/python" ] && export PYTHONPATH="$(cd "$build/python" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
# cuBLAS from PyTorch's wheels where the toolkit's is not on ld.so's path.
if [ "$dry_run" = 0 ] && [ -z "${FULCRUM_CUBLAS:-}" ] && [ -n "$python" ]; then
    wheel_cublas=$("$python" - 2> /dev/null <<'PY'
import glob, site
for root in site.getsitepackages():
    for found in sorted(glob.glob(root + "/nvidia/**/libcublas.so.*", recursive=True)):
        if ".so.13" in found:
            print(found)
            raise SystemExit
PY
)
    [ -n "$wheel_cublas" ] && export FULCRUM_CUBLAS="$wheel_cublas" \
        && export LD_LIBRARY_PATH="$(dirname "$wheel_cublas")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

device=cuda
[ "$dry_run" = 1 ] && device=cpu
rows=()
failed=0
started_all=$SECONDS

# step NAME LIMIT COMMAND...: runs COMMAND under `timeout`, its output in $work/NAME.log and
# on the terminal; returns its status (124 where it ran out of time).
step() {
    local name=$1 limit=$2
    shift 2
    echo "== $name (limit ${limit} s)"
    step_started=$SECONDS
    timeout --kill-after=5 "$limit" "$@" > "$work/$name.log" 2>&1
    local status=$?
    cat "$work/$name.log"
    return $status
}
# row NAME STATUS DETAIL: one line of the summary; FAILED and "timed out" fail the check.
row() {
    rows+=("| $1 | $2 | $((SECONDS - step_started)) s | $3 |")
    case "$2" in FAILED | "timed out") failed=1 ;; esac
}
outcome() { # the summary's word for a step's exit status
    case "$1" in 0) echo passed ;; 124 | 137) echo "timed out" ;; *) echo FAILED ;; esac
}
runnable() { # prints what a program lacks, if anything
    local missing
    missing=$(ldd "$1" 2> /dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
    [ -z "$missing" ] || { echo "$missing"; return 1; }
}
# job_summary LOG: a fulcrum-run --json summary in a few words.
job_summary() {
    "$python" - "$1" 2> /dev/null << 'PY'
import json, sys
r = json.loads([line for line in open(sys.argv[1]) if line.startswith("{")][-1])
print(f": {r['iterations']} iterations, {r['mean_iteration_seconds'] * 1e3:.2f} ms each, "
      f"test accuracy {r['final_test_accuracy']:.4f}")
PY
}
# scenario_for SHIPPED OUT [uniform]: a shipped scenario as the check runs it: with equal
# batches where asked, and in the dry run smaller and on the CPU.
scenario_for() {
    "$python" - "$1" "$2" "${3:-}" "$dry_run" << 'PY'
import json, re, sys
shipped, out, policy, dry_run = sys.argv[1:5]
s = json.loads(re.sub(r"^\s*//.*$", "", open(shipped).read(), flags=re.M))
if policy:
    s["policy"] = {"type": policy}
if dry_run == "1":
    for w in s["workers"]:
        w["device"] = "cpu"
        w.pop("sms", None)
        w.pop("sms_strict", None)
    s["data"].update(train_size=2000, test_size=500)
    s["training"].update(iterations=20, eval_interval=10, total_batch=256)
json.dump(s, open(out, "w"), indent=1)
PY
}

step_started=$SECONDS
echo "== devices"
if [ "$dry_run" = 1 ]; then
    echo "dry run: every step on the CPU"
elif command -v nvidia-smi > /dev/null; then
    timeout 20 nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader
else
    echo "nvidia-smi is not installed"
fi
echo "cuBLAS: ${FULCRUM_CUBLAS:-by soname}"

# 1. The tests with GPU cases (they skip those without a device).
no_device=""
for t in dense_pass_test:20 cuda_step_test:40; do
    name=${t%%:*}
    exe="$programs/tests/$name"
    step_started=$SECONDS
    if [ ! -x "$exe" ]; then
        row "$name" FAILED "not in $programs (FULCRUM_BUILD_TESTS=OFF?)"
        continue
    fi
    if ! lacks=$(runnable "$exe"); then
        row "$name" skipped "this machine lacks $lacks"
        continue
    fi
    step "$name" "${t##*:}" "$exe"
    status=$?
    passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\./\1/p' "$work/$name.log")
    skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?, listed below:/\1/p' "$work/$name.log")
    if grep -q 'no CUDA device' "$work/$name.log"; then
        no_device=$(grep -m1 -o 'no CUDA device: .*' "$work/$name.log")
    fi
    row "$name" "$(outcome $status)" "${passed:-0} passed, ${skipped:-0} skipped${no_device:+ ($no_device)}"
done
if [ "$dry_run" = 1 ]; then
    no_device="" # the CPU runs every later step
elif [ -n "$no_device" ]; then # the check is for a GPU: one it cannot see fails it
    step_started=$SECONDS
    row "CUDA device" FAILED "$no_device (the later GPU steps are skipped)"
fi

run="$programs/app/fulcrum-run"
can_run_jobs() { # prints why the jobs cannot run here, if they cannot
    if [ -n "$no_device" ]; then
        echo "$no_device"
    elif ! lacks=$(runnable "$run"); then
        echo "this machine lacks $lacks"
    fi
}

# 2. A real-mode job of four GPU workers, LB-BSP Algorithm 2 from CUDA-event times.
step_started=$SECONDS
if [ ! -x "$run" ]; then
    row gpu-real FAILED "fulcrum-run is not in $programs"
elif why=$(can_run_jobs) && [ -z "$why" ]; then
    scenario_for resources/scenarios/gpu-real.json "$work/gpu-real.json"
    step gpu-real 30 "$run" "$work/gpu-real.json" --out "$work/gpu-real.db" --json
    status=$?
    row gpu-real "$(outcome $status)" "run store gpu-real.db$([ $status = 0 ] && job_summary "$work/gpu-real.log")"
else
    row gpu-real skipped "$why"
fi

# 3. One GPU as a heterogeneous cluster: SM shares, LB-BSP against equal batches.
if [ ! -x "$run" ]; then
    step_started=$SECONDS
    row sm-partitions FAILED "fulcrum-run is not in $programs"
elif why=$(can_run_jobs) && [ -z "$why" ]; then
    scenario_for resources/scenarios/gpu-sm-partitions.json "$work/sm-lbbsp.json"
    scenario_for resources/scenarios/gpu-sm-partitions.json "$work/sm-equal.json" uniform
    for policy in lbbsp equal; do
        step_started=$SECONDS
        step "sm-$policy" 35 "$run" "$work/sm-$policy.json" --out "$work/sm-$policy.db" --json
        status=$?
        row "sm-partitions, $policy" "$(outcome $status)" "run store sm-$policy.db$([ $status = 0 ] && job_summary "$work/sm-$policy.log")"
    done
    step_started=$SECONDS
    if [ -f "$work/sm-lbbsp.db" ] && [ -f "$work/sm-equal.db" ]; then
        comparison=$("$python" - "$work" << 'PY' 2>&1
import json, sqlite3, sys
work = sys.argv[1]
def summary(policy):
    return json.loads([l for l in open(f"{work}/sm-{policy}.log") if l.startswith("{")][-1])
lb, eq = summary("lbbsp"), summary("equal")
for (message,) in sqlite3.connect(f"{work}/sm-lbbsp.db").execute("SELECT message FROM events WHERE kind = 'gpu-device'"):
    print(message, file=sys.stderr)  # which SMs each worker got, or why it shares the whole GPU
ratio = eq["mean_iteration_seconds"] / lb["mean_iteration_seconds"]
def settled_ms(policy, first):
    # The mean iteration from `first` on, once Algorithm 2 has reached its equilibrium:
    # from the end of iteration first - 1 to the end of the last, as the run store has them.
    ends = dict(sqlite3.connect(f"{work}/sm-{policy}.db").execute(
        "SELECT iteration, MAX(end_s) FROM iterations GROUP BY iteration"))
    last = max(ends)
    before = max(i for i in ends if i < first)  # iteration first - 1 where the store has it
    return (ends[last] - ends[before]) / (last - before) * 1e3
first = max(1, lb["iterations"] // 3)
lb_settled, eq_settled = settled_ms("lbbsp", first), settled_ms("equal", first)
json.dump({"lbbsp": lb, "equal": eq, "throughput_ratio": ratio, "settled_from_iteration": first,
           "settled_ms": {"lbbsp": lb_settled, "equal": eq_settled}},
          open(f"{work}/sm-partitions.json", "w"), indent=1)
print(f"LB-BSP {lb['mean_iteration_seconds']*1e3:.2f} ms/iteration, equal batches "
      f"{eq['mean_iteration_seconds']*1e3:.2f} ms: {ratio:.2f}x the throughput (target 1.6x); "
      f"from iteration {first}: {lb_settled:.2f} and {eq_settled:.2f} ms, {eq_settled / lb_settled:.2f}x; "
      f"test accuracy {lb['final_test_accuracy']:.4f} vs {eq['final_test_accuracy']:.4f}")
PY
)
        status=$?
        echo "$comparison"
        row "sm-partitions, ratio" "$(outcome $status)" "$(echo "$comparison" | tail -1)"
    fi
else
    step_started=$SECONDS
    row sm-partitions skipped "$why"
fi

# 4. A PyTorch job under the kit's fulcrumd: NCCL on the GPU (gloo in the dry run).
step_started=$SECONDS
resnet_row=0
data=""
for candidate in "$build/data/fashion-mnist" /usr/share/datasets/fashion-mnist; do
    [ -f "$candidate/train-images-idx3-ubyte.gz" ] && { data="$candidate"; break; }
done
daemon="$programs/app/fulcrumd"
torch_check='import torch, websockets'
[ "$device" = cuda ] && torch_check="$torch_check; assert torch.cuda.is_available()"
if [ -n "$no_device" ]; then
    row "torch job" skipped "$no_device"
elif [ -z "$python" ] || ! "$python" -c "$torch_check" 2> /dev/null; then
    row "torch job" skipped "${python:-python3} lacks torch (with CUDA for a GPU) or websockets"
elif [ -z "$data" ]; then
    row "torch job" skipped "no Fashion-MNIST (scripts/gpu-kit.sh carries it in the kit's data/)"
elif [ ! -x "$daemon" ]; then
    row "torch job" FAILED "fulcrumd is not in $programs"
elif ! lacks=$(runnable "$daemon"); then
    row "torch job" skipped "this machine lacks $lacks"
else
    mkdir -p "$work/fulcrumd"
    "$daemon" --data-dir "$work/fulcrumd" --listen 127.0.0.1:0 --no-demo > "$work/fulcrumd.log" 2>&1 &
    daemon_pid=$!
    daemons+=("$daemon_pid")
    for _ in $(seq 100); do grep -q "serving ws://127.0.0.1:" "$work/fulcrumd.log" && break; sleep 0.1; done
    server=$(grep -o "serving ws://127.0.0.1:[0-9]*" "$work/fulcrumd.log" | head -1 | sed 's/serving //')
    ranks=1
    [ "$device" = cuda ] && ranks=$("$python" -c 'import torch; print(max(1, torch.cuda.device_count()))')
    iterations=118
    [ "$dry_run" = 1 ] && iterations=10
    # NCCL needs one GPU per rank: as many ranks as GPUs.
    step "torch-$device" 60 "$python" clients/python/examples/torch_ddp_fashion_mnist.py --server "${server:-none}" \
        --token-file "$work/fulcrumd/tokens" --device "$device" --ranks "$ranks" --data "$data" \
        --iterations "$iterations" --policy "{\"type\": \"lbbsp-$([ "$device" = cuda ] && echo gpu || echo cpu)\"}"
    status=$?
    row "torch job ($ranks rank(s), $([ "$device" = cuda ] && echo NCCL || echo gloo))" "$(outcome $status)" \
        "$(tail -1 "$work/torch-$device.log")"
    # The real loop (issue 43 item 2): ResNet-18 with a prefetching DataLoader, BatchNorm and,
    # on CUDA, float16 autocast, through the same fulcrumd.
    step_started=$SECONDS
    resnet_row=1
    if ! "$python" -c 'import torchvision' 2> /dev/null; then
        row "resnet-18 job" skipped "${python:-python3} lacks torchvision"
    else
        resnet_iterations=20
        [ "$dry_run" = 1 ] && resnet_iterations=3
        step "resnet18-$device" 120 "$python" clients/python/examples/resnet18_fashion_mnist.py \
            --server "${server:-none}" --token-file "$work/fulcrumd/tokens" --device "$device" --ranks "$ranks" \
            --data "$data" --cache "$work/cache" --iterations "$resnet_iterations" --test-samples 1000 --progress 5 \
            --policy "lbbsp-$([ "$device" = cuda ] && echo gpu || echo cpu)"
        status=$?
        row "resnet-18 job ($ranks rank(s), $([ "$device" = cuda ] && echo NCCL, AMP || echo gloo))" \
            "$(outcome $status)" "$(tail -1 "$work/resnet18-$device.log")"
    fi
    stop_daemon "$daemon_pid"
    cp "$work"/fulcrumd/*.db "$work/" 2> /dev/null
fi
[ "$resnet_row" = 1 ] || row "resnet-18 job" skipped "no torch job (above)"

# 5. Remote workers on the GPU: two fulcrum-worker --device cuda:0 processes join a real-mode
# job of the kit's fulcrumd beside a local GPU worker (remote-workers.md).
step_started=$SECONDS
worker="$programs/app/fulcrum-worker"
if [ -n "$no_device" ]; then
    row "remote GPU workers" skipped "$no_device"
elif [ ! -x "$worker" ] || [ ! -x "$daemon" ]; then
    row "remote GPU workers" FAILED "fulcrum-worker or fulcrumd is not in $programs"
else
    worker_device=cuda:0 remote_iterations=200
    [ "$device" = cpu ] && worker_device=cpu remote_iterations=30
    cat > "$work/gpu-remote.json" << JOB
{"name": "gpu-remote", "seed": 2, "mode": "real",
 "data": {"source": "synthetic", "train_size": 20000, "test_size": 2000, "dim": 784, "classes": 10},
 "model": {"type": "mlp", "hidden": [256, 128]},
 "training": {"total_batch": 1024, "learning_rate": 0.05, "momentum": 0.9, "iterations": $remote_iterations,
              "eval_interval": 100},
 "policy": {"type": "lbbsp-gpu"},
 "workers": [{"name": "local", "speed": 4000, "device": "$worker_device"},
             {"name": "remote", "count": 2, "speed": 4000, "remote": true}]}
JOB
    mkdir -p "$work/remote-daemon"
    "$daemon" --data-dir "$work/remote-daemon" --listen 127.0.0.1:0 --no-demo --scenario "$work/gpu-remote.json" \
        > "$work/remote-fulcrumd.log" 2>&1 &
    remote_daemon=$!
    daemons+=("$remote_daemon")
    for _ in $(seq 100); do grep -q "serving ws://127.0.0.1:" "$work/remote-fulcrumd.log" && break; sleep 0.1; done
    address=$(grep -o "serving ws://127.0.0.1:[0-9]*" "$work/remote-fulcrumd.log" | head -1 | sed 's|serving ws://||')
    step remote-workers 40 bash -c '
        pids=()
        for w in 1 2; do
            "$1" --server "$2" --job 1 --token-file "$3" --device "$4" --name "remote-$w" > "$5/remote-worker-$w.log" 2>&1 &
            pids+=($!)
        done
        # Each by its pid: `wait -n` answers 127 when both ended before it was called.
        wait_all=0
        for pid in "${pids[@]}"; do wait "$pid" || wait_all=1; done
        cat "$5"/remote-worker-*.log
        exit $wait_all' _ "$worker" "${address:-none}" "$work/remote-daemon/tokens" "$worker_device" "$work"
    status=$?
    stop_daemon "$remote_daemon"
    cp "$work/remote-daemon/runs/job-1.db" "$work/gpu-remote.db" 2> /dev/null
    detail=$("$python" - "$work/gpu-remote.db" "$worker_device" "$remote_iterations" << 'PY' 2>&1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
status, = db.execute("SELECT status FROM runs ORDER BY id DESC LIMIT 1").fetchone()
rows = db.execute("SELECT worker_id, count(*), avg(batch_size), avg(compute_s), avg(gpu_memory_gb) "
                  "FROM iterations GROUP BY worker_id ORDER BY worker_id").fetchall()
print(f"job {status}; " + ", ".join(
    f"worker {w}: {n} rows, batch {b:.0f}, {c * 1e3:.2f} ms" + (f", {g:.3f} GB on the GPU" if g else "")
    for w, n, b, c, g in rows))
gpu = sys.argv[2] != "cpu"
ok = status == "finished" and len(rows) == 3 and all(n == int(sys.argv[3]) for _, n, *_ in rows) \
    and (not gpu or all(g for *_, g in rows))
sys.exit(0 if ok else 1)
PY
)
    [ $? = 0 ] || status=1
    row "remote GPU workers" "$(outcome $status)" "$detail"
fi

# 6. The device's performance model, measured (fulcrum-experiment gpu-profile).
step_started=$SECONDS
experiment="$programs/app/fulcrum-experiment"
if [ ! -x "$experiment" ]; then
    row gpu-profile FAILED "fulcrum-experiment is not in $programs"
elif [ -n "$no_device" ]; then
    row gpu-profile skipped "$no_device"
else
    step gpu-profile 30 "$experiment" gpu-profile --device "$([ "$device" = cuda ] && echo cuda:0 || echo cpu)" \
        --out "$work/gpu-profile"
    status=$?
    row gpu-profile "$(outcome $status)" "$(grep -m1 -o 'Γ(0) = .*' "$work/gpu-profile/results.md" 2> /dev/null \
        || echo 'no results.md')"
fi

# 7. The benchmarks: our step against cuBLAS products alone, and PyTorch's step.
step_started=$SECONDS
bench="$programs/bench/gpu_step"
bench_args=(--seconds 2 --json)
[ "$dry_run" = 1 ] && bench_args=(--seconds 0.2 --json --device cpu --model mlp-784-256-128-10)
if [ ! -x "$bench" ]; then
    row gpu_step FAILED "not in $programs (FULCRUM_BUILD_BENCH=OFF?)"
elif ! lacks=$(runnable "$bench"); then
    row gpu_step skipped "this machine lacks $lacks"
else
    step gpu_step 30 "$bench" "${bench_args[@]}"
    status=$?
    grep '^{' "$work/gpu_step.log" | tail -1 > "$work/gpu_step.json"
    figures=$("$python" - "$work/gpu_step.json" << 'PY' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
if "skipped" in r or "error" in r:
    print(r.get("skipped") or r["error"])
    raise SystemExit
print("; ".join(f"{name} batch {m['batch']}: {m['step_samples_per_s']:.0f} samples/s "
                f"({'pinned' if m.get('pinned') else 'not pinned'}; {m.get('staged_step_samples_per_s', 0):.0f} through staging, "
                f"{m['eager_step_samples_per_s']:.0f} without graphs), products alone "
                f"{m['gemm_samples_per_s']:.0f}: {m['step_samples_per_s'] / m['gemm_samples_per_s']:.2f}"
                for name, m in r["models"].items()) + f" on {r['device']} (target >= 0.70 for the 4096 MLP)")
PY
)
    verdict=$(outcome $status)
    grep -q '"skipped"' "$work/gpu_step.json" && [ "$status" = 0 ] && verdict=skipped
    row gpu_step "$verdict" "$figures"
fi
step_started=$SECONDS
if [ -n "$python" ]; then
    step torch_gpu_step 25 "$python" bench/torch_gpu_step.py --layers 784,256,128,10 --batch 128 --seconds 2 --json \
        --device "$device"
    status=$?
    grep '^{' "$work/torch_gpu_step.log" | tail -1 > "$work/torch_gpu_step.json"
    verdict=$(outcome $status)
    tail -1 "$work/torch_gpu_step.log" | grep -q '^skipped' && [ "$status" = 0 ] && verdict=skipped
    row torch_gpu_step "$verdict" "$(tail -1 "$work/torch_gpu_step.log")"
else
    row torch_gpu_step skipped "no python3"
fi

# The summary, and every artefact where the caller finds it.
{
    echo "# GPU check: $( [ "$dry_run" = 1 ] && echo "dry run on the CPU" || echo "$device" ), $((SECONDS - started_all)) s"
    echo
    echo "| step | outcome | time | detail |"
    echo "| --- | --- | --- | --- |"
    printf '%s\n' "${rows[@]}"
} > "$results/summary.md"
# Without the PyTorch jobs' data cache (55 MB of Fashion-MNIST, unpacked): the device tool
# brings back files of at most 16 MiB.
tar -czf "$results/artefacts.tar.gz" --exclude=./cache -C "$work" . 2> /dev/null
echo
cat "$results/summary.md"
echo
echo "Artefacts: $results (summary.md, gpu-check.log, artefacts.tar.gz: logs, run stores, JSON figures)."
echo "The console's screenshot is taken where the console runs: fulcrum --replay sm-lbbsp.db --screenshot FILE."
exec 1>&3 2>&4 # the log's tee gets its end of file and writes the last lines before the check ends
wait "$tee_pid" 2> /dev/null
exit $failed
