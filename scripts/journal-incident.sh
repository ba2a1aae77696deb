#!/usr/bin/env bash
# Plays the incident that docs/operations.md follows in journalctl: fulcrumd and two
# fulcrum-worker processes writing to systemd's journal, a job on the two workers, one
# worker killed (lost after the worker timeout), an operator's commands, and a flood of bad
# tokens from another address (127.0.0.2) that fulcrumd limits. Then prints the journal.
#
#   bash scripts/journal-incident.sh [BUILD_DIR]      (default build/ci; run as root)
#
# Needs a running systemd-journald (any systemd host; in a container without systemd,
# /lib/systemd/systemd-journald started by hand will do) and curl. systemd-cat connects each
# program to the journal as a unit's ExecStart would; a unit also sets JOURNAL_STREAM, which
# systemd-cat does not, so the script sets it the same way (the stream's device:inode).
set -euo pipefail
build=${1:-build/ci}
bin=$(cd "$build/app" && pwd)
work=$(mktemp -d)
port=7491
trap 'pkill -KILL -f -- "$work/data" 2> /dev/null || true; rm -rf "$work"' EXIT

journaled() { # TAG PROGRAM ARGS...: the program's stderr and stdout to the journal as TAG
    local tag=$1
    shift
    systemd-cat -t "$tag" sh -c 'JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$@"' sh "$@"
}

cat > "$work/two-hosts.json" <<'JSON'
{"name": "two-hosts", "mode": "real", "seed": 3,
 "data": {"source": "synthetic", "train_size": 3000, "test_size": 300, "dim": 20, "classes": 4},
 "model": {"type": "mlp", "hidden": [32]},
 "training": {"total_batch": 96, "learning_rate": 0.1, "iterations": 1000000},
 "policy": {"type": "uniform"},
 "workers": [{"name": "local", "speed": 1000},
             {"name": "remote", "count": 2, "speed": 1000, "remote": true}]}
JSON
mkdir -p "$work/data"
"$bin/fulcrumd" --data-dir "$work/data" --add-token operator alice > /dev/null 2>&1
"$bin/fulcrumd" --data-dir "$work/data" --add-token worker rack-7 > /dev/null 2>&1
since=$(date -u +'%Y-%m-%d %H:%M:%S')
journaled fulcrumd "$bin/fulcrumd" --data-dir "$work/data" --listen "127.0.0.1:$port" --no-demo --worker-timeout 3 &
for _ in $(seq 100); do
    journalctl -t fulcrumd --since "$since" -o cat --no-pager | grep -q "serving ws://" && break
    sleep 0.1
done
ctl() { "$bin/fulcrumctl" --server "127.0.0.1:$port" --token-file "$work/data/tokens" "$@"; }
FULCRUM_TOKEN=$(awk '$1 == "operator" && $2 == "alice" {print $3}' "$work/data/tokens") ctl submit "$work/two-hosts.json"
for host in host-a host-b; do
    journaled fulcrum-worker "$bin/fulcrum-worker" --server "127.0.0.1:$port" --job 1 \
        --token-file "$work/data/tokens" --name "$host" &
done
await() { # PATTERN: until fulcrumd's journal has it (60 s at most)
    for _ in $(seq 600); do
        journalctl -t fulcrumd --since "$since" -o cat --no-pager | grep -q -- "$1" && return 0
        sleep 0.1
    done
    echo "journal-incident: fulcrumd never logged '$1'" >&2
    exit 1
}
await "host-a joined"
await "host-b joined"
sleep 1
pkill -KILL -f -- "--name host-b" # host-b dies
await "kind=worker-lost"
export FULCRUM_TOKEN=$(awk '$1 == "operator" && $2 == "alice" {print $3}' "$work/data/tokens")
lost=$(journalctl -t fulcrumd --since "$since" -o cat --no-pager | sed -n 's/.*kind=worker-lost .*worker=\([0-9]*\).*/\1/p' | head -1)
ctl exclude 1 "$lost" || true # refused: fulcrumd excluded the lost worker already
ctl pin 1 0 48
for i in $(seq 25); do # someone guesses tokens from another address
    curl -s -o /dev/null --interface 127.0.0.2 -H "Upgrade: websocket" -H "Connection: Upgrade" \
        -H "Sec-WebSocket-Version: 13" -H "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==" \
        -H "Authorization: Bearer guess-$i" "http://127.0.0.1:$port/" || true
done
ctl cancel 1
sleep 1
pkill -TERM -f -- "--listen 127.0.0.1:$port" || true
sleep 2
echo "\$ journalctl -t fulcrumd -t fulcrum-worker -o short-iso"
journalctl -t fulcrumd -t fulcrum-worker --since "$since" -o short-iso --no-pager
echo
echo "\$ journalctl -t fulcrumd -p warning -o short-iso"
journalctl -t fulcrumd -p warning --since "$since" -o short-iso --no-pager
