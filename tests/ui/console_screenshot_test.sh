#!/bin/bash
# The console's headless screenshot of a recorded run, as docs/console.md makes its images:
# a replay stopped at an iteration, a view, a worker chosen (--worker) and the PNG written;
# a worker the job lacks is refused with the job's workers named, and exits 1.
# Usage: console_screenshot_test.sh FULCRUM_RUN FULCRUM
set -euo pipefail
run=$1 console=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/small.json" <<'JSON'
{"name": "small", "seed": 3, "mode": "virtual",
 "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
 "model": {"type": "softmax"}, "policy": {"type": "lbbsp-cpu", "predictor": {"type": "ema"}},
 "training": {"total_batch": 48, "iterations": 30, "eval_interval": 10},
 "heterogeneity": "hetero-l2", "workers": [{"speed": 100, "count": 3}, {"speed": 40}]}
JSON
"$run" "$dir/small.json" --out "$dir/small.db" > "$dir/run.log" 2>&1
export QT_QPA_PLATFORM=offscreen
"$console" --replay "$dir/small.db" --at 20 --view prediction --worker 3 --size 800x600 \
    --screenshot "$dir/shot.png" 2> "$dir/shot.log" || { cat "$dir/shot.log"; exit 1; }
[ "$(head -c 8 "$dir/shot.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] || { echo "not a PNG"; exit 1; }
"$console" --replay "$dir/small.db" --at 20 --view prediction --worker 0 --size 800x600 \
    --screenshot "$dir/shot-0.png" 2> "$dir/shot-0.log" || { cat "$dir/shot-0.log"; exit 1; }
if cmp -s "$dir/shot.png" "$dir/shot-0.png"; then
    echo "--worker 3 and --worker 0 drew the same picture"; exit 1
fi
if "$console" --replay "$dir/small.db" --at 20 --worker 4 --screenshot "$dir/none.png" 2> "$dir/none.log"; then
    echo "--worker 4 of a 4-worker job was taken"; exit 1
fi
grep -q -- "--worker: the job shown has no worker 4 (its workers: w0–w3)" "$dir/none.log" || { cat "$dir/none.log"; exit 1; }
[ ! -e "$dir/none.png" ] || { echo "a refused --worker still wrote its PNG"; exit 1; }
echo "screenshot with --worker 3 written; --worker 4 refused"
