#!/usr/bin/env bash
# The GPU image's daemon searching on a GPU machine without a container
# runtime (deploy/container/README.md, "On a GPU machine without a container
# runtime"). What the image runs is its /opt/tunedb (the bundle its build
# stage made with the cuDNN finder) with its /etc/tunedb/tunedbd.conf; here
# that folder, copied out of the image, runs under its own run path with the
# cuDNN that PyTorch's wheel carries mounted in as the DaemonSet mounts the
# host's (--cudnn-lib-dir), and the socket and database the image's volumes
# would hold in a temporary folder. The image's Debian base is not carried
# (only /opt/tunedb and the configuration are the image's own).
#
#   scripts/image_on_gpu.sh IMAGE_TUNEDB_TAR_XZ     # opt-tunedb.tar.xz
#
# Environment: PY (default /opt/torch/.venv/bin/python), OUT (default
# ./out). Fails (non-zero) unless the daemon starts on the GPU, searches a
# model's convolutions with the cuDNN finder and stores them.
set -euo pipefail
TARBALL=$1
PY=${PY:-/opt/torch/.venv/bin/python}
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/image_on_gpu.log") 2>&1
ROOT=$(mktemp -d)
tar -C "$ROOT" -xJf "$TARBALL"
B="$ROOT/opt/tunedb"
CUDNN=$("$PY" -c 'import nvidia.cudnn, os; print(os.path.join(nvidia.cudnn.__path__[0], "lib"))')
echo "=== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
echo "=== image bundle: $(du -sh "$B" | cut -f1); cuDNN from $CUDNN"
T=$(mktemp -d)
# The image's configuration, with its volume paths under $T and the health
# and metrics ports off (a shared machine).
sed -e "s#/run/tunedb/#$T/#; s#/var/lib/tunedb/#$T/#" \
    -e '/health-listen/d; /metrics-address/d' \
    "$ROOT/etc/tunedb/tunedbd.conf" > "$T/tunedbd.conf"
cat "$T/tunedbd.conf"
"$B/bin/tunedbd" --config "$T/tunedbd.conf" --cudnn-lib-dir "$CUDNN" \
    > "$OUT/tunedbd.log" 2>&1 &
DAEMON=$!
trap 'kill $DAEMON 2>/dev/null; wait $DAEMON 2>/dev/null' EXIT
A="unix:$T/tunedb.sock"
for _ in $(seq 100); do
  "$B/bin/tunedb" --address "$A" devices > "$OUT/devices.txt" 2>/dev/null && break
  sleep 0.2
done
cat "$OUT/devices.txt"
time "$B/bin/tunedb" --address "$A" prewarm -m resnet18 --batch 32 \
    --dtype fp16 --layout nhwc --no-progress
"$B/bin/tunedb" --address "$A" stats
"$B/bin/tunedb" --address "$A" query --csv > "$OUT/records.csv"
"$B/bin/tunedb" --address "$A" export > "$OUT/records.jsonl"
n=$(grep -c '"finder": *"cudnn' "$OUT/records.jsonl" || true)
echo "records searched by the cuDNN finder: $n"
head -3 "$OUT/records.csv"
[[ "$n" -gt 0 ]]
