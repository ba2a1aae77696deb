#!/usr/bin/env bash
# Makes the GPU kit (issue 46): what scripts/gpu-check.sh runs on a borrowed GPU machine,
# which has nvcc, PyTorch and the NVIDIA driver but no Debian packages and no network, and
# takes at most 64 MiB of files (the working tree included).
#   scripts/gpu-kit.sh [--from BUILD_DIR] [--out KIT_DIR]     (default: gpu-kit)
# Without --from it builds only what the check runs (fulcrum-run, fulcrumd, fulcrum-worker,
# fulcrum-experiment, bench/gpu_step and the two GPU test programs) in the gpu-portable preset (Boost, SQLite,
# zlib, OpenSSL and libstdc++ linked statically). It strips them and packs them into
# KIT/programs.tar.xz (gpu-check.sh unpacks them), with Fashion-MNIST (whole where it
# fits, else the largest training subset that does) and the websockets package the Python
# client needs, which the GPU machines lack. The scenarios, the Python client and the
# scripts travel with the working tree. The kit must stay under 48 MiB: the script prints
# its size and fails above that.
set -euo pipefail
cd "$(dirname "$0")/.."
from=""
kit=gpu-kit
while [ $# -gt 0 ]; do
    case "$1" in
        --from) from="$2"; shift 2 ;;
        --out) kit="$2"; shift 2 ;;
        -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu-kit: unknown argument $1 (expected --from BUILD_DIR or --out KIT_DIR)" >&2; exit 2 ;;
    esac
done
limit_bytes=$((48 << 20))
programs=(app/fulcrum-run app/fulcrumd app/fulcrum-worker app/fulcrum-experiment bench/gpu_step tests/dense_pass_test
    tests/cuda_step_test)

if [ -z "$from" ]; then
    from=build/gpu-portable
    export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=1
    [ -f "$from/CMakeCache.txt" ] || cmake --preset gpu-portable > /dev/null
    targets=()
    for p in "${programs[@]}"; do targets+=(--target "$(basename "$p")"); done
    cmake --build "$from" -j "${FULCRUM_JOBS:-$(nproc)}" "${targets[@]}"
fi
for p in "${programs[@]}"; do
    [ -x "$from/$p" ] || { echo "gpu-kit: $from/$p is not built" >&2; exit 1; }
done
# The GPU machines have the C library, the driver and CUDA, and nothing of Debian's: a
# program built against another shared library (a Debian package's) would not start there.
foreign=$(for p in "${programs[@]}"; do ldd "$from/$p" 2> /dev/null; done | awk '$2 == "=>" {print $1}' \
    | grep -Ev '^(linux-vdso|ld-linux|libc|libm|libgcc_s|libpthread|libdl|librt|libcuda|libnvidia|libcublas|libcudart)\.so' \
    | sort -u | tr '\n' ' ' || true)
if [ -n "$foreign" ]; then
    if [ "$from" = build/gpu-portable ]; then
        echo "gpu-kit: the programs need libraries the GPU machines lack: $foreign" >&2
        exit 1
    fi
    echo "gpu-kit: note: built from $from, the programs need $foreign (the gpu-portable preset links them in)"
fi

rm -rf "$kit"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for p in "${programs[@]}"; do
    mkdir -p "$stage/$(dirname "$p")"
    strip -o "$stage/$p" "$from/$p"
done
mkdir -p "$kit"
tar -cf - -C "$stage" app bench tests | xz -T0 -6 > "$kit/programs.tar.xz"

# websockets for the Python client, from this machine's python3 (Debian's python3-websockets:
# pure Python, whose optional C speed-ups are left out, so any Python 3 takes it).
websockets=$(/usr/bin/python3 -c 'import os, websockets; print(os.path.dirname(websockets.__file__))' 2> /dev/null || true)
if [ -n "$websockets" ]; then
    mkdir -p "$kit/python"
    cp -r "$websockets" "$kit/python/websockets"
    find "$kit/python" \( -name '__pycache__' -o -name '*.so' \) -prune -exec rm -rf {} +
else
    echo "gpu-kit: no websockets for python3 here (apt install python3-websockets): the torch step will be skipped" >&2
fi

# Fashion-MNIST for the PyTorch example: whole where it fits under the limit.
source_data=/usr/share/datasets/fashion-mnist
if [ -f "$source_data/train-images-idx3-ubyte.gz" ]; then
    mkdir -p "$kit/data/fashion-mnist"
    room=$((limit_bytes - $(du -sb "$kit" | cut -f1) - (1 << 20)))
    /usr/bin/python3 - "$source_data" "$kit/data/fashion-mnist" "$room" << 'PY'
import gzip, os, shutil, struct, sys
source, target, room = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted(os.listdir(source))
whole = sum(os.path.getsize(os.path.join(source, f)) for f in files)
if whole <= room:
    for f in files:
        shutil.copy(os.path.join(source, f), target)
    print(f"gpu-kit: Fashion-MNIST whole ({whole / 2**20:.1f} MiB)")
    raise SystemExit
# The training set's first N images and labels, N what the room left holds.
for f in files:
    if not f.startswith("train-"):
        shutil.copy(os.path.join(source, f), target)
left = room - sum(os.path.getsize(os.path.join(target, f)) for f in os.listdir(target))
images = os.path.getsize(os.path.join(source, "train-images-idx3-ubyte.gz"))
keep = max(1000, int(60000 * left / images * 0.95))
for name, header in (("train-images-idx3-ubyte.gz", 16), ("train-labels-idx1-ubyte.gz", 8)):
    raw = gzip.open(os.path.join(source, name)).read()
    fields = list(struct.unpack(">" + "I" * (header // 4), raw[:header]))
    item = (len(raw) - header) // fields[1]
    fields[1] = keep
    with gzip.open(os.path.join(target, name), "wb") as out:
        out.write(struct.pack(">" + "I" * (header // 4), *fields) + raw[header:header + keep * item])
print(f"gpu-kit: Fashion-MNIST with the first {keep} of 60000 training images (the whole set does not fit)")
PY
else
    echo "gpu-kit: no Fashion-MNIST in $source_data (apt install the data set): the torch step will be skipped" >&2
fi

bytes_of() { du -sb "$1" 2> /dev/null | cut -f1 || echo 0; }
mib() { awk -v b="${1:-0}" 'BEGIN { printf "%.1f", b / 1048576 }'; }
size=$(bytes_of "$kit")
echo "gpu-kit: $kit holds $(mib "$size") MiB (limit 48 MiB): programs.tar.xz $(mib "$(bytes_of "$kit/programs.tar.xz")") MiB," \
    "data $(mib "$(bytes_of "$kit/data")") MiB, python $(mib "$(bytes_of "$kit/python")") MiB"
if [ "$size" -gt "$limit_bytes" ]; then
    echo "gpu-kit: the kit is over its 48 MiB limit" >&2
    exit 1
fi
