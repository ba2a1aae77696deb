#!/usr/bin/env bash
# The Debian package as an operator gets it: built from a configured build tree with cpack,
# checked with lintian (no error, no warning), its licence (Apache-2.0) and systemd-analyze
# (units verify, exposure below 3.0), installed with dpkg, every installed program's
# --version run, the installed fulcrumd started as the package's user with the packaged
# configuration and driven with the installed fulcrumctl, then purged. Installing needs root: as another user the test
# stops after the checks of the package file (exit 77, ctest's skip).
#   tests/packaging/package_test.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/../support/announced_port.sh"
build=$(cd "$1" && pwd)
work=$(mktemp -d)
installed_here=0
cleanup() {
    [ -n "${daemon:-}" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
    [ "$installed_here" = 1 ] && dpkg --purge fulcrum >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "package_test: $*" >&2; exit 1; }

for tool in cpack lintian dpkg-deb; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps.sh --test-tools installs it)"
done

(cd "$build" && cpack -G DEB -B "$work" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$work"/fulcrum_*.deb)
echo "package_test: built $(basename "$deb") ($(du -h "$deb" | cut -f1))"
lintian --fail-on error,warning "$deb" || fail "lintian finds errors or warnings in $(basename "$deb")"
echo "package_test: lintian clean"
contents=$(dpkg-deb -c "$deb")
for path in usr/bin/fulcrumd usr/bin/fulcrum-worker usr/bin/fulcrumctl usr/bin/fulcrum-run usr/bin/fulcrum-sim \
    usr/bin/fulcrum-experiment lib/systemd/system/fulcrumd.service "lib/systemd/system/fulcrum-worker@.service" \
    lib/systemd/system/fulcrum-worker-pool.service \
    etc/fulcrum/fulcrumd.json usr/share/man/man1/fulcrumd.1.gz usr/share/fulcrum/grafana/fulcrum-dashboard.json \
    usr/share/fulcrum/slurm/fulcrum-workers.sbatch usr/lib/python3/dist-packages/fulcrum_torch/__init__.py \
    usr/lib/python3/dist-packages/fulcrum_torch/steps.py; do
    grep -q " \./$path\$" <<<"$contents" || fail "the package lacks /$path"
done
grep -Eq " \./usr/share/fulcrum/python/fulcrum_torch-[0-9.]+-py3-none-any\.whl\$" <<<"$contents" \
    || fail "the package lacks the fulcrum_torch wheel in /usr/share/fulcrum/python"
dpkg-deb -I "$deb" conffiles | grep -qx /etc/fulcrum/fulcrumd.json || fail "/etc/fulcrum/fulcrumd.json is not a conffile"
# The licence an operator reads in the package: Apache-2.0, and the full text where Debian keeps it.
copyright=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/fulcrum/copyright)
grep -qx "License: Apache-2.0" <<<"$copyright" || fail "the package's copyright file does not grant Apache-2.0"
grep -q "/usr/share/common-licenses/Apache-2.0" <<<"$copyright" || fail "the copyright file does not point at the licence text"
! grep -qi "all rights reserved" <<<"$copyright" || fail "the copyright file still reserves all rights"

if [ "$(id -u)" -ne 0 ]; then
    echo "package_test: installing the package needs root; the package file's checks passed"
    exit 77
fi
if dpkg-query -W -f='${Status}' fulcrum 2>/dev/null | grep -q "install ok installed"; then
    echo "package_test: a fulcrum package is installed already; not replacing it"
    exit 77
fi
command -v systemd-analyze >/dev/null || fail "systemd-analyze is not installed (package systemd)"
dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i failed"; }
installed_here=1
getent passwd fulcrum >/dev/null || fail "the package did not create the fulcrum user"
systemd-analyze verify /lib/systemd/system/fulcrumd.service "fulcrum-worker@3.service" \
    /lib/systemd/system/fulcrum-worker-pool.service || fail "the units do not verify"
for unit in fulcrumd.service fulcrum-worker@3.service fulcrum-worker-pool.service; do
    systemd-analyze security --offline=true --threshold=30 "$unit" >/dev/null \
        || fail "$unit is exposed above 3.0 (systemd-analyze security --offline=true $unit)"
done
for program in fulcrumd fulcrum-worker fulcrumctl fulcrum-run fulcrum-sim fulcrum-experiment; do
    "/usr/bin/$program" --version | grep -q "^$program " || fail "/usr/bin/$program --version"
done
if [ -x /usr/bin/fulcrum ]; then
    QT_QPA_PLATFORM=offscreen /usr/bin/fulcrum --version | grep -q "^fulcrum " || fail "/usr/bin/fulcrum --version"
fi
# fulcrum_torch: the system's python3 imports the packaged module, where torch is installed.
if /usr/bin/python3 -c 'import torch, websockets' 2>/dev/null; then
    where=$(cd / && /usr/bin/python3 -c 'import fulcrum_torch; print(fulcrum_torch.__file__)') \
        || fail "python3 cannot import the packaged fulcrum_torch"
    [ "$where" = /usr/lib/python3/dist-packages/fulcrum_torch/__init__.py ] \
        || fail "python3 imports fulcrum_torch from $where, not the package's"
fi
echo "package_test: installed; units verify; every program answers --version; python3 imports fulcrum_torch"

# The service's command, as the service's user, with its configuration (the port moved to a
# free one so the test never meets a real fulcrumd).
state="$work/state"
chmod 0711 "$work" # the service user reaches its state folder inside
install -d -o fulcrum -g fulcrum -m 0750 "$state"
setpriv --reuid=fulcrum --regid=fulcrum --init-groups --no-new-privs \
    /usr/bin/fulcrumd --config /etc/fulcrum/fulcrumd.json --data-dir "$state" --listen 127.0.0.1:0 \
    2>"$work/fulcrumd.log" &
daemon=$!
port=$(announced_port "$work/fulcrumd.log")
[ -n "$port" ] || { cat "$work/fulcrumd.log"; fail "the installed fulcrumd did not start"; }
ctl=(/usr/bin/fulcrumctl --server "ws://127.0.0.1:$port" --token-file "$state/tokens")
job=$("${ctl[@]}" submit /usr/share/fulcrum/scenarios/homogeneous.json) || fail "fulcrumctl submit"
[ "$job" = "submitted as job 1" ] || fail "fulcrumctl submit said '$job'"
for _ in $(seq 300); do
    "${ctl[@]}" jobs | grep -q finished && break
    sleep 0.2
done
"${ctl[@]}" jobs | grep -q finished || fail "the job did not finish: $("${ctl[@]}" jobs)"
[ "$(stat -c %U "$state/runs/job-1.db")" = fulcrum ] || fail "the run store is not the fulcrum user's"
echo "package_test: the installed fulcrumd ran a job as user fulcrum, driven by the installed fulcrumctl"

# Purged, the package leaves no fulcrum_torch behind (its byte code included: prerm's py3clean).
kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
daemon=""
dpkg --purge fulcrum >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "dpkg --purge failed"; }
installed_here=0
if grep -q "not empty" "$work/purge.log" || [ -e /usr/lib/python3/dist-packages/fulcrum_torch ]; then
    cat "$work/purge.log"
    fail "purging left /usr/lib/python3/dist-packages/fulcrum_torch behind"
fi
echo "package_test: purged, nothing of fulcrum_torch left"
