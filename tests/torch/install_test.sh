#!/usr/bin/env bash
# fulcrum_torch installs as a user installs it: the wheel the build made, and the package
# straight from the repository, each with pip into a venv of its own (made with
# --system-site-packages, where Debian's python3-torch and python3-websockets are), offline;
# each venv then imports its own copy. Needs python3-venv, python3-pip, setuptools and
# wheel (scripts/install-deps.sh); without them the test is skipped (exit 77).
#   tests/torch/install_test.sh SOURCE_DIR WHEEL
set -euo pipefail
source_dir=$(cd "$1" && pwd)
wheel=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "install_test: $*" >&2; exit 1; }

/usr/bin/python3 -c 'import setuptools, wheel, pip, venv, torch, websockets' 2>/dev/null \
    || { echo "install_test: python3-venv, -pip, -setuptools, -wheel, -torch or -websockets missing"; exit 77; }
[ -f "$wheel" ] || fail "the build made no wheel at $wheel"

imports_its_own() { # VENV: its python imports fulcrum_torch from the venv, not from elsewhere
    "$1/bin/python" - "$1" <<'PY' || fail "$1 does not import its own fulcrum_torch"
import os, sys
import fulcrum_torch
where = os.path.realpath(fulcrum_torch.__file__)
assert where.startswith(os.path.realpath(sys.argv[1]) + os.sep), where
assert callable(fulcrum_torch.external_scenario)
print("install_test: imported", where)
PY
}

/usr/bin/python3 -m venv --system-site-packages "$work/from-wheel"
"$work/from-wheel/bin/pip" install --quiet --no-deps --no-index "$wheel" || fail "pip install $wheel"
imports_its_own "$work/from-wheel"

# From the repository: a copy, so setuptools' build folders stay out of the checkout.
cp -r "$source_dir/clients/python" "$work/repository"
/usr/bin/python3 -m venv --system-site-packages "$work/from-repository"
"$work/from-repository/bin/pip" install --quiet --no-deps --no-index --no-build-isolation "$work/repository" \
    || fail "pip install clients/python"
imports_its_own "$work/from-repository"
