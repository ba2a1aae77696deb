#!/usr/bin/env bash
# fulcrumd under a memory limit with many Fashion-MNIST jobs at once: bench/admission.sh
# FULCRUMD FULCRUMCTL [JOBS] [LIMIT]
#
# Starts FULCRUMD under `prlimit --as=LIMIT` (6G by default, as `ulimit -v` sets it), submits
# JOBS (200) paced Fashion-MNIST MLP jobs of four workers with fulcrumctl, samples the
# daemon's resident memory every half second for 60 s, then prints whether it lived, its
# peak resident memory (VmHWM), and what became of the jobs: running, waiting (and why),
# refused, failed, and (a fulcrumd that has them) its admission metrics. Run it with two builds' fulcrumd to compare them (docs/benchmarks.md).
set -uo pipefail
fulcrumd="${1:?usage: bench/admission.sh FULCRUMD FULCRUMCTL [JOBS] [LIMIT]}"
fulcrumctl="${2:?usage: bench/admission.sh FULCRUMD FULCRUMCTL [JOBS] [LIMIT]}"
jobs="${3:-200}"
limit="${4:-6G}"
work="$(mktemp -d)"
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT

# Many workers share a GPU slot (placement.memory_gb), so the cluster places every job: the
# daemon's memory, not its GPUs, is what runs out.
cat > "$work/job.json" <<'EOF'
{"name": "fmnist", "mode": "paced", "pace": 0.2,
 "model": {"type": "mlp", "hidden": [256, 128]},
 "training": {"total_batch": 128, "learning_rate": 0.05, "iterations": 100000},
 "placement": {"memory_gb": 0.05},
 "workers": [{"speed": 4000, "count": 4}]}
EOF

prlimit --as="$(numfmt --from=iec "$limit")" -- \
  "$fulcrumd" --data-dir "$work/data" --listen 127.0.0.1:0 --no-demo 2> "$work/fulcrumd.log" &
pid=$!
for _ in $(seq 100); do
  port="$(grep -so 'serving ws://127.0.0.1:[0-9]*' "$work/fulcrumd.log" | grep -o '[0-9]*$')" && break
  sleep 0.1
done
[ -n "${port:-}" ] || { echo "admission: fulcrumd did not start"; cat "$work/fulcrumd.log"; exit 1; }
ctl() { "$fulcrumctl" --server "ws://127.0.0.1:$port" --token-file "$work/data/tokens" "$@"; }

refused=0
for _ in $(seq "$jobs"); do
  ctl submit "$work/job.json" > /dev/null 2>> "$work/refusals" || refused=$((refused + 1))
done
peak_sampled=0
for _ in $(seq 120); do
  kill -0 "$pid" 2>/dev/null || break
  rss="$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)"
  [ "${rss:-0}" -gt "$peak_sampled" ] && peak_sampled="$rss"
  sleep 0.5
done
if kill -0 "$pid" 2>/dev/null; then
  hwm="$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")"
  echo "fulcrumd lived: peak resident $((hwm / 1024)) MiB (VmHWM) under --as=$limit with $jobs jobs submitted"
  ctl jobs > "$work/jobs.txt" 2>&1
  for state in running queued failed; do
    echo "  $state: $(awk -v s="$state" '$3 == s' "$work/jobs.txt" | wc -l)"
  done
  echo "  refused at submission: $refused"
  token="$(awk '/^operator/ {print $2; exit}' "$work/data/tokens")"
  curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$port/metrics" \
    | grep -E '^fulcrum_(data_sets_held|admission_memory_bytes)' | sed 's/^/  /'
  grep -o 'waiting for [a-z]*' "$work/jobs.txt" | sort | uniq -c | sed 's/^/  /'
  awk '$3 == "failed"' "$work/jobs.txt" | head -3 | sed 's/^/  failed: /'
  awk '$3 == "queued"' "$work/jobs.txt" | head -1 | sed 's/^/  waiting: /'
else
  wait "$pid"
  echo "fulcrumd died (exit $?) under --as=$limit; peak resident sampled $((peak_sampled / 1024)) MiB"
  tail -3 "$work/fulcrumd.log" | sed 's/^/  log: /'
fi
head -2 "$work/refusals" 2>/dev/null | sed 's/^/  refusal: /'
