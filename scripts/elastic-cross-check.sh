#!/usr/bin/env bash
# The simulator and the live daemon on one parameter-server workload (issue 21, item 6):
# fulcrum-sim --elastic P simulates the generated ps-mixed-N workload; the same jobs, exported
# by fulcrum-sim --export-live, then run through a live fulcrumd --elastic P in virtual mode
# (fulcrumctl submit-workload: each job arrives at its time on fulcrumd's virtual clock), and
# their completion times are read from job-status.daemon_clock. Prints each policy's average
# JCT both ways, their ratio, and whether eps < kill-restart < static holds in each.
#
#   scripts/elastic-cross-check.sh [BUILD_DIR] [--jobs N] [--seed S] [--policies "eps static"]
#
# Every figure comes from the runs. How the two models differ is in docs/scheduling.md
# ("Simulator and daemon, one workload").
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
shift || true
jobs=40
seed=1
policies="eps kill-restart static"
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="${2:?--jobs N}"; shift 2 ;;
    --seed) seed="${2:?--seed S}"; shift 2 ;;
    --policies) policies="${2:?--policies LIST}"; shift 2 ;;
    *) echo "elastic-cross-check: unknown option $1" >&2; exit 2 ;;
  esac
done
app="$build/app"
work="$(mktemp -d)"
daemon=""
trap 'if [ -n "$daemon" ]; then kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true; fi; rm -rf "$work"' EXIT

"$app/fulcrum-sim" --elastic eps --generate "ps-mixed-$jobs" --seed "$seed" --export-live "$work/live" >&2
printf '%-13s %14s %14s %8s\n' policy "sim JCT (s)" "live JCT (s)" "live/sim"
for policy in $policies; do
  sim=$("$app/fulcrum-sim" --elastic "$policy" --generate "ps-mixed-$jobs" --seed "$seed" --json 2>/dev/null \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["avg_jct"])')
  data="$work/daemon-$policy"
  mkdir -p "$data"
  "$app/fulcrumd" --no-demo --data-dir "$data" --listen 127.0.0.1:0 --cluster "$work/live/cluster.json" \
    --elastic "$policy" --elastic-round-s 60 --feedback fraction:0.1 --queue fifo > "$data/fulcrumd.log" 2>&1 &
  daemon=$!
  port=""
  for _ in $(seq 200); do
    port=$(sed -n 's|.*serving ws://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$data/fulcrumd.log" | head -1)
    [ -n "$port" ] && [ -s "$data/tokens" ] && break
    sleep 0.1
  done
  ctl=("$app/fulcrumctl" --server "ws://127.0.0.1:$port" --token-file "$data/tokens")
  "${ctl[@]}" submit-workload "$work/live/workload.csv" > /dev/null
  started=$(date +%s)
  while :; do
    "${ctl[@]}" --json jobs > "$data/jobs.json"
    left=$(python3 -c 'import json, sys
jobs = json.loads(open(sys.argv[1]).readline())["jobs"]
print(sum(j["state"] in ("queued", "running", "paused") for j in jobs))' "$data/jobs.json")
    [ "$left" = 0 ] && break
    printf '\r%s: %s of %s jobs left, %ss' "$policy" "$left" "$jobs" "$(( $(date +%s) - started ))" >&2
    sleep 2
  done
  printf '\r\033[K' >&2
  live=$(python3 -c 'import json, sys
jobs = json.loads(open(sys.argv[1]).readline())["jobs"]
bad = [j["name"] + ": " + j["state"] + " " + j["message"] for j in jobs if j["state"] != "finished"]
if bad:
    sys.exit("jobs that did not finish:\n" + "\n".join(bad))
clock = [j["daemon_clock"] for j in jobs]
print(sum(c["finish_s"] - c["arrival_s"] for c in clock) / len(clock))' "$data/jobs.json")
  kill "$daemon"
  wait "$daemon" || true
  daemon=""
  python3 -c 'import sys; s, l = float(sys.argv[2]), float(sys.argv[3]); print("%-13s %14.1f %14.1f %8.3f" % (sys.argv[1], s, l, l / s))' \
    "$policy" "$sim" "$live"
  echo "$policy $sim $live" >> "$work/results"
done
python3 - "$work/results" <<'EOF'
import sys
rows = {p: (float(s), float(l)) for p, s, l in (line.split() for line in open(sys.argv[1]))}
if all(p in rows for p in ("eps", "kill-restart", "static")):
    for i, side in enumerate(("simulator", "live")):
        order = rows["eps"][i] < rows["kill-restart"][i] < rows["static"][i]
        print(f"{side}: eps < kill-restart < static {'holds' if order else 'does not hold'}")
EOF
