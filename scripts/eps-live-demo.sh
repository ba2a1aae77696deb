#!/usr/bin/env bash
# The Elastic PS policy resizing live jobs in fulcrumd (--elastic eps) on a one-server,
# four-GPU cluster: an elastic job that asked for one worker grows a worker per round on the
# idle GPUs; 8 s in, a two-worker job arrives and the first one, past its early-feedback
# point, gives it two of its workers.
#
#   scripts/eps-live-demo.sh [BUILD_DIR]                    the console watches (with a display)
#   scripts/eps-live-demo.sh [BUILD_DIR] --screenshot FILE  the console's scheduler view at 16 s
#   scripts/eps-live-demo.sh [BUILD_DIR] --policy kill-restart   the same decisions, each carried
#                                                           out by a checkpoint, a stop and a restart
#   scripts/eps-live-demo.sh [BUILD_DIR] --keep-runs DIR    also copies the jobs' run stores to DIR,
#                                                           for `fulcrum --replay DIR/job-1.db`
#
# Without a display and without --screenshot it prints the scheduler's events from the
# jobs' run stores. Every figure comes from the run: nothing here is scripted but the times.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
shift || true
screenshot=""
policy=eps
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --screenshot) screenshot="${2:?--screenshot FILE}"; shift 2 ;;
    --policy) policy="${2:?--policy eps|kill-restart}"; shift 2 ;;
    --keep-runs) keep="${2:?--keep-runs DIR}"; shift 2 ;;
    *) echo "eps-live-demo: unknown option $1" >&2; exit 2 ;;
  esac
done
app="$build/app"
data="$(mktemp -d)"
port=7597
"$app/fulcrumd" --no-demo --data-dir "$data" --listen "127.0.0.1:$port" --elastic "$policy" --elastic-round-s 2 \
  --feedback iterations:150 --cluster resources/clusters/one-server-4-gpus.json \
  --scenario resources/scenarios/eps-live/holder.json > "$data/fulcrumd.log" 2>&1 &
daemon=$!
console=""
trap 'kill "$daemon" $console 2>/dev/null; wait "$daemon" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 100); do [ -s "$data/tokens" ] && break; sleep 0.1; done
if [ -n "$screenshot" ]; then
  QT_QPA_PLATFORM=offscreen "$app/fulcrum" --connect "ws://127.0.0.1:$port" --token-file "$data/tokens" \
    --view scheduler --size 1280x800 --screenshot "$screenshot" --after 16 &
  console=$!
elif [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$app/fulcrum" ]; then
  "$app/fulcrum" --connect "ws://127.0.0.1:$port" --token-file "$data/tokens" --view scheduler &
  console=$!
fi
sleep 8
"$app/fulcrumctl" --server "ws://127.0.0.1:$port" --token-file "$data/tokens" submit resources/scenarios/eps-live/newcomer.json
if [ -n "$console" ]; then
  wait "$console" || true
  console=""
else
  sleep 8
fi
kill "$daemon"
wait "$daemon" || true
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  cp "$data"/runs/job-*.db "$keep"/
  echo "eps-live-demo: run stores kept in $keep"
fi
for store in "$data"/runs/job-*.db; do
  echo "== $(basename "$store"): the elastic scheduler's events"
  sqlite3 "$store" "SELECT iteration, kind, worker_id, message FROM events
                    WHERE actor LIKE 'scheduler%' OR kind IN ('job-placed', 'early-feedback', 'job-restarted') ORDER BY rowid"
done
