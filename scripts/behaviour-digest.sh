#!/usr/bin/env bash
# Digests of what training computes, to show a refactoring kept behaviour bit for bit:
# the iteration and evaluation rows (every column but wall time) of every shipped scenario
# run in virtual mode, and of `fulcrum-experiment equilibrium`, `predictors` and
# `straggler-extents` with --quick (every sync model: bsp, backup, asp, ssp, elastic-bsp).
#
#   scripts/behaviour-digest.sh BUILD_DIR                 print "NAME SHA256" per run
#   scripts/behaviour-digest.sh BUILD_DIR --check FILE    compare with FILE; exit 1 on a difference
#   scripts/behaviour-digest.sh BUILD_DIR --write FILE    record FILE
#
# Floating-point results follow the compiler's target (vector width, FMA): a digest file
# holds for one build's flags, on any CPU (Eigen's product blocking is pinned rather than
# read off the CPU's caches: common/product_blocking.h). tests/behaviour/digests-x86-64-v2.txt is the CI preset's
# (`ci`), checked by the ctest `behaviour_digest` in that build.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:?usage: scripts/behaviour-digest.sh BUILD_DIR [--check FILE | --write FILE]}"
action="${2:-}"
file="${3:-}"
build="$(cd "$build" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Full precision for every REAL (.mode quote writes a value that reads back to the same
# double); wall_s is the one column that depends on the machine's load.
rows_digest() {
    sqlite3 -bail -cmd ".mode quote" "$1" \
        "SELECT job_id, iteration, worker_id, start_s, end_s, batch_size, compute_s, comm_s, wait_s, cpu_share,
                memory_share, speed, predicted_speed, loss, decision
           FROM iterations ORDER BY run_id, job_id, iteration, worker_id;
         SELECT job_id, iteration, time_s, epoch, train_loss, test_loss, test_accuracy
           FROM evaluations ORDER BY run_id, job_id, iteration;" | sha256sum | cut -d' ' -f1
}

out="$work/digests.txt"
for scenario in "$root"/resources/scenarios/*.json; do
    name="$(basename "$scenario" .json)"
    # A job on GPU workers needs a GPU and its float sums follow the device: scripts/gpu-check.sh runs it.
    grep -q '"device": *"cuda:' "$scenario" && continue
    "$build/app/fulcrum-run" --mode virtual --out "$work/$name.db" "$scenario" > "$work/$name.log" 2>&1 \
        || { cat "$work/$name.log"; echo "behaviour-digest: $name failed" >&2; exit 1; }
    echo "scenario/$name $(rows_digest "$work/$name.db")" >> "$out"
done
for experiment in equilibrium predictors straggler-extents; do
    "$build/app/fulcrum-experiment" "$experiment" --quick --out "$work/$experiment" > "$work/$experiment.log" 2>&1 \
        || { cat "$work/$experiment.log"; echo "behaviour-digest: experiment $experiment failed" >&2; exit 1; }
    for db in $(cd "$work/$experiment" && ls ./*.db | sort); do
        echo "experiment/$experiment/$(basename "$db" .db) $(rows_digest "$work/$experiment/$db")" >> "$out"
    done
done

case "$action" in
    "") cat "$out" ;;
    --write) cp "$out" "$file"; echo "behaviour-digest: wrote $(wc -l < "$file") digests to $file" ;;
    --check)
        if diff -u "$file" "$out"; then
            echo "behaviour-digest: all $(wc -l < "$file") digests as recorded in $file"
        else
            echo "behaviour-digest: the rows differ from $file (lines marked - and +)" >&2
            exit 1
        fi ;;
    *) echo "behaviour-digest: unknown action $action" >&2; exit 2 ;;
esac
