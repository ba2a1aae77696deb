#!/usr/bin/env bash
# The Slurm launcher against the real thing: a one-node Slurm (Debian's slurm-wlm, with its
# own munged) on loopback runs packaging/slurm/fulcrum-workers.sbatch; its two tasks are
# fulcrum-worker processes that join a real-mode job of a real fulcrumd, which trains with
# them to the end. Needs root (slurmd) and the slurm-wlm and munge packages; otherwise it
# exits 77 (ctest's skip).
#   tests/slurm/slurm_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
source "$(dirname "$0")/../support/announced_port.sh"
build=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
for tool in munged munge slurmctld slurmd sbatch scontrol sinfo; do
    command -v "$tool" >/dev/null || { echo "slurm_test: $tool is not installed (scripts/install-deps.sh --test-tools: slurm-wlm, munge)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "slurm_test: slurmd needs root"; exit 77; }

work=$(mktemp -d)
chmod 0711 "$work"
cleanup() {
    [ -n "${slurm_job:-}" ] && scancel "$slurm_job" 2>/dev/null || true
    for pidfile in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munged.pid"; do
        [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
    done
    [ -n "${daemon:-}" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
    sleep 0.5
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "slurm_test: $*" >&2
    for log in slurmctld.log slurmd.log fulcrumd.log; do
        [ -f "$work/$log" ] && { echo "--- $log" >&2; tail -n 20 "$work/$log" >&2; }
    done
    ls "$work"/fulcrum-workers-*.out >/dev/null 2>&1 && { echo "--- sbatch output" >&2; cat "$work"/fulcrum-workers-*.out >&2; }
    exit 1
}
free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 30000))
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
    done
}

# munge, with its own key and socket.
dd if=/dev/urandom of="$work/munge.key" bs=128 count=1 status=none
chmod 0400 "$work/munge.key"
munged --force --socket="$work/munge.socket" --key-file="$work/munge.key" --log-file="$work/munged.log" \
    --pid-file="$work/munged.pid" --seed-file="$work/munged.seed" || fail "munged did not start"

# A one-node cluster on loopback.
mkdir -p "$work/state" "$work/spool"
host=$(hostname -s)
cat >"$work/slurm.conf" <<CONF
ClusterName=fulcrumtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$work/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=fulcrumnode NodeHostname=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=fulcrum Nodes=fulcrumnode Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF="$work/slurm.conf"
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N fulcrumnode || fail "slurmd did not start"
for _ in $(seq 100); do
    sinfo -h -o %t 2>/dev/null | grep -q idle && break
    sleep 0.2
done
sinfo -h -o %t | grep -q idle || fail "the Slurm node never became idle: $(sinfo 2>&1)"
echo "slurm_test: one-node Slurm up ($(sinfo -h -o '%P %D %t'))"

# A real-mode job of one local worker and two remote slots.
cat >"$work/job.json" <<'JOB'
{"name": "slurm-workers", "seed": 4, "mode": "real",
 "data": {"source": "synthetic", "train_size": 2000, "test_size": 200, "dim": 20, "classes": 4},
 "model": {"type": "mlp", "hidden": [32]},
 "training": {"total_batch": 96, "learning_rate": 0.1, "iterations": 300, "eval_interval": 100},
 "policy": {"type": "uniform"},
 "workers": [{"name": "local", "speed": 1000}, {"name": "slurm", "count": 2, "speed": 1000, "remote": true}]}
JOB
"$build/app/fulcrumd" --data-dir "$work/data" --listen 127.0.0.1:0 --no-demo --scenario "$work/job.json" \
    2>"$work/fulcrumd.log" &
daemon=$!
port=$(announced_port "$work/fulcrumd.log")
[ -n "$port" ] || fail "fulcrumd did not start"
awk '$1 == "worker" { print $NF; exit }' "$work/data/tokens" >"$work/worker-token"

slurm_job=$(sbatch --parsable --nodes=1 --ntasks-per-node=2 --chdir="$work" \
    --export="ALL,FULCRUM_SERVER=127.0.0.1:$port,FULCRUM_JOB=1,FULCRUM_TOKEN_FILE=$work/worker-token,FULCRUM_WORKER=$build/app/fulcrum-worker" \
    "$source_dir/packaging/slurm/fulcrum-workers.sbatch") || fail "sbatch refused the script"
echo "slurm_test: submitted Slurm job $slurm_job"
state=""
for _ in $(seq 300); do
    state=$(scontrol show job "$slurm_job" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 || true)
    case "$state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
    sleep 0.5
done
[ "$state" = COMPLETED ] || fail "the Slurm job ended $state"

ctl=("$build/app/fulcrumctl" --server "ws://127.0.0.1:$port" --token-file "$work/data/tokens")
"${ctl[@]}" jobs | grep -q "slurm-workers .*finished" || fail "the fulcrumd job did not finish: $("${ctl[@]}" jobs)"
out="$work/fulcrum-workers-$slurm_job.out"
[ "$(grep -c 'joined job: job=1 ' "$out")" = 2 ] || fail "not both workers joined"
[ "$(grep -c 'the job finished' "$out")" = 2 ] || fail "not both workers saw the job finish"
"${ctl[@]}" export "$work/data/runs/job-1.db" --csv "$work/csv" >/dev/null || fail "export failed"
workers=$(tail -n +2 "$work/csv/run-1-iterations.csv" | cut -d, -f2 | sort -u | tr '\n' ' ')
[ "$workers" = "0 1 2 " ] || fail "the run store has rows of workers '$workers', expected 0 1 2"
# The run store itself says which slot each Slurm task's process took (worker-joined).
joined=$(awk -F, '$4 == "worker-joined" { print $5 }' "$work/csv/run-1-events.csv" | sort | tr '\n' ' ')
[ "$joined" = "1 2 " ] || fail "the run store's worker-joined events name slots '$joined', expected 1 2"
echo "slurm_test: both Slurm tasks joined job 1 as its remote workers; it trained 300 iterations with them and finished"
